"""core.store against SQLite, and PostgreSQL when $ACTIVEGRADE_TEST_PG_URL is set."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event

from core.errors import InputError
from core.settings import ProjectSettings
from core.store import Store, make_engine
from core.store.store import Undone
from tests.pg_schema import throwaway_schema_url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield Store.open(f"sqlite:///{tmp_path / 'store.db'}")
        return
    with throwaway_schema_url() as url:
        store = Store.open(url)
        yield store
        store.engine.dispose()


def _items(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(n)],
            "prompt": [f"prompt {i}" for i in range(n)],
            "response": [f"<b>resp</b> {i}" for i in range(n)],
            "semantic_entropy": np.linspace(0, 1, n),
            "agreement": [np.nan] + [0.5] * (n - 1),
            "stratum": np.arange(n) % 2,
        }
    )


def _project(store: Store, name: str = "p") -> int:
    return store.create_project(name, {"seed": 7}, {"pool": ("pool.jsonl", b'{"id": 1}\n')})


def test_project_roundtrip_and_duplicate_name(store):
    pid = _project(store)
    info = store.project(pid)
    assert (info.name, info.status, info.settings.seed) == ("p", "new", 7)
    assert isinstance(info.settings, ProjectSettings)  # read once from the stored JSON, typed for every reader
    assert info.settings == ProjectSettings(seed=7)  # every other setting at its default
    assert store.input_files(pid) == {"pool": ("pool.jsonl", b'{"id": 1}\n')}
    with pytest.raises(InputError, match=rf"a project named 'p' already exists \(id {pid}\)"):
        _project(store)  # the id: a retry after a lost answer finds what it made (an integrator's review)
    with pytest.raises(InputError, match="name is empty"):
        store.create_project("  ", {}, {})
    other = _project(store, "q")
    assert [p.id for p in store.projects()] == [other, pid]
    store.update_settings(pid, {"guidelines": "be fair"})
    assert store.project(pid).settings == ProjectSettings(seed=7, guidelines="be fair")
    with pytest.raises(InputError, match="setting overlap"):
        store.update_settings(pid, {"overlap": 2})


def test_items_roundtrip_keeps_order_types_and_nan(store):
    pid = _project(store)
    store.set_progress(pid, 3, 6, "clustering")
    assert (store.project(pid).progress_done, store.project(pid).progress_total) == (3, 6)
    before = store.project(pid)
    store.heartbeat(pid)
    after = store.project(pid)
    assert after.updated_at > before.updated_at  # the job is alive ...
    assert (after.progress_done, after.progress_total, after.progress_message) == (
        3,
        6,
        "clustering",
    )  # ... and said so
    store.save_items(pid, _items())
    ready = store.project(pid)
    n = len(_items())  # ready, and the progress says so, not the last stage reported ("clustering")
    assert (ready.status, ready.progress_done, ready.progress_total, ready.progress_message) == (
        "ready",
        n,
        n,
        "prepared",
    )
    loaded = store.load_items(pid)
    assert list(loaded["id"]) == [f"q{i}" for i in range(6)]
    assert list(loaded["stratum"]) == [0, 1, 0, 1, 0, 1]
    assert np.isnan(loaded.loc[0, "agreement"]) and loaded.loc[1, "agreement"] == 0.5
    assert store.item(pid, 2)["response"] == "<b>resp</b> 2"
    assert store.item_count(pid) == 6
    assert store.item_ids(pid, [4, 1, 9]) == {1: "q1", 4: "q4"} and store.item_ids(pid, []) == {}  # 9: no item
    store.save_items(pid, _items(3))  # re-preparing replaces, never duplicates
    assert store.item_count(pid) == 3


def test_items_written_in_chunks_come_back_whole_in_order(store, monkeypatch):
    from core.store import store as store_module

    pid = store.create_project("chunks", {}, {})
    monkeypatch.setattr(store_module, "SAVE_CHUNK", 4)
    store.save_items(pid, _items(6))
    chunked = store.load_items(pid)
    monkeypatch.setattr(store_module, "SAVE_CHUNK", 1000)
    store.save_items(pid, _items(6))
    pd.testing.assert_frame_equal(chunked, store.load_items(pid))
    assert list(chunked["id"]) == [f"q{i}" for i in range(6)] and store.item_count(pid) == 6


def test_items_with_awkward_text_and_floats_come_back_exactly(store):
    """save_items writes with COPY on PostgreSQL: tabs, newlines, backslashes, quotes and non-ASCII text,
    and floats at the ends of their range, read back the same."""
    items = _items(4).assign(
        prompt=["tab\there", "line\nbreak\r\n", 'back\\slash \\N "quoted"', "é ü \u2028 😀 \x01"],
        semantic_entropy=[0.1 + 0.2, 1e-300, -0.0, 1.7976931348623157e308],
    )
    pid = store.create_project("awkward", {}, {})
    store.save_items(pid, items)
    loaded = store.load_items(pid)
    assert list(loaded["prompt"]) == list(items["prompt"])
    assert loaded["semantic_entropy"].to_numpy().tobytes() == items["semantic_entropy"].to_numpy().tobytes()


def test_items_read_in_chunks_with_a_column_null_throughout_one_chunk(store, monkeypatch):
    """load_items reads SAVE_CHUNK rows at a time: a chunk where a column is all null (objects there, numbers
    in the next) still gives the column one frame read at once gives: float with NaN, ints widened."""
    from core.store import store as store_module

    items = _items(6).assign(
        agreement=[np.nan] * 3 + [0.5, 0.25, 1.0],
        n_clusters=[None] * 3 + [1, 2, 3],
        flag=[None, None, None, True, False, True],
    )
    pid = store.create_project("null chunk", {}, {})
    store.save_items(pid, items)
    whole = store.load_items(pid)
    monkeypatch.setattr(store_module, "SAVE_CHUNK", 3)
    chunked = store.load_items(pid)
    pd.testing.assert_frame_equal(chunked, whole)
    assert chunked["agreement"].dtype == float and np.isnan(chunked.loc[0, "agreement"])
    assert chunked["n_clusters"].dtype == float and chunked.loc[5, "n_clusters"] == 3.0


def test_grade_change_undo_and_skip(store):
    pid = _project(store)
    store.save_items(pid, _items())
    store.add_grade(pid, 0, value=1.0, label="correct", grader="ann")
    store.add_grade(pid, 1, value=0.0, label="incorrect", grader="ann", comment="wrong unit", seconds=4.5)
    store.add_grade(pid, 1, value=1.0, label="correct", grader="bob")
    assert store.graded_positions(pid) == {0: 1.0, 1: 0.5}
    # changing a grade supersedes the grader's earlier one
    store.add_grade(pid, 0, value=0.0, label="incorrect", grader="ann")
    assert store.graded_positions(pid)[0] == 0.0
    assert len(store.grades(pid)) == 3 and len(store.grades(pid, include_retracted=True)) == 4
    assert store.grader_positions(pid, "ann") == [1, 0]
    assert store.grade_of(pid, 1, "ann")["comment"] == "wrong unit"
    # undo retracts the grader's latest grade only; it had changed an earlier one, which stands again
    assert store.retract_last_grade(pid, "ann") == Undone(0, 1)
    assert store.graded_positions(pid) == {0: 1.0, 1: 0.5}
    assert store.grade_of(pid, 0, "ann")["label"] == "correct"
    assert store.grader_positions(pid, "ann") == [0, 1]  # the restored grade at its own time
    assert store.retract_last_grade(pid, "ann") == Undone(1, 0)  # one step further back: the grade before it
    assert store.graded_positions(pid) == {0: 1.0, 1: 1.0}
    assert store.retract_last_grade(pid, "carl") is None
    store.add_skip(pid, 3, "ann")
    store.add_skip(pid, 1, "ann")
    assert store.skipped_positions(pid) == {3}  # position 1 is graded
    store.delete_project(pid)
    assert store.projects() == [] and store.grades(pid).empty


def test_others_grade_where_someone_graded_here_who_skipped_none_of_the_items_standing_skipped(store):
    """core.services.reading's ``others``: the queue hands the items standing skipped to a grader who did not skip
    them, so the forecast need not reach the stop the skipper's fresh grades alone give."""
    pid = _project(store)
    store.save_items(pid, _items())
    assert not store.others_grade(pid)  # nothing skipped
    store.add_grade(pid, 0, value=1.0, label="correct", grader="ann")
    store.add_skip(pid, 3, "ann")
    assert not store.others_grade(pid)  # ann alone
    store.add_skip(pid, 3, "bob")
    store.add_grade(pid, 1, value=0.0, label="incorrect", grader="bob")
    assert not store.others_grade(pid)  # bob skipped it too
    store.add_grade(pid, 2, value=0.0, label="incorrect", grader="carl")
    assert store.others_grade(pid)
    store.add_grade(pid, 3, value=0.0, label="incorrect", grader="carl")
    assert not store.others_grade(pid)  # graded since: nothing stands skipped


def test_a_change_and_its_undo_keep_the_items_place_in_the_grading_order(store):
    """The grading order was the grades' ids: after the stop, changing an earlier grade (or changing it and
    undoing the change) moved the item past the stop, which then came a grade sooner and reported the estimate
    without it (a new user's review: 0.5219 where the grades export gives 0.5283)."""
    pid = _project(store)
    store.save_items(pid, _items())
    for position in (2, 0, 4, 1):
        store.add_grade(pid, position, value=1.0, label="correct", grader="ann")
    store.add_grade(pid, 0, value=1.0, label="correct", grader="bob")  # graded twice: its place is its first grade
    order = [2, 0, 4, 1]
    store.add_grade(pid, 0, value=0.0, label="incorrect", grader="ann")  # a change
    assert list(store.graded_positions(pid)) == order and store.graded_positions(pid)[0] == 0.5
    assert store.grades(pid)["position"].tolist() == [2, 0, 4, 1, 0]  # ann's change in her place, bob's in his
    store.add_grade(pid, 0, value=1.0, label="correct", grader="ann")  # changed again
    assert store.retract_last_grade(pid, "ann") == Undone(0, 1)  # and undone: the first change stands again
    assert list(store.graded_positions(pid)) == order and store.graded_positions(pid)[0] == 0.5
    assert store.retract_last_grade(pid, "ann") == Undone(0, 1)  # and that one: the first grade stands again
    assert list(store.graded_positions(pid)) == order and store.graded_positions(pid)[0] == 1.0
    store.add_grade(pid, 3, value=1.0, label="correct", grader="ann")  # a first grade comes last
    assert list(store.graded_positions(pid)) == [*order, 3]
    assert list(store.first_grades(pid)) == [*order, 3]


def test_grades_survive_reopening(tmp_path):
    url = f"sqlite:///{tmp_path / 'persist.db'}"
    first = Store.open(url)
    pid = _project(first)
    first.save_items(pid, _items())
    first.add_grade(pid, 4, value=0.75, label="4", grader="ann", seconds=2.0)
    first.engine.dispose()
    second = Store.open(url)
    grades = second.grades(pid)
    assert grades.loc[0, ["position", "value", "label", "grader"]].tolist() == [4, 0.75, "4", "ann"]


def test_sqlite_runs_in_wal_mode(tmp_path):
    path = tmp_path / "wal.db"
    Store.open(f"sqlite:///{path}")
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sqlite_connections_of_as_many_threads_as_the_api_runs_are_kept_open(tmp_path):
    """40 readers at once (anyio's worker threads) return their connections to the pool, and the next 40 reuse
    them: none is closed and opened again per request (the default pool kept 5)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'pool.db'}")
    opened = []
    event.listen(engine, "connect", lambda *_: opened.append(1))
    for _ in range(2):
        connections = [engine.connect() for _ in range(40)]
        for connection in connections:
            connection.close()
    assert len(opened) == 40


def test_concurrent_graders_lose_no_grade(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'c.db'}")
    pid = _project(store)
    store.save_items(pid, _items(40))

    def grade(grader: str, positions: range) -> None:
        for p in positions:
            store.add_grade(pid, p, value=1.0, label="correct", grader=grader)

    threads = [threading.Thread(target=grade, args=(g, range(k, 40, 4))) for k, g in enumerate("abcd")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(store.graded_positions(pid)) == list(range(40))


def test_bad_url_is_an_input_error():
    with pytest.raises(InputError, match="ACTIVEGRADE_DB_URL"):
        Store.open("not a url")


def test_preparation_claim_has_one_winner(store):
    from datetime import datetime, timedelta

    pid = _project(store)
    long_ago = datetime.now(UTC) - timedelta(minutes=5)
    assert store.claim_preparation(pid, stale_before=long_ago)
    assert not store.claim_preparation(pid, stale_before=long_ago)  # a live job holds it
    assert store.claim_preparation(pid, stale_before=datetime.now(UTC) + timedelta(seconds=1))  # stale
    store.save_items(pid, _items())
    assert not store.claim_preparation(pid, stale_before=datetime.now(UTC) + timedelta(seconds=1))  # ready
    store.set_status(pid, "failed", "boom")
    assert store.claim_preparation(pid, stale_before=long_ago)


def test_items_are_made_json_column_by_column_as_json_safe_makes_each_record():
    """save_items' fast path (core.store.store.json_rows) gives exactly what json_safe gives each record."""
    from core.store import json_safe
    from core.store.store import json_rows

    frame = pd.DataFrame(
        {
            "float": [1.5, np.nan, 1e308, -0.0],
            "int": np.array([1, 2, 3, -(2**62)], dtype=np.int64),
            "flag": [True, False, True, False],
            "text": pd.Series(["a", None, "tab\there", "é"], dtype="str"),
            "nested": [[1, np.float64(2.0)], {"k": np.nan}, None, (np.int64(4),)],
            "time": pd.to_datetime(["2024-01-01 00:00:00", None, "2024-01-02 00:00:00", "2024-01-03 04:05:06"]),
            "nullable": pd.array([1, None, 3, 4], dtype="Int64"),
            7: [0.1, 0.2, np.nan, 0.4],
        }
    )
    fast = json_rows(frame)
    assert fast == [json_safe(record) for record in frame.to_dict(orient="records")]
    assert [type(v) for v in fast[3].values()] == [float, int, bool, str, list, str, int, float]
    assert json_rows(frame.iloc[:, :0]) == [{}, {}, {}, {}]


def test_uploads_are_read_from_the_database_once_and_again_once_replaced(store):
    """A worker's Store keeps the uploads it read by their digest: each chunk of a preparation reads them, so
    only the first reads their bytes from the database; a replaced file (SQLite may give it the same row id)
    is read anew, and one larger than the Store keeps is read each time."""
    from sqlalchemy import event

    from core.store.input_files import set_input_files

    store = Store(store.engine, kept_file_bytes=10)  # a worker's
    reads: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: reads.append(args[2]))
    project_id = store.create_project("files", {}, {"pool": ("pool.jsonl", b"one"), "samples": ("s.jsonl", b"two")})

    def content_reads() -> int:
        return sum("input_files.content" in sql and "digest" not in sql for sql in reads)

    assert store.input_files(project_id) == {"pool": ("pool.jsonl", b"one"), "samples": ("s.jsonl", b"two")}
    assert content_reads() == 2
    assert store.input_files(project_id)["pool"] == ("pool.jsonl", b"one") and content_reads() == 2
    set_input_files(store, project_id, {"pool": ("pool.jsonl", b"three")})
    assert store.input_files(project_id) == {"pool": ("pool.jsonl", b"three"), "samples": ("s.jsonl", b"two")}
    assert content_reads() == 3
    set_input_files(store, project_id, {"samples": ("s.jsonl", b"eleven bytes")})
    store.input_files(project_id)
    assert store.input_files(project_id)["samples"] == ("s.jsonl", b"eleven bytes") and content_reads() == 5
