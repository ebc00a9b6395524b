"""SQLite's writers of one process take turns (core.store.write_turns): a write transaction holds its database's
turn from its first write to its commit or rollback, reads never take it, a failed write gives it back, a
second writer waits for it on the lock (not in SQLite's busy handler), and ``kept`` holds it across one
thread's transactions until its block ends."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import text

from core.store import Store, write_turns
from core.store.write_turns import TurnConnection, is_write, kept, turn_of


@pytest.fixture
def database(tmp_path) -> str:
    path = str(tmp_path / "turns.db")
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    return path


def connect(path: str, timeout: float = 5.0) -> TurnConnection:
    return sqlite3.connect(path, timeout=timeout, factory=TurnConnection, check_same_thread=False)


def held(path: str) -> bool:
    """Whether someone holds the database's turn now."""
    turn = turn_of(path)
    if not turn._lock.acquire(blocking=False):
        return True
    turn._lock.release()
    return False


def test_statements_that_open_a_write_transaction():
    assert is_write("INSERT INTO t VALUES (1)") and is_write("  update t set x = 2") and is_write("DELETE FROM t")
    assert is_write("REPLACE INTO t VALUES (1)")
    assert not is_write("SELECT * FROM t") and not is_write("PRAGMA busy_timeout=1") and not is_write("")


def test_a_write_transaction_holds_the_turn_until_commit_or_rollback(database):
    c = connect(database)
    c.execute("SELECT * FROM t").fetchall()
    assert not held(database)  # a read takes no turn
    c.execute("INSERT INTO t VALUES (1)")
    assert held(database)
    c.execute("INSERT INTO t VALUES (2)")  # the same transaction: the turn is not taken twice
    c.commit()
    assert not held(database)
    c.execute("DELETE FROM t WHERE x = 1")
    assert held(database)
    c.rollback()
    assert not held(database)
    c.execute("UPDATE t SET x = 3 WHERE x = 2")
    c.close()  # closing with a transaction open gives the turn back too
    assert not held(database)


def test_a_failed_write_gives_the_turn_back(database):
    c = connect(database)
    c.execute("INSERT INTO t VALUES (1)")
    c.commit()
    with pytest.raises(sqlite3.IntegrityError):
        c.execute("INSERT INTO t VALUES (1)")
    c.rollback()
    assert not held(database)
    with pytest.raises(sqlite3.OperationalError):
        c.execute("INSERT INTO missing VALUES (1)")  # fails before any transaction opens
    assert not held(database)


def test_a_second_writer_waits_for_the_turn_and_writes_once_it_is_given(database):
    first, second = connect(database), connect(database)
    first.execute("INSERT INTO t VALUES (1)")
    done = threading.Event()

    def write() -> None:
        second.execute("INSERT INTO t VALUES (2)")
        second.commit()
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not done.wait(0.2)  # waiting for the turn, not failing with "database is locked"
    first.commit()
    assert done.wait(5)
    writer.join()
    assert [r[0] for r in first.execute("SELECT x FROM t ORDER BY x")] == [1, 2]


def test_the_wait_for_the_turn_is_bounded_by_the_busy_timeout(database):
    first, second = connect(database), connect(database, timeout=0.1)
    first.execute("INSERT INTO t VALUES (1)")
    failure: list[BaseException] = []
    writer = threading.Thread(target=lambda: _catch(failure, second.execute, "INSERT INTO t VALUES (2)"))
    writer.start()
    writer.join(5)
    assert len(failure) == 1 and "database is locked" in str(failure[0])
    first.commit()


def _catch(into: list[BaseException], run, *args) -> None:
    try:
        run(*args)
    except sqlite3.OperationalError as exc:
        into.append(exc)


def test_kept_holds_the_turn_across_the_threads_transactions_until_the_block_ends(database):
    mine, other = connect(database), connect(database)
    order: list[str] = []

    def write_other() -> None:
        other.execute("INSERT INTO t VALUES (100)")
        order.append("other")
        other.commit()

    writer = threading.Thread(target=write_other)
    with kept():
        mine.execute("INSERT INTO t VALUES (1)")
        mine.commit()
        writer.start()
        time.sleep(0.1)
        mine.execute("INSERT INTO t VALUES (2)")  # taken again at once: this thread keeps it
        mine.commit()
        order.append("mine")
        assert held(database)
    writer.join(5)
    assert order == ["mine", "other"]
    assert not held(database)


def test_an_in_memory_database_has_no_turn():
    assert turn_of(":memory:") is None and turn_of("file:x?mode=memory&cache=shared") is None
    c = connect(":memory:")
    c.execute("CREATE TABLE t (x)")
    c.execute("INSERT INTO t VALUES (1)")
    c.commit()


def test_the_stores_sqlite_connections_take_turns(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    path = str(tmp_path / "store.db")
    with store.engine.connect() as c:
        assert isinstance(c.connection.dbapi_connection, TurnConnection)
    with store.engine.begin() as c:
        c.execute(text("CREATE TABLE IF NOT EXISTS scratch (x INTEGER)"))
        c.execute(text("INSERT INTO scratch VALUES (1)"))
        assert held(path)
    assert not held(path)
    assert write_turns.turn_of(path) is turn_of(path)
