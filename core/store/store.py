"""The read and write functions the rest of ActiveGrade uses; the only SQL in the code base.

Every write is one transaction; every read returns plain Python or pandas
objects, never live ORM rows, so callers can hold them across threads.
"""

from __future__ import annotations

import bisect
import logging
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from cachetools import LRUCache
from psycopg.copy import QueuedLibpqWriter
from sqlalchemy import (
    BindParameter,
    Connection,
    Engine,
    Executable,
    Row,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from core.errors import InputError, NotSaved, Taken
from core.rubric import ONE_QUESTION
from core.settings import ProjectSettings
from core.store import json_codec
from core.store.engine import database_url, make_engine
from core.store.grade_cache import GradeCache
from core.store.migrations import upgrade
from core.store.models import (
    AuditEvent,
    Flag,
    Grade,
    InputFile,
    Item,
    Project,
    Reservation,
    Review,
    Skip,
    aware,
    grading_key,
    storable_id,
    utcnow,
)

logger = logging.getLogger(__name__)

SAVE_CHUNK = 20_000
"""Items written per insert by ``save_items``."""

WORKER_FILE_BYTES = 512_000_000
"""Upload bytes a worker's Store keeps in memory, the most recently read first, by their digest
(``input_files``): every chunk of a preparation reads the project's uploads, at 10^6 items x 10 samples
61 MB from the database each time. Half the largest file accepted (core.inputs.tables.MAX_FILE_BYTES): a
file too large for it is read each time. The web server keeps none (it reads an upload to export it)."""


@dataclass(frozen=True)
class Undone:
    """What an undo did (``Store.retract_last_grade``): the item's ``position``, and how many grades of the card
    the undone one had replaced stand again (0: the item has none of the grader's now)."""

    position: int
    restored: int


GRADING_ORDER = (grading_key(), Grade.id)
"""The grading order of grade rows (core.store.models.grading_key): the queue's, the looks', the estimates'."""
RESTORED_COLUMNS = tuple(c.name for c in Grade.__table__.columns if c.name not in ("id", "retracted_at"))
"""What a grade an undo restores keeps of it: everything but its id and its retraction."""

GRADE_COLUMNS = ["id", "position", "value", "label", "grader", "comment", "seconds", "created_at"]
TARGET_GRADE_COLUMNS = [*GRADE_COLUMNS, "target", "side"]
"""The columns of a comparison's grades (Store.target_grades): which target, and on which side of the card."""
RUBRIC_GRADE_COLUMNS = [*GRADE_COLUMNS, "criterion"]
"""The columns of a rubric's grades (Store.rubric_grades): which criterion each answers."""
REVIEW_KEY_COLUMNS = ["position", "target", "criterion"]
"""What a review settles: one item's grade of one target and one criterion ("" each where the project has none)."""


UNREADABLE = "unreadable"
"""The status of a project whose stored settings fail their checks (written by another version, or by hand): it
is listed with the reason and what to do, its grades are kept, and every reading of its settings raises the reason,
so nothing prepares, grades or estimates it with settings it was not given."""


@dataclass(frozen=True)
class ProjectInfo:
    """A snapshot of one project row."""

    id: int
    name: str
    created_at: datetime
    read_settings: ProjectSettings | InputError
    """Read once from the stored JSON (``ProjectSettings.from_dict``: every default filled in, every value
    checked), or why they cannot be read."""
    status: str
    progress_done: int
    progress_total: int
    progress_message: str
    error: str
    updated_at: datetime

    @property
    def settings(self) -> ProjectSettings:
        """The project's settings; the InputError naming the setting at fault when they cannot be read."""
        if isinstance(self.read_settings, InputError):
            raise self.read_settings
        return self.read_settings


def _info(row: Project | Row) -> ProjectInfo:
    try:
        settings: ProjectSettings | InputError = ProjectSettings.from_dict(row.settings)
    except InputError as exc:  # the one project is shown unreadable, with the reason; the others read as ever
        settings = exc
    return ProjectInfo(
        id=row.id,
        name=row.name,
        created_at=aware(row.created_at),
        read_settings=settings,
        status=UNREADABLE if isinstance(settings, InputError) else row.status,
        progress_done=row.progress_done,
        progress_total=row.progress_total,
        progress_message=row.progress_message,
        error=f"its stored {settings.problem} ({settings.fix}); another version or a hand wrote it: correct it in "
        "the projects table, or delete the project"
        if isinstance(settings, InputError)
        else row.error,
        updated_at=aware(row.updated_at),
    )


def json_safe(value: Any) -> Any:
    """``value`` as JSON: numpy scalars and arrays to Python, NaN, NaT and NA to None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NaT or value is pd.NA or value is None:
        return None
    if isinstance(value, (pd.Timestamp, datetime)):
        return value.isoformat()
    return value


def json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as ``json_safe`` makes ``frame.to_dict(orient="records")``, built column by column:
    a numpy number or bool column becomes Python values in one ``tolist`` (NaN to None), the others go through
    ``json_safe`` value by value. At 10^5 prepared items the per-value path took 3.3 of save_items' 3.6 CPU s."""
    names = [str(name) for name in frame.columns]
    columns = [_json_values(column) for _, column in frame.items()]
    return [dict(zip(names, row)) for row in zip(*columns)] if columns else [{} for _ in range(len(frame))]


def _json_values(column: pd.Series) -> list[Any]:
    """``json_safe`` of each value of ``column``: numpy numbers and bools, and pandas' string columns, in one
    ``tolist`` with the missing values set to None afterwards; anything else value by value."""
    numeric = isinstance(column.dtype, np.dtype) and column.dtype.kind in "fiub"
    if not numeric and not isinstance(column.dtype, pd.StringDtype):
        return [json_safe(v) for v in column.tolist()]
    values = column.tolist()
    for i in np.flatnonzero(column.isna().to_numpy()):
        values[i] = None
    return values


ITEM_COLUMNS = ("project_id", "position", "item_id", "stratum", "data")

PROJECT_ROW = select(Project.__table__).where(Project.id == bindparam("project_id"))
"""A project's row. This and the statements below are reads each grading card repeats, built once at import
(``first_row``): SQLAlchemy then keys a statement's SQL once, where building it per call cost more than the
query (a project's row: 0.19 ms read through a session, 0.07 ms so)."""
ITEM_ROW = select(Item.__table__).where(
    Item.project_id == bindparam("project_id"), Item.position == bindparam("position")
)
LAST_POSITION = select(func.max(Item.position)).where(Item.project_id == bindparam("project_id"))


ItemRows = Callable[[int, list, list, list[dict]], None]
"""Writes item rows: (first position, item ids, strata, data dicts), one entry each per item."""


@contextmanager
def _item_writer(s: Session, project_id: int) -> Iterator[ItemRows]:
    """An `ItemRows` inserting into ``items`` in the session's transaction. On PostgreSQL the rows of one
    save go through a single COPY: psycopg's executemany runs one INSERT per row (each parsed, bound and
    executed by the server), which made saving 10^6 items take minutes. The COPY's data is sent by a
    writer thread (psycopg's QueuedLibpqWriter), so the server stores rows while this thread encodes the
    next ones (at 10^6 items about 4 s each; the items' foreign key, dropped in revision 0006, had cost
    the server 6 s more). ``data`` is written as SQLAlchemy's JSON type writes it
    (core.store.json_codec.dumps), so it reads back the same."""
    if s.get_bind().dialect.name != "postgresql":

        def insert(start: int, ids: list, strata: list, data: list[dict]) -> None:
            rows = zip(range(start, start + len(ids)), map(str, ids), map(int, strata), data)
            s.execute(Item.__table__.insert(), [dict(zip(ITEM_COLUMNS, (project_id, *row))) for row in rows])

        yield insert
        return
    cursor = s.connection().connection.driver_connection.cursor()
    statement = f"COPY items ({', '.join(ITEM_COLUMNS)}) FROM STDIN"
    with cursor, cursor.copy(statement, writer=QueuedLibpqWriter(cursor)) as copy:

        def write(start: int, ids: list, strata: list, data: list[dict]) -> None:
            for position, item_id, stratum, values in zip(range(start, start + len(ids)), ids, strata, data):
                copy.write_row((project_id, position, str(item_id), int(stratum), json_codec.dumps(values)))

        yield write


GRADE_CHANGED, UNDO, COMMENTED, SKIP = "grade_changed", "undo", "commented", "skip"
GRADE_EVENTS = (GRADE_CHANGED, UNDO, COMMENTED, SKIP)
"""Audit events the store writes itself, each with its change in one transaction (actor: the grader)."""


ADD_EVENT = insert(AuditEvent.__table__)
"""An audit event's row (its time the column's default): ``_event``'s, built once."""


def _event(s: Session | Connection, actor: str, action: str, project_id: int, **detail: Any) -> None:
    """Inside a write: its audit event (a Core insert, so a grade's write needs no ORM session)."""
    s.execute(ADD_EVENT, {"actor": actor, "action": action, "project_id": project_id, "detail": json_safe(detail)})


PREPARED = "prepared"
"""A ready project's progress message."""


class Store:
    """A connection to one ActiveGrade database (SQLite file or PostgreSQL)."""

    def __init__(self, engine: Engine, kept_file_bytes: int = 0) -> None:
        """``kept_file_bytes``: upload bytes to keep in memory (see WORKER_FILE_BYTES)."""
        self.engine = engine
        self._session = sessionmaker(engine, expire_on_commit=False)
        self._files: LRUCache[str, bytes] = LRUCache(maxsize=kept_file_bytes, getsizeof=len)
        self._files_lock = threading.Lock()
        self._grade_cache = GradeCache()
        self._shared = threading.local()

    @classmethod
    def open(cls, url: str | None = None, kept_file_bytes: int = 0) -> Store:
        """Connect to ``url`` (default: see ``database_url``) and create or upgrade its schema."""
        engine = make_engine(database_url(url))
        upgrade(engine)
        return cls(engine, kept_file_bytes)

    def session(self) -> Session:
        return self._session()

    @contextmanager
    def shared_reads(self) -> Iterator[None]:
        """Within it, this thread's reads (``first_row``, ``all_rows``, ``grading_state``) share one connection
        instead of taking one from the pool each (about 30 us a read on SQLite): for a request's dozen reads.
        Each read still sees every write committed before it (SQLite reads outside a transaction; PostgreSQL's
        read committed takes a snapshot per statement); writes take their own connection, as before."""
        if getattr(self._shared, "connection", None) is not None:
            yield
            return
        with self.engine.connect() as connection:
            self._shared.connection = connection
            try:
                yield
            finally:
                self._shared.connection = None

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """The connection for a read: this thread's shared one (``shared_reads``), else one from the pool."""
        shared = getattr(self._shared, "connection", None)
        if shared is not None:
            yield shared
            return
        with self.engine.connect() as connection:
            yield connection

    def first_row(self, statement: Executable, **params: Any) -> Row | None:
        """The first row of ``statement`` (built once, at import) run with ``params``, on a plain connection."""
        with self._reading() as connection:
            return connection.execute(statement, params).first()

    def all_rows(self, statement: Executable, **params: Any) -> list[Row]:
        """Every row of ``statement`` (built once, at import) run with ``params``, on a plain connection."""
        with self._reading() as connection:
            return list(connection.execute(statement, params).all())

    # projects -----------------------------------------------------------

    def create_project(
        self,
        name: str,
        settings: dict[str, Any],
        files: dict[str, tuple[str, bytes]],
        request_key: str | None = None,
    ) -> int:
        """Insert a project and its input files (role -> (file name, bytes)), with the Idempotency-Key it was
        sent with (``request_key``); returns its id."""
        name = name.strip()
        if not name:
            raise InputError("the project name is empty", fix="type a name for the project")
        try:
            with self.session() as s, s.begin():
                project = Project(
                    name=name,
                    settings=ProjectSettings.from_dict(json_safe(settings)).to_dict(),
                    request_key=request_key,
                )
                s.add(project)
                s.flush()
                for role, (file_name, content) in files.items():
                    s.add(InputFile(project_id=project.id, role=role, name=file_name, content=content))
                return project.id
        except IntegrityError:
            found = self.project_by_name(name)  # its id: a retry after a lost answer finds the project it made
            if found is None and request_key is not None and (made := self.project_of_request(request_key)):
                raise InputError(
                    f"the Idempotency-Key {request_key!r} made project {made} already",
                    fix="send a new key with each new project",
                    field="Idempotency-Key",
                ) from None
            raise Taken(
                f"a project named {name!r} already exists" + ("" if found is None else f" (id {found.id})"),
                fix="choose another name or open that project",
                field="name",
            ) from None

    def project_of_request(self, request_key: str) -> int | None:
        """The id of the project created with the Idempotency-Key ``request_key``, or None."""
        with self.session() as s:
            return s.scalar(select(Project.id).where(Project.request_key == request_key))

    def input_digests(self, project_id: int) -> dict[str, tuple[str, str]]:
        """The project's uploads as role -> (file name, SHA-256 hex), without their bytes."""
        with self.session() as s:
            rows = s.execute(
                select(InputFile.role, InputFile.name, InputFile.digest).where(InputFile.project_id == project_id)
            ).all()
            return {role: (name, digest) for role, name, digest in rows}

    def projects(self) -> list[ProjectInfo]:
        """All projects, newest first."""
        with self.session() as s:
            rows = s.scalars(select(Project).order_by(Project.created_at.desc(), Project.id.desc()))
            return [_info(r) for r in rows]

    def project(self, project_id: int) -> ProjectInfo:
        row = self.first_row(PROJECT_ROW, project_id=project_id) if storable_id(project_id) else None
        if row is None:
            raise KeyError(f"no project with id {project_id}")
        return _info(row)

    def project_by_name(self, name: str) -> ProjectInfo | None:
        with self.session() as s:
            row = s.scalar(select(Project).where(Project.name == name))
            return None if row is None else _info(row)

    def update_settings(self, project_id: int, changes: dict[str, Any]) -> None:
        """Merge ``changes`` into the project's settings."""
        with self.session() as s, s.begin():
            row = s.get(Project, project_id)
            row.settings = ProjectSettings.from_dict(row.settings).with_changes(json_safe(changes)).to_dict()

    def set_status(self, project_id: int, status: str, error: str = "") -> None:
        with self.session() as s, s.begin():
            s.execute(
                update(Project).where(Project.id == project_id).values(status=status, error=error, updated_at=utcnow())
            )

    def claim_preparation(self, project_id: int, stale_before: datetime) -> bool:
        """Atomically mark the project 'preparing' if it is new, failed, or preparing with a heartbeat
        older than ``stale_before``; True when this caller won the claim (one winner across processes)."""
        with self.session() as s, s.begin():
            result = s.execute(
                update(Project)
                .where(
                    Project.id == project_id,
                    or_(
                        Project.status.in_(("new", "failed")),
                        and_(Project.status == "preparing", Project.updated_at < stale_before),
                    ),
                )
                .values(status="preparing", error="", progress_done=0, updated_at=utcnow())
            )
            return result.rowcount == 1

    def heartbeat(self, project_id: int) -> None:
        """Stamp ``updated_at`` alone: the preparation job is alive (its progress stays as last written)."""
        with self.session() as s, s.begin():
            s.execute(update(Project).where(Project.id == project_id).values(updated_at=utcnow()))

    def set_progress(self, project_id: int, done: int, total: int, message: str = "") -> None:
        """Record preparation progress; doubles as the job's heartbeat."""
        with self.session() as s, s.begin():
            s.execute(
                update(Project)
                .where(Project.id == project_id)
                .values(progress_done=done, progress_total=total, progress_message=message, updated_at=utcnow())
            )

    def delete_project(self, project_id: int) -> None:
        """Delete a project with its files, items, grades, skips, reviews and flags."""
        with self.session() as s, s.begin():
            for table in (Flag, Review, Skip, Grade, Item, InputFile):
                s.execute(delete(table).where(table.project_id == project_id))
            s.execute(delete(Project).where(Project.id == project_id))

    def input_files(self, project_id: int) -> dict[str, tuple[str, bytes]]:
        """The project's uploads: role -> (file name, bytes). A file read before, by its digest (kept up to
        the Store's ``kept_file_bytes``), is not read from the database again."""
        while True:
            with self.session() as s:
                listed = s.execute(
                    select(InputFile.id, InputFile.role, InputFile.name, InputFile.digest).where(
                        InputFile.project_id == project_id
                    )
                ).all()
                files = {role: (name, self._file(s, file_id, digest)) for file_id, role, name, digest in listed}
            if all(content is not None for _name, content in files.values()):
                return files
            # a file was replaced between the listing and its read (sampling replaces its partial file): list again

    def _file(self, s: Session, file_id: int, digest: str) -> bytes | None:
        """An input file's content, from memory when this Store read it before; None once it is replaced."""
        with self._files_lock:
            content = self._files.get(digest)
        if content is None:
            content = s.scalar(select(InputFile.content).where(InputFile.id == file_id))
            if content is not None and 0 < len(content) <= self._files.maxsize:
                with self._files_lock:
                    self._files[digest] = content
        return content

    # items --------------------------------------------------------------

    def save_items(self, project_id: int, items: pd.DataFrame) -> None:
        """Replace the project's items with ``items`` (pool order, with ``id`` and ``stratum``) and mark it ready
        (its progress: every item, PREPARED).

        One transaction, written SAVE_CHUNK rows at a time: only one chunk's row dicts exist at once."""
        with self.session() as s, s.begin():
            s.execute(delete(Item).where(Item.project_id == project_id))
            with _item_writer(s, project_id) as write:
                for start in range(0, len(items), SAVE_CHUNK):
                    chunk = items.iloc[start : start + SAVE_CHUNK]
                    data = json_rows(chunk.drop(columns=["id", "stratum"]))
                    write(start, chunk["id"].tolist(), chunk["stratum"].tolist(), data)
            s.execute(  # ready, and its progress says so (not the last stage a preparation reported)
                update(Project)
                .where(Project.id == project_id)
                .values(
                    status="ready",
                    error="",
                    progress_done=len(items),
                    progress_total=len(items),
                    progress_message=PREPARED,
                    updated_at=utcnow(),
                )
            )

    def load_items(self, project_id: int) -> pd.DataFrame:
        """The prepared items in pool order: ``id``, ``stratum`` and every other stored column.

        Read SAVE_CHUNK rows at a time (a server-side cursor on PostgreSQL), each chunk made a typed frame
        at once: only one chunk's row dicts exist at a time, not one per item of the pool (at 10^6 items
        those dicts were most of the web server's peak memory). Chunks whose column types differ (a
        column null throughout one chunk) join as one frame built whole would: pandas widens int to
        float, anything else to objects, and the nulls become NaN below.
        """
        with self.session() as s:
            result = s.execute(
                select(Item.item_id, Item.stratum, Item.data)
                .where(Item.project_id == project_id)
                .order_by(Item.position),
                execution_options={"yield_per": SAVE_CHUNK},
            )
            chunks = [
                pd.DataFrame.from_records([{"id": i, "stratum": h, **d} for i, h, d in rows])
                for rows in result.partitions()
            ]
        if not chunks:
            return pd.DataFrame.from_records([])
        frame = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
        # JSON stores NaN as null: an all-null column comes back as objects, make it float again
        return frame.fillna(np.nan).infer_objects()

    def item(self, project_id: int, position: int) -> dict[str, Any]:
        """One item as a dict (``id``, ``stratum`` and its stored columns)."""
        row = self.first_row(ITEM_ROW, project_id=project_id, position=position)
        if row is None:
            raise KeyError(f"project {project_id} has no item at position {position}")
        return {"id": row.item_id, "stratum": row.stratum, **row.data}

    def item_ids(self, project_id: int, positions: Sequence[int]) -> dict[int, str]:
        """position -> the item's id, for the positions given (those with no item left out)."""
        wanted = [int(p) for p in positions]
        if not wanted:
            return {}
        with self.session() as s:
            rows = s.execute(
                select(Item.position, Item.item_id).where(Item.project_id == project_id, Item.position.in_(wanted))
            )
            return {int(p): str(i) for p, i in rows}

    def position_of(self, project_id: int, item_id: str) -> int | None:
        """The position of the item whose id is ``item_id``, None where the project has none."""
        with self.session() as s:
            return s.scalar(
                select(Item.position).where(Item.project_id == project_id, Item.item_id == item_id).limit(1)
            )

    def item_count(self, project_id: int) -> int:
        """N: positions are 0..N-1, so the last position + 1, read from the primary key's index (no count of
        N rows: the grade page asks on every press)."""
        last = self.first_row(LAST_POSITION, project_id=project_id)[0]
        return 0 if last is None else int(last) + 1

    def stratum_sizes(self, project_id: int) -> list[int]:
        """N_h, the number of items in each stratum 0..H-1 (empty before preparation), counted by the database."""
        with self.session() as s:
            rows = s.execute(
                select(Item.stratum, func.count()).where(Item.project_id == project_id).group_by(Item.stratum)
            ).all()
        sizes = dict(rows)
        return [int(sizes.get(h, 0)) for h in range(max(sizes, default=-1) + 1)]

    # grades and skips -----------------------------------------------------
    # Every change to a grade, and every skip, writes its audit event in the same transaction (GRADE_EVENTS),
    # so no path through core changes a grade without its trace. A first grade needs none: it carries its
    # grader and time itself.

    def add_grade(
        self,
        project_id: int,
        position: int,
        *,
        value: float,
        label: str,
        grader: str,
        comment: str = "",
        seconds: float | None = None,
        release: bool = False,
    ) -> int:
        """Record a grade in one transaction; it replaces this grader's earlier grade of the item. ``release``:
        the grader's reservation in the project goes in the same transaction (``_release``).

        Raises NotSaved when the database does not take it (down, disk full: the transaction is rolled
        back, earlier grades are untouched) and InputError when the project has been deleted.
        """
        with self._writing("the grade", project_id), self.engine.begin() as c:
            grade_id = _replace_grade(
                c, project_id, position, ("", ONE_QUESTION), None, value, label, grader, comment, seconds, utcnow()
            )
            _release(c, project_id, grader, release)
            return grade_id

    def add_card_grades(
        self,
        project_id: int,
        position: int,
        card: list[tuple[str, float, str]],
        *,
        grader: str,
        comment: str = "",
        seconds: float | None = None,
        release: bool = False,
    ) -> list[int]:
        """Record one side-by-side card's grades in one transaction: ``card`` lists (target, value, label) side
        by side, left to right, and side j's grade is stored with its target and ``side = j``. Each replaces
        this grader's earlier grade of that (item, target), an audited change; either every side is stored
        or none (NotSaved, InputError: see add_grade; ``release`` too). Returns the grade ids, side by side."""
        with self._writing("the card's grades", project_id), self.engine.begin() as c:
            now = utcnow()
            grade_ids = [
                _replace_grade(
                    c, project_id, position, (target, ONE_QUESTION), side, value, label, grader, comment, seconds, now
                )
                for side, (target, value, label) in enumerate(card)
            ]
            _release(c, project_id, grader, release)
            return grade_ids

    def add_rubric_grades(
        self,
        project_id: int,
        position: int,
        card: list[tuple[str, float, str]],
        *,
        grader: str,
        comment: str = "",
        seconds: float | None = None,
        release: bool = False,
    ) -> list[int]:
        """Record one rubric card's grades in one transaction: ``card`` lists (criterion, value, label), and
        each is stored with its criterion (grades.criterion), replacing this grader's earlier grade of that
        (item, criterion), an audited change. The card replaces the grader's whole earlier card: a criterion
        answered before and left out now (an optional one) is retracted with it. Either every grade is stored or
        none (NotSaved, InputError: see add_grade; ``release`` too). Returns the grade ids, in ``card``'s order."""
        with self._writing("the card's grades", project_id), self.engine.begin() as c:
            now = utcnow()
            answered = [criterion for criterion, _, _ in card]
            c.execute(
                update(Grade)
                .where(*_active(project_id, grader), Grade.position == position, Grade.criterion.not_in(answered))
                .values(retracted_at=now)
            )
            grade_ids = [
                _replace_grade(
                    c, project_id, position, ("", criterion), None, value, label, grader, comment, seconds, now
                )
                for criterion, value, label in card
            ]
            _release(c, project_id, grader, release)
            return grade_ids

    def grade_counts(self, project_id: int) -> tuple[int, int]:
        """(items with an active grade, active grades) of every criterion, counted by the database."""
        query = select(func.count(func.distinct(Grade.position)), func.count()).where(
            Grade.project_id == project_id, Grade.retracted_at.is_(None)
        )
        with self.session() as s:
            items, grades = s.execute(query).one()
        return int(items), int(grades)

    def rubric_grades(self, project_id: int) -> pd.DataFrame:
        """Every criterion's active grades in submission order, columns RUBRIC_GRADE_COLUMNS."""
        columns = [getattr(Grade, c) for c in RUBRIC_GRADE_COLUMNS]
        query = (
            select(*columns)
            .where(Grade.project_id == project_id, Grade.retracted_at.is_(None))
            .order_by(*GRADING_ORDER)
        )
        with self.session() as s:
            rows = s.execute(query).all()
        return pd.DataFrame.from_records(rows, columns=RUBRIC_GRADE_COLUMNS)

    def criterion_of(self, project_id: int, criterion: str | None = None) -> str:
        """``criterion``, or for None the one the project's design reads (core.settings.ProjectSettings.
        design_criterion: the rubric's primary criterion, "" without a rubric). Every reader of grades below
        reads one criterion's, this one by default, so a rubric's other criteria never mix into the reading."""
        if criterion is not None:
            return criterion
        row = self.first_row(PROJECT_ROW, project_id=project_id)
        return ONE_QUESTION if row is None else ProjectSettings.from_dict(row.settings).design_criterion

    def target_grades(self, project_id: int) -> pd.DataFrame:
        """A comparison's active grades in submission order, columns TARGET_GRADE_COLUMNS."""
        columns = [getattr(Grade, c) for c in TARGET_GRADE_COLUMNS]
        query = (
            select(*columns)
            .where(Grade.project_id == project_id, Grade.retracted_at.is_(None))
            .order_by(*GRADING_ORDER)
        )
        with self.session() as s:
            rows = s.execute(query).all()
        return pd.DataFrame.from_records(rows, columns=TARGET_GRADE_COLUMNS)

    @contextmanager
    def _writing(self, what: str, project_id: int) -> Iterator[None]:
        """Turn the database's failures while writing ``what`` into NotSaved or, for a project deleted
        meanwhile (its foreign key fails), an InputError saying so."""
        try:
            yield
        except IntegrityError:
            if not self.has_project(project_id):
                raise InputError(
                    f"{what} was not saved: project {project_id} has been deleted",
                    fix="choose another project in the sidebar",
                ) from None
            raise
        except DBAPIError as exc:
            reason = f"{type(exc.orig).__name__}: {_first_line(exc.orig)}"
            logger.error("project %d: the database refused a write (%s): %s", project_id, what, reason)
            raise NotSaved(
                f"{what} was not saved: the database did not accept it ({reason}). Nothing else was lost; press again"
            ) from exc

    def has_project(self, project_id: int) -> bool:
        with self.session() as s:
            return s.get(Project, project_id) is not None

    def retract_last_grade(self, project_id: int, grader: str) -> Undone | None:
        """Undo: retract this grader's most recent active grades of one item, the whole card (every side of a
        side-by-side card, every criterion of a rubric); None when they have none (NotSaved: see add_grade).

        Where that card changed an earlier one, the earlier card stands again: a change retracts the grades it
        replaces at the very time it stores its own (``_replace_grade``'s ``now``), so the rows retracted at the
        card's ``created_at`` are those, and each comes back as a new row with its own label, comment, side and
        submission time. Rows are only ever added and retracted, never restored in place
        (core.store.grade_cache counts on it); a restored copy keeps its original's submission time, so a
        further undo reaches the card before it in turn."""
        with self._writing("the undo", project_id), self.session() as s, s.begin():
            last = s.execute(
                select(Grade.position, Grade.created_at)
                .where(*_active(project_id, grader))
                .order_by(Grade.created_at.desc(), Grade.id.desc())  # a restored card at its own time
                .limit(1)
                .with_for_update()
            ).first()
            if last is None:
                return None
            position, submitted = last
            mine = (Grade.project_id == project_id, Grade.grader == grader, Grade.position == position)
            replaced = s.scalars(select(Grade).where(*mine, Grade.retracted_at == submitted).order_by(Grade.id)).all()
            s.execute(
                update(Grade)
                .where(*_active(project_id, grader), Grade.position == position)
                .values(retracted_at=utcnow())
            )
            for grade in replaced:  # in its original's place in the grading order
                restored = {c: getattr(grade, c) for c in RESTORED_COLUMNS}
                s.add(Grade(**restored | {"graded_from": grade.graded_from or grade.id}))
            _event(s, grader, UNDO, project_id, position=position, **({"restored": len(replaced)} if replaced else {}))
            return Undone(int(position), len(replaced))

    def set_comment(self, project_id: int, position: int, grader: str, comment: str) -> str | None:
        """Replace the comment of this grader's active grade of the item, the grade itself unchanged;
        returns the comment it had, or None when the grader has no active grade of the item."""
        with self.session() as s, s.begin():
            grades = s.scalars(
                select(Grade)
                .where(*_active(project_id, grader), Grade.position == position)
                .order_by(Grade.id)
                .with_for_update()
            ).all()
            if not grades:
                return None
            before = grades[0].comment
            for grade in grades:  # a card's grades (sides, criteria) share one comment
                grade.comment = comment
            _event(s, grader, COMMENTED, project_id, position=position, before=before, after=comment)
            return before

    def others_grade(self, project_id: int) -> bool:
        """Whether someone with an active grade here skipped none of the items standing skipped (skipped and not
        graded since): a grader the queue hands those items to once they alone hold the stopping rule
        (core.services.reading.read_project's ``others``). False where no item stands skipped."""
        standing = self.skipped_positions(project_id)
        if not standing:
            return False
        with self.session() as s:
            graders = set(
                s.scalars(
                    select(Grade.grader).where(Grade.project_id == project_id, Grade.retracted_at.is_(None)).distinct()
                )
            )
            skips = s.execute(select(Skip.grader, Skip.position).where(Skip.project_id == project_id)).all()
        return bool(graders - {grader for grader, position in skips if position in standing})

    def skipped_by(self, project_id: int, grader: str) -> list[int]:
        """Positions this grader skipped, most recent skip first, without those graded since by anyone."""
        with self.session() as s:
            rows = s.execute(
                select(Skip.position, func.max(Skip.id))
                .where(Skip.project_id == project_id, Skip.grader == grader)
                .group_by(Skip.position)
                .order_by(func.max(Skip.id).desc())
            ).all()
        graded = self.graded_positions(project_id)
        return [int(p) for p, _ in rows if p not in graded]

    def skip_steps(self, project_id: int) -> dict[int, int]:
        """Each item someone skipped (a skip not taken back) -> how many items had been graded when it was first
        skipped (items with an active grade of the design's criterion, each at its first such grade): the grades
        after which its skip stood, in grading order (core.services.reading.held_stop). Empty without skips."""
        criterion = self.criterion_of(project_id)
        with self.session() as s:
            skips = s.execute(
                select(Skip.position, func.min(Skip.created_at))
                .where(Skip.project_id == project_id)
                .group_by(Skip.position)
            ).all()
            if not skips:
                return {}
            firsts = sorted(
                s.scalars(
                    select(func.min(Grade.created_at))
                    .where(Grade.project_id == project_id, Grade.retracted_at.is_(None), Grade.criterion == criterion)
                    .group_by(Grade.position)
                ).all()
            )
        return {int(position): bisect.bisect_left(firsts, at) for position, at in skips}

    def last_skip_since_grade(self, project_id: int, grader: str) -> int | None:
        """The position of this grader's most recent skip when it came after their most recent active grade
        (the last thing they did, for Undo), else None."""
        with self.session() as s:
            skip = s.execute(
                select(Skip.position, Skip.created_at)
                .where(Skip.project_id == project_id, Skip.grader == grader)
                .order_by(Skip.id.desc())
                .limit(1)
            ).first()
            if skip is None:
                return None
            graded_at = s.scalar(select(func.max(Grade.created_at)).where(*_active(project_id, grader)))
        return int(skip.position) if graded_at is None or skip.created_at > graded_at else None

    def add_skip(self, project_id: int, position: int, grader: str) -> None:
        """Record a skip (NotSaved: see add_grade)."""
        with self._writing("the skip", project_id), self.session() as s, s.begin():
            s.add(Skip(project_id=project_id, position=position, grader=grader))
            _event(s, grader, SKIP, project_id, position=position)

    def undone_since(self, project_id: int, grader: str, since: datetime) -> bool:
        """Whether the grader undid a grade or a skip on the project at or after ``since`` (the undo's audit event)."""
        query = select(AuditEvent.id).where(
            AuditEvent.project_id == project_id,
            AuditEvent.actor == grader,
            AuditEvent.action == UNDO,
            AuditEvent.at >= since,
        )
        with self.session() as s:
            return s.scalar(query.limit(1)) is not None

    def undo_skip(self, project_id: int, position: int, grader: str) -> None:
        """Take back this grader's skips of the item (Undo after a skip: as if they had not passed it over, so it
        no longer counts as skipped, for the stopping rule's bound among others), with the undo's audit event; the
        skip's own event stays in the trail (NotSaved: see add_grade)."""
        with self._writing("the undo", project_id), self.session() as s, s.begin():
            s.execute(
                delete(Skip).where(Skip.project_id == project_id, Skip.grader == grader, Skip.position == position)
            )
            _event(s, grader, UNDO, project_id, position=position, undid="skip")

    def grades(self, project_id: int, *, include_retracted: bool = False, criterion: str | None = None) -> pd.DataFrame:
        """One criterion's grades (``criterion_of``: the design's by default) in grading order (GRADING_ORDER: an
        item at its first grade, a change keeping its place), columns GRADE_COLUMNS (+ ``retracted_at`` if
        asked)."""
        columns = [getattr(Grade, c) for c in GRADE_COLUMNS]
        query = (
            select(*columns)
            .where(Grade.project_id == project_id, Grade.criterion == self.criterion_of(project_id, criterion))
            .order_by(*GRADING_ORDER)
        )
        if include_retracted:
            query = query.add_columns(Grade.retracted_at)
        else:
            query = query.where(Grade.retracted_at.is_(None))
        with self.session() as s:
            rows = s.execute(query).all()
        names = GRADE_COLUMNS + (["retracted_at"] if include_retracted else [])
        return pd.DataFrame.from_records(rows, columns=names)

    def graded_positions(self, project_id: int, criterion: str | None = None) -> dict[int, float]:
        """Item position -> final grade of one criterion (``criterion_of``: the design's by default;
        core.stats.rater_agreement.final_grades: the reviewed grade, else the mean over its graders), active
        grades only, in grading order."""
        return self.grading_state(project_id, [self.criterion_of(project_id, criterion)])[0][0]

    def grading_state(self, project_id: int, criteria: Sequence[str]) -> tuple[list[dict[int, float]], set[int]]:
        """Each of ``criteria``'s final grades (``graded_positions``) and the positions someone skipped that have
        no active grade of the first one now (``skipped_positions``), read together from this process's copy,
        brought up to date with the rows added since its last read (core.store.grade_cache)."""
        return self._grade_cache.read(self._reading, project_id, criteria)

    def reviewed_grades(self, project_id: int, criterion: str | None = None) -> dict[int, float]:
        """Item position -> the grade a reviewer set (active reviews of the one-model key, of one criterion:
        ``criterion_of``)."""
        criterion = self.criterion_of(project_id, criterion)
        with self.session() as s:
            rows = s.execute(
                select(Review.position, Review.value).where(
                    Review.project_id == project_id,
                    Review.retracted_at.is_(None),
                    Review.target == "",
                    Review.criterion == criterion,
                )
            ).all()
        return {int(p): float(v) for p, v in rows}

    def active_reviews(self, project_id: int) -> pd.DataFrame:
        """Every active review of the project (any target, any criterion), columns REVIEW_KEY_COLUMNS and
        ``value``: the final grades reviewers set, for the grades export (core.exports.report.grades_table)."""
        columns = [getattr(Review, c) for c in (*REVIEW_KEY_COLUMNS, "value")]
        query = select(*columns).where(Review.project_id == project_id, Review.retracted_at.is_(None))
        with self.session() as s:
            rows = s.execute(query).all()
        return pd.DataFrame.from_records(rows, columns=[*REVIEW_KEY_COLUMNS, "value"])

    def first_grades(self, project_id: int, criterion: str | None = None) -> dict[int, float]:
        """Item position -> its first active grade of one criterion (``criterion_of``; the one the validation
        correction compares with the final grade: core.stats.validation), in grading order."""
        criterion = self.criterion_of(project_id, criterion)
        query = (
            select(Grade.position, Grade.value)
            .where(Grade.project_id == project_id, Grade.retracted_at.is_(None), Grade.criterion == criterion)
            .order_by(*GRADING_ORDER)
        )
        with self.session() as s:
            rows = s.execute(query).all()
        first: dict[int, float] = {}
        for position, value in rows:  # each item's first in grading order (a change in its grade's place)
            first.setdefault(int(position), float(value))
        return first

    def skipped_positions(self, project_id: int) -> set[int]:
        """Positions someone skipped that have no active grade now (undoing the grade of an item
        skipped earlier makes it skipped again)."""
        return self.grading_state(project_id, [self.criterion_of(project_id)])[1]

    def grader_positions(self, project_id: int, grader: str) -> list[int]:
        """Positions this grader has an active grade for (of the design's criterion), oldest first by submission
        (a card an undo restored at its own time: retract_last_grade), for Back."""
        criterion = self.criterion_of(project_id)
        with self.session() as s:
            rows = s.execute(
                select(Grade.position)
                .where(*_active(project_id, grader), Grade.criterion == criterion)
                .order_by(Grade.created_at, Grade.id)
            ).all()
        return list(dict.fromkeys(int(r[0]) for r in rows))

    def card_of(self, project_id: int, position: int, grader: str) -> pd.DataFrame:
        """This grader's active grades of the item, every criterion and target (a whole card), in submission
        order: columns TARGET_GRADE_COLUMNS and ``criterion``."""
        columns = [*TARGET_GRADE_COLUMNS, "criterion"]
        query = (
            select(*[getattr(Grade, c) for c in columns])
            .where(*_active(project_id, grader), Grade.position == position)
            .order_by(Grade.id)
        )
        with self.session() as s:
            rows = s.execute(query).all()
        return pd.DataFrame.from_records(rows, columns=columns)

    def grade_of(
        self, project_id: int, position: int, grader: str, criterion: str | None = None
    ) -> dict[str, Any] | None:
        """This grader's active grade of the item (of one criterion, ``criterion_of``), as a dict, or None."""
        criterion = self.criterion_of(project_id, criterion)
        row = self.first_row(GRADE_OF, project_id=project_id, grader=grader, position=position, criterion=criterion)
        return None if row is None else {c: getattr(row, c) for c in GRADE_COLUMNS}

    def undone_comment(self, project_id: int, position: int, grader: str) -> str:
        """The comment of this grader's latest retracted grade of the item, "" without one: an undo takes back the
        grade, not the words written with it, which the card offers again when the item comes back (a grader
        who undid a commented grade and graded again stored an empty comment)."""
        with self.session() as s:
            comment = s.scalar(
                select(Grade.comment)
                .where(
                    Grade.project_id == project_id,
                    Grade.grader == grader,
                    Grade.position == position,
                    Grade.retracted_at.is_not(None),
                )
                .order_by(Grade.retracted_at.desc(), Grade.id.desc())
                .limit(1)
            )
        return comment or ""


def _first_line(error: BaseException) -> str:
    """The first line of a database driver's message (the next lines hold the statement and its values,
    which may be grades or comments: never shown or logged)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else "no detail"


def _active(project_id: int | BindParameter, grader: str | BindParameter) -> tuple:
    """The WHERE terms of the grader's active grades in the project."""
    return Grade.project_id == project_id, Grade.grader == grader, Grade.retracted_at.is_(None)


GRADE_OF = (
    select(Grade.__table__)
    .where(
        *_active(bindparam("project_id"), bindparam("grader")),
        Grade.position == bindparam("position"),
        Grade.criterion == bindparam("criterion"),
    )
    .order_by(Grade.id)
)
"""This grader's active grades of an item and criterion, oldest first (``Store.grade_of``: built once)."""
RETRACT_KEY = (
    update(Grade.__table__)
    .where(
        *_active(bindparam("in_project"), bindparam("by")),  # an update's parameters may not take its columns' names
        Grade.position == bindparam("at_position"),
        Grade.target == bindparam("of_target"),
        Grade.criterion == bindparam("of_criterion"),
    )
    .values(retracted_at=bindparam("now"))
    .returning(Grade.label, grading_key())
)
"""Retract this grader's active grade of (item, target, criterion), returning its label and its place in the
grading order (``_replace_grade``)."""
ADD_GRADE = insert(Grade.__table__).returning(Grade.id)
RELEASE = delete(Reservation.__table__).where(
    Reservation.project_id == bindparam("project_id"), Reservation.grader == bindparam("grader")
)
"""Drop the grader's reservations in the project: core.store.accounts.release's, and a first grade's (``_release``)."""


def _release(s: Connection, project_id: int, grader: str, release: bool) -> None:
    """Inside a write of the grader's grades, when ``release``: drop their reservation in the project
    (``RELEASE``), so a first grade and the end of its hold commit together, one
    transaction a grade instead of two."""
    if release:
        s.execute(RELEASE, {"project_id": project_id, "grader": grader})


def _replace_grade(
    s: Connection,
    project_id: int,
    position: int,
    key: tuple[str, str],
    side: int | None,
    value: float,
    label: str,
    grader: str,
    comment: str,
    seconds: float | None,
    now: datetime,
) -> int:
    """Inside a write: retract this grader's active grade of (item, target, criterion) (``key`` is (target,
    criterion)), audited as a change when there was one, and add the new grade; returns its id. ``side``:
    where a side-by-side card showed the response (None for a response graded alone)."""
    target, criterion = key
    of_key = {
        "in_project": project_id,
        "by": grader,
        "at_position": position,
        "of_target": target,
        "of_criterion": criterion,
    }
    earlier = s.execute(RETRACT_KEY, of_key | {"now": now}).all()
    if earlier:
        where = {k: v for k, v in (("target", target), ("criterion", criterion)) if v}
        _event(s, grader, GRADE_CHANGED, project_id, position=position, **where, before=earlier[-1][0], after=label)
    grade = {
        "project_id": project_id,
        "position": position,
        "target": target,
        "criterion": criterion,
        "side": side,
        "value": float(value),
        "label": label,
        "grader": grader,
        "comment": comment,
        "seconds": seconds,
        "created_at": now,
        "graded_from": min((key for _, key in earlier), default=None),  # a change keeps the item's place
    }
    return s.execute(ADD_GRADE, grade).scalar_one()
