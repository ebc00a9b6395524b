"""The record browser (core.store.records through core.services.browser): each filter, search, sorting and
paging done by the database, the item view with its grades, reviews, flags and audit events, the export
of the filtered set, and who may browse. On SQLite, and on PostgreSQL when the test server runs."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pandas as pd
import pytest

from core.services import account_writes, audit, auth, browser, grade_actions
from core.services.browser import RecordFilter
from core.store import Store, accounts
from core.store import reviews as review_rows
from tests.pg_schema import throwaway_schema_url

PASSWORD = "correct horse battery"
N = 12


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path) -> Iterator[Store]:
    if request.param == "sqlite":
        yield Store.open(f"sqlite:///{tmp_path / 'b.db'}")
        return
    with throwaway_schema_url() as url:
        opened = Store.open(url)
        yield opened
        opened.engine.dispose()


@pytest.fixture
def world(store):
    """12 items in 3 strata; grades: 0 by ann (Correct, commented), 1 by ann and bob (disagree, reviewed),
    2 by bob (Incorrect); 3 skipped by ann; 4 flagged by bob; item 5's response says 100% (a LIKE wildcard)."""
    pid = store.create_project("B", {}, {"pool": ("pool.jsonl", b"{}\n")})
    items = pd.DataFrame(
        {
            "id": [f"q{i:02d}" for i in range(N)],
            "stratum": [i % 3 for i in range(N)],
            "prompt": [f"What is {i} + {i}?" for i in range(N)],
            "response": [("100% sure: " if i == 5 else "It is ") + str(2 * i) for i in range(N)],
        }
    )
    store.save_items(pid, items)
    store.add_grade(pid, 0, value=1.0, label="Correct", grader="ann", comment="easy")
    store.add_grade(pid, 1, value=1.0, label="Correct", grader="ann")
    store.add_grade(pid, 1, value=0.0, label="Incorrect", grader="bob")
    store.add_grade(pid, 2, value=0.0, label="Incorrect", grader="bob")
    store.add_skip(pid, 3, "ann")
    review_rows.add_flag(store, pid, 4, "bob", "odd prompt")
    review_rows.add_review(store, pid, 1, value=0.0, label="Incorrect", reviewer="rita")
    viewer = account_writes.create_account(store, "val", auth.VIEWER, password=PASSWORD)
    accounts.assign(store, pid, viewer.id)
    return store, pid, viewer


def positions(store, actor, pid, **filters) -> list[int]:
    return browser.page(store, actor, pid, RecordFilter(**filters), size=100).rows["position"].tolist()


def test_each_filter_selects_its_items(world):
    store, pid, val = world
    assert positions(store, val, pid) == list(range(N))
    assert positions(store, val, pid, stratum=1) == [1, 4, 7, 10]
    assert positions(store, val, pid, graded=True) == [0, 1, 2]
    assert positions(store, val, pid, graded=False) == list(range(3, N))
    assert positions(store, val, pid, label="Incorrect") == [1, 2]
    assert positions(store, val, pid, grader="ann") == [0, 1]
    assert positions(store, val, pid, commented=True) == [0]
    assert positions(store, val, pid, skipped=True) == [3]
    assert positions(store, val, pid, flagged=True) == [4]
    assert positions(store, val, pid, disagreement=True) == [1]
    assert positions(store, val, pid, reviewed=True) == [1]
    assert positions(store, val, pid, reviewed=False, graded=True) == [0, 2]
    assert positions(store, val, pid, criterion="") == list(range(N))
    assert positions(store, val, pid, criterion="safety", graded=True) == []  # no grade of that criterion


def test_search_is_literal_and_case_insensitive(world):
    store, pid, val = world
    assert positions(store, val, pid, search="what is 11") == [11]
    assert positions(store, val, pid, search="100%") == [5]
    assert positions(store, val, pid, search="%") == [5]  # a percent sign is a character, not a wildcard
    assert positions(store, val, pid, search="It is 2") == [1, 10, 11]


def test_sorting_and_paging_happen_in_the_query(world):
    store, pid, val = world
    first = browser.page(store, val, pid, RecordFilter(), sort="item", descending=True, number=1, size=5)
    assert first.total == N and first.rows["item"].tolist() == ["q11", "q10", "q09", "q08", "q07"]
    third = browser.page(store, val, pid, RecordFilter(), sort="item", descending=True, number=3, size=5)
    assert third.rows["item"].tolist() == ["q01", "q00"]
    by_grade = browser.page(store, val, pid, RecordFilter(graded=True), sort="grade", descending=True).rows
    assert by_grade["position"].tolist() == [0, 1, 2]  # means 1, 0.5, 0
    row = by_grade.iloc[1]
    assert (row["grades"], row["final"], row["graders"]) == (2, "Incorrect", "ann: Correct, bob: Incorrect")
    with pytest.raises(grade_actions.Refused, match="sort by"):
        browser.page(store, val, pid, RecordFilter(), sort="prompt")


def test_the_item_view_has_every_grade_review_flag_and_event(world):
    store, pid, val = world
    store.add_grade(pid, 1, value=0.0, label="Incorrect", grader="ann")  # ann changes her grade
    record = browser.record(store, val, pid, 1)
    assert (
        record.grades["grader"].tolist() == ["ann", "bob", "ann"] and record.grades["retracted_at"].notna().sum() == 1
    )
    assert record.reviews["reviewer"].tolist() == ["rita"]
    assert set(record.events["action"]) == {audit.REVIEWED, audit.GRADE_CHANGED}
    assert browser.record(store, val, pid, 4).flags["note"].tolist() == ["odd prompt"]


def test_the_export_holds_the_filtered_set_with_its_texts_and_is_audited(world):
    store, pid, val = world
    table = pd.read_csv(io.BytesIO(browser.export_csv(store, val, pid, RecordFilter(graded=False, search="sure"))))
    assert table["position"].tolist() == [5]
    assert table.loc[0, "response"] == "100% sure: 10" and table.loc[0, "prompt"] == "What is 5 + 5?"
    event = audit.trail(store, pid).iloc[-1]
    assert event["action"] == audit.EXPORTED and event["detail"]["filters"] == {"graded": False, "search": "sure"}


def test_graders_may_not_browse(world):
    store, pid, _ = world
    grader = account_writes.create_account(store, "gus", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)
    with pytest.raises(grade_actions.Refused, match="may not browse"):
        browser.page(store, grader, pid, RecordFilter())
    with pytest.raises(grade_actions.Refused, match="may not browse"):
        browser.export_csv(store, grader, pid, RecordFilter())
