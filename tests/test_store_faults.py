"""A grade the database cannot take is reported as not saved, and nothing saved before is lost."""

from __future__ import annotations

import pytest
from sqlalchemy import event, text

from core.errors import InputError, NotSaved
from core.scales import BINARY
from core.services import reservations
from core.store import Store


@pytest.fixture
def store(tmp_path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'faults.db'}")
    yield s
    s.engine.dispose()


def _project(store: Store) -> int:
    pid = store.create_project("p", {}, {"pool": ("pool.jsonl", b"{}\n")})
    return pid


def _disk_full(store: Store) -> None:
    """Every connection from now on may not grow the file by one page (SQLite's PRAGMA max_page_count)."""
    with store.engine.connect() as c:
        pages = c.execute(text("PRAGMA page_count")).scalar()

    @event.listens_for(store.engine, "connect")
    def _cap(dbapi_connection, _record) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count={pages}")

    store.engine.dispose()


def test_a_grade_on_a_full_disk_is_not_saved_and_loses_nothing(store):
    pid = _project(store)
    for position in range(5):
        reservations.submit(store, pid, position, BINARY, "Correct", "ann", comment="kept")
    before = store.grades(pid)
    _disk_full(store)
    with pytest.raises(NotSaved, match="not saved.*press again"):
        for position in range(5, 5_000):  # the next grades fill the last free pages, then one is refused
            reservations.submit(store, pid, position, BINARY, "Incorrect", "ann", comment="x" * 2_000)
    after = store.grades(pid)
    assert after.head(len(before)).equals(before)  # every grade saved before the disk filled is there
    assert set(store.graded_positions(pid)) == set(after["position"])  # and no half-written one


def test_a_grade_for_a_project_deleted_meanwhile_says_so(store):
    pid = _project(store)
    reservations.submit(store, pid, 0, BINARY, "Correct", "ann")
    store.delete_project(pid)
    with pytest.raises(InputError, match="has been deleted"):
        reservations.submit(store, pid, 1, BINARY, "Correct", "ann")


def test_an_over_long_grader_name_is_an_input_error(store):
    pid = _project(store)
    with pytest.raises(InputError, match="more than the 200 allowed"):
        reservations.submit(store, pid, 0, BINARY, "Correct", "g" * 201)
