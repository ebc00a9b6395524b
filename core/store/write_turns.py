"""SQLite's writers of this process take turns on a lock of the process instead of polling the database's.

SQLite admits one write transaction at a time. A writer that finds the database locked waits in SQLite's
busy handler, which sleeps and retries (1, 2, 5, 10, ... up to 100 ms between tries), so under 100 graders
a press's write often slept tens of milliseconds after the lock was free, and every claim batched behind
it waited too (py-spy of serve.py under benchmarks/concurrent_graders.py: most worker threads asleep in the
first write of a showing or a grade). Here a connection's first write statement (INSERT, UPDATE, DELETE,
REPLACE: the statements on which Python's sqlite3 opens a transaction) first waits for the database file's
turn in this process, which passes to the next writer as soon as the transaction ends (commit, rollback,
close). Writers of other processes (the app's worker) are kept apart by SQLite's own lock and busy timeout,
as before; reads never wait here.

``kept``: a thread that writes several transactions in a row for others (a batch of claims: core.services.
reservations) keeps the turn from its first write to the end of the block, so it waits for it once, not once
per transaction behind every other writer.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
"""The statements on which Python's sqlite3 (in its default, legacy transaction control) begins a transaction."""


class Turn:
    """The write turn of one database file in this process: one writer at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keeper: int | None = None

    def take(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the turn (then "database is locked", as SQLite's busy timeout).
        True when the caller gives it back (``give``) at its transaction's end; False when this thread keeps
        it (``kept``) until its block ends."""
        if self._keeper == threading.get_ident():
            return False
        if not self._lock.acquire(timeout=timeout):
            raise sqlite3.OperationalError("database is locked (another writer of this process held it)")
        keeping = getattr(_local, "kept", None)
        if keeping is None:
            return True
        self._keeper = threading.get_ident()
        keeping.append(self)
        return False

    def give(self) -> None:
        """Pass the turn on (to the next writer waiting, if any)."""
        self._keeper = None
        self._lock.release()


_turns: dict[str, Turn] = {}
_turns_guard = threading.Lock()
_local = threading.local()


def turn_of(database: str) -> Turn | None:
    """The write turn of the database file ``database`` in this process; None for an in-memory database (each
    connection its own)."""
    if not database or database == ":memory:" or "mode=memory" in database:
        return None
    with _turns_guard:
        return _turns.setdefault(database, Turn())


@contextmanager
def kept() -> Iterator[None]:
    """Within it, a write turn this thread takes is kept, across its transactions, until the block ends."""
    if getattr(_local, "kept", None) is not None:
        yield
        return
    _local.kept = []
    try:
        yield
    finally:
        turns, _local.kept = _local.kept, None
        for turn in turns:
            turn.give()


def is_write(statement: str) -> bool:
    """Whether ``statement`` opens a write transaction (its first word is one of WRITES)."""
    words = statement.split(None, 1)
    return bool(words) and words[0].upper() in WRITES


class TurnConnection(sqlite3.Connection):
    """A sqlite3 connection whose write transactions take the database's turn first (``sqlite3.connect``'s
    ``factory``); ``timeout``, the busy timeout, also bounds the wait for the turn."""

    def __init__(self, database: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self._turn = turn_of(str(database))
        self._timeout = float(kwargs.get("timeout", args[0] if args else 5.0))
        self._holding = False

    def cursor(self, factory: type[sqlite3.Cursor] | None = None) -> sqlite3.Cursor:  # type: ignore[override]
        return super().cursor(factory or TurnCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:  # type: ignore[override]
        return self.cursor().executemany(sql, parameters)

    def take_turn(self, statement: str) -> None:
        """Wait for the turn before ``statement`` when it opens a write transaction and none is open."""
        if self._turn is not None and not self._holding and not self.in_transaction and is_write(statement):
            self._holding = self._turn.take(self._timeout)

    def end_turn(self, *, closing: bool = False) -> None:
        """Pass the turn on once no transaction is open (after a commit, a rollback, a failed statement, a close)."""
        if self._holding and (closing or not self.in_transaction):
            self._holding = False
            self._turn.give()

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.end_turn()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.end_turn()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.end_turn(closing=True)


class TurnCursor(sqlite3.Cursor):
    """A cursor of a TurnConnection: its write statements take the connection's turn (``take_turn``)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        return self._turned(super().execute, sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:  # type: ignore[override]
        return self._turned(super().executemany, sql, parameters)

    def _turned(self, run: Any, sql: str, parameters: Any) -> sqlite3.Cursor:
        connection: TurnConnection = self.connection  # type: ignore[assignment]
        connection.take_turn(sql)
        try:
            return run(sql, parameters)
        finally:
            connection.end_turn()
