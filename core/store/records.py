"""The record browser's SQL: every item of a project, filtered, searched, sorted and paged by the database.

One query builds the filtered set (``filtered``): the items table, outer-joined to each item's grades
summed up (count, lowest and highest value, mean, whether any carries a comment) and to its active
review, with EXISTS tests for a grader, a label, a skip and a flag. A page is that query with ORDER BY,
OFFSET and LIMIT; its total is a COUNT over it; only the rows of the page come back, each with the
first RECORD_TEXT_CHARS characters of its prompt and response (benchmarks/browser.md measures 10^5 items
on SQLite and PostgreSQL). The export streams the same filtered set with the whole texts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import Select, and_, case, exists, func, select
from sqlalchemy.sql.elements import ColumnElement

from core.inputs.targets import response_column
from core.store.models import AuditEvent, Flag, Grade, Item, Review, Skip

if TYPE_CHECKING:
    from core.store.store import Store

RECORD_TEXT_CHARS = 160
"""Characters of the prompt and the response a page's row carries (the item view has them whole)."""
MAX_PAGE_ROWS = 500
"""The most rows one page may ask for."""
SORTS = ("position", "item", "stratum", "grades", "grade")
"""What a page may be sorted by: pool order, item id, stratum, number of grades, mean grade."""
RECORD_COLUMNS = [
    "position",
    "item",
    "stratum",
    "grades",
    "low",
    "high",
    "mean",
    "commented",
    "final",
    "prompt",
    "response",
]
"""The columns of the filtered set (``filtered``), in order; a page adds ``graders``."""
EXPORT_CHUNK = 5_000
"""Rows the export reads from the database at a time."""


@dataclass(frozen=True)
class RecordFilter:
    """Which items the browser shows; None (or "") leaves a filter off. ``label``: an active grade with
    this label; ``grader``: an active grade by this grader; ``disagreement``: active grades that differ;
    ``search``: text in the prompt or the response (case-insensitive, as typed: no wildcards);
    ``target``/``criterion``: grades of that target model or rubric criterion only (where a project has them)."""

    stratum: int | None = None
    graded: bool | None = None
    label: str | None = None
    grader: str | None = None
    commented: bool | None = None
    skipped: bool | None = None
    disagreement: bool | None = None
    reviewed: bool | None = None
    flagged: bool | None = None
    target: str | None = None
    criterion: str | None = None
    search: str = ""


@dataclass(frozen=True)
class RecordPage:
    rows: pd.DataFrame
    """One row per item: position, item, stratum, grades, low, high, mean, commented, final (the reviewed
    label or None), prompt, response (cut to RECORD_TEXT_CHARS), graders (name: label, ...). With a
    criterion chosen, the grades, values, final grade and graders are that criterion's."""
    total: int
    """Items in the filtered set."""


def _text(name: str) -> ColumnElement:
    return Item.data[name].as_string()


def _response(f: RecordFilter) -> ColumnElement:
    """The response the filter reads: the chosen model's in a comparison (its items hold one per model, under
    core.inputs.targets.response_column; the search never found a model's response, and the column was empty:
    a manager's review), else the item's one."""
    return _text("response" if f.target is None else response_column(f.target))


def filtered(project_id: int, f: RecordFilter) -> Select:
    """The filtered set as one SELECT of RECORD_COLUMNS but the texts (no order, no paging): a page reads the
    texts of its own rows only (``_texts``), since extracting them from every item's JSON was most of a
    page's time on PostgreSQL."""
    keyed = [Grade.project_id == project_id, Grade.retracted_at.is_(None)]
    if f.target is not None:
        keyed.append(Grade.target == f.target)
    if f.criterion is not None:
        keyed.append(Grade.criterion == f.criterion)
    summary = (
        select(
            Grade.position.label("position"),
            func.count().label("grades"),
            func.min(Grade.value).label("low"),
            func.max(Grade.value).label("high"),
            func.avg(Grade.value).label("mean"),
            func.max(case((Grade.comment != "", 1), else_=0)).label("commented"),
        )
        .where(*keyed)
        .group_by(Grade.position)
        .subquery()
    )
    review = (
        select(Review.position.label("position"), Review.label.label("final"))
        .where(
            Review.project_id == project_id,
            Review.retracted_at.is_(None),
            Review.target == (f.target or ""),
            Review.criterion == (f.criterion or ""),
        )
        .subquery()
    )
    query = (
        select(
            Item.position.label("position"),
            Item.item_id.label("item"),
            Item.stratum.label("stratum"),
            func.coalesce(summary.c.grades, 0).label("grades"),
            summary.c.low,
            summary.c.high,
            summary.c.mean,
            func.coalesce(summary.c.commented, 0).label("commented"),
            review.c.final,
        )
        .select_from(Item)
        .outerjoin(summary, summary.c.position == Item.position)
        .outerjoin(review, review.c.position == Item.position)
        .where(Item.project_id == project_id)
    )

    def has(model, *conditions) -> ColumnElement:
        return exists().where(model.project_id == project_id, model.position == Item.position, *conditions)

    conditions: list[ColumnElement] = []
    if f.stratum is not None:
        conditions.append(Item.stratum == int(f.stratum))
    if f.graded is not None:
        conditions.append(summary.c.grades.is_not(None) if f.graded else summary.c.grades.is_(None))
    if f.commented is not None:
        conditions.append(summary.c.commented == 1 if f.commented else func.coalesce(summary.c.commented, 0) == 0)
    if f.disagreement is not None:
        differ = summary.c.low != summary.c.high
        conditions.append(differ if f.disagreement else ~func.coalesce(differ, False))
    if f.reviewed is not None:
        conditions.append(review.c.final.is_not(None) if f.reviewed else review.c.final.is_(None))
    for wanted, test in (
        (f.label, lambda: has(Grade, *keyed[1:], Grade.label == f.label)),
        (f.grader, lambda: has(Grade, *keyed[1:], Grade.grader == f.grader)),
    ):
        if wanted:
            conditions.append(test())
    for wanted, test in ((f.skipped, lambda: has(Skip)), (f.flagged, lambda: has(Flag))):
        if wanted is not None:
            conditions.append(test() if wanted else ~test())
    if f.search.strip():
        term = f.search.strip().lower()
        conditions.append(
            func.lower(_text("prompt")).contains(term, autoescape=True)
            | func.lower(_response(f)).contains(term, autoescape=True)
        )
    return query.where(and_(*conditions)) if conditions else query


def page(
    store: Store,
    project_id: int,
    f: RecordFilter,
    *,
    sort: str = "position",
    descending: bool = False,
    offset: int = 0,
    limit: int = 50,
) -> RecordPage:
    """One page of the filtered set, sorted (ties by pool order), with its total (of items); ValueError for a
    sort not in SORTS or a page outside 1..MAX_PAGE_ROWS rows. With a criterion or a target chosen, ``graders``
    lists its grades only."""
    if sort not in SORTS:
        raise ValueError(f"sort by one of {', '.join(SORTS)}, not {sort!r}")
    if not 1 <= limit <= MAX_PAGE_ROWS or offset < 0:
        raise ValueError(f"a page has 1 to {MAX_PAGE_ROWS} rows from offset 0 or more")
    query = filtered(project_id, f).subquery()
    key = query.c[{"grade": "mean"}.get(sort, sort)]
    order = [key.desc().nulls_last() if descending else key.asc().nulls_last(), query.c.position]
    with store.session() as s:
        total = int(s.scalar(select(func.count()).select_from(query)))
        rows = s.execute(select(query).order_by(*order).offset(offset).limit(limit)).mappings().all()
        positions = [r["position"] for r in rows]
        texts = {
            p: (prompt, response)
            for p, prompt, response in s.execute(
                select(
                    Item.position,
                    func.substr(_text("prompt"), 1, RECORD_TEXT_CHARS),
                    func.substr(_response(f), 1, RECORD_TEXT_CHARS),
                ).where(Item.project_id == project_id, Item.position.in_(positions))
            )
        }
        within = [] if f.criterion is None else [Grade.criterion == f.criterion]
        within += [] if f.target is None else [Grade.target == f.target]
        graders = s.execute(
            select(Grade.position, Grade.grader, Grade.label)
            .where(Grade.project_id == project_id, Grade.retracted_at.is_(None), Grade.position.in_(positions), *within)
            .order_by(Grade.id)
        ).all()
    by_item: dict[int, list[str]] = {}
    for position, grader, label in graders:
        by_item.setdefault(position, []).append(f"{grader}: {label}")
    frame = pd.DataFrame.from_records(
        [{**r, "prompt": texts[r["position"]][0], "response": texts[r["position"]][1]} for r in rows],
        columns=RECORD_COLUMNS,
    )
    frame["commented"] = frame["commented"].astype(bool)
    frame["graders"] = [", ".join(by_item.get(p, [])) for p in positions]
    return RecordPage(frame, total)


def export_rows(store: Store, project_id: int, f: RecordFilter) -> Iterator[dict[str, Any]]:
    """Every item of the filtered set in pool order, with its whole prompt and response, EXPORT_CHUNK at a time."""
    query = (
        filtered(project_id, f)
        .add_columns(_text("prompt").label("prompt"), _response(f).label("response"))
        .order_by(Item.position)
    )
    with store.session() as s:
        for chunk in s.execute(query, execution_options={"yield_per": EXPORT_CHUNK}).mappings().partitions():
            yield from (dict(row) for row in chunk)


def item_events(store: Store, project_id: int, position: int) -> pd.DataFrame:
    """The audit events about one item (those whose detail names its position), oldest first."""
    columns = ["id", "at", "actor", "action", "detail"]
    with store.session() as s:
        rows = s.execute(
            select(*(getattr(AuditEvent, c) for c in columns))
            .where(AuditEvent.project_id == project_id, AuditEvent.detail["position"].as_integer() == position)
            .order_by(AuditEvent.id)
        ).all()
    return pd.DataFrame.from_records(rows, columns=columns)


ITEM_GRADE_COLUMNS = ["id", "target", "criterion", "grader", "label", "value", "comment", "seconds", "created_at"]


def item_grades(store: Store, project_id: int, position: int) -> pd.DataFrame:
    """Every grade of one item, retracted ones too (``retracted_at`` set), oldest first."""
    columns = [*ITEM_GRADE_COLUMNS, "retracted_at"]
    with store.session() as s:
        rows = s.execute(
            select(*(getattr(Grade, c) for c in columns))
            .where(Grade.project_id == project_id, Grade.position == position)
            .order_by(Grade.id)
        ).all()
    return pd.DataFrame.from_records(rows, columns=columns)
