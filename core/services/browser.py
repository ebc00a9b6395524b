"""The record browser: every item of a project, filtered, sorted and paged, one item's whole record, and
the filtered set exported with its texts. For admins, viewers and reviewers (auth.BROWSE), each call
checking the user again (core.services.outcome.permitted); the export is audited.

The filtering, sorting and paging are SQL (core.store.records), so a page of a pool of 10^5 items
costs the database one indexed query and returns only its rows (benchmarks/browser.md).

In a rubric project (core.rubric) the browser reads one criterion at a time (``applied``: the primary unless
another is chosen): an item's grades, its grade filter, disagreement and final grade are that criterion's,
so each item is one row however many criteria its graders answered; the item view lists every grade with
its criterion, and the export names the criterion its columns read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from core.inputs.io import spreadsheet_safe
from core.services import audit, auth
from core.services.outcome import Refused, permitted
from core.store import Store, records, reviews
from core.store.records import SORTS, RecordFilter, RecordPage

__all__ = ["SORTS", "RecordFilter", "RecordPage", "ItemRecord", "applied", "check", "page", "record", "export_csv"]


def applied(store: Store, project_id: int, filters: RecordFilter) -> RecordFilter:
    """The filters as the browser applies them: in a rubric project with the primary criterion when none is
    chosen (Refused for a criterion the rubric lacks); a one-question project's unchanged."""
    rubric = store.project(project_id).settings.rubric
    if rubric is None:
        return filters
    if filters.criterion is None:
        return replace(filters, criterion=rubric.primary)
    if filters.criterion not in rubric.names:
        raise Refused(f"{filters.criterion!r} is not a criterion of this project")
    return filters


def check(store: Store, actor: auth.User | None, project_id: int) -> auth.User:
    """The actor, allowed to browse the project; Refused otherwise, and in a comparison for whoever may not see
    its Dashboard (a reviewer): the records name the model of every grade, and a reviewer settles a comparison's
    responses blind to them (core.services.review). Where one Records page is allowed, the other is too."""
    user = permitted(store, actor, auth.BROWSE, project_id)
    if store.project(project_id).settings.compares and not auth.may(store, user, auth.VIEW_DASHBOARD, project_id):
        raise Refused(
            "a comparison's records name the model of every grade, and reviewers settle its responses blind to "
            "them: review on the Review page"
        )
    return user


def page(
    store: Store,
    actor: auth.User | None,
    project_id: int,
    filters: RecordFilter,
    *,
    sort: str = "position",
    descending: bool = False,
    number: int = 1,
    size: int = 50,
) -> RecordPage:
    """Page ``number`` (from 1) of ``size`` rows of the filtered set (core.store.records.page)."""
    check(store, actor, project_id)
    if number < 1:
        raise Refused("pages are numbered from 1")
    filters = applied(store, project_id, filters)
    try:
        return records.page(
            store, project_id, filters, sort=sort, descending=descending, offset=(number - 1) * size, limit=size
        )
    except ValueError as exc:
        raise Refused(str(exc)) from None


@dataclass(frozen=True)
class ItemRecord:
    """One item's whole record: the item, all its grades (retracted ones with ``retracted_at``), its
    reviews, flags and the audit events about it."""

    item: dict[str, Any]
    grades: pd.DataFrame
    reviews: pd.DataFrame
    flags: pd.DataFrame
    events: pd.DataFrame


def record(store: Store, actor: auth.User | None, project_id: int, position: int) -> ItemRecord:
    """The item at ``position`` with everything recorded about it."""
    check(store, actor, project_id)
    try:
        item = store.item(project_id, position)
    except KeyError:
        raise Refused("no such item") from None
    return ItemRecord(
        item=item,
        grades=records.item_grades(store, project_id, position),
        reviews=reviews.reviews(store, project_id, [position]),
        flags=reviews.flags(store, project_id, [position]),
        events=records.item_events(store, project_id, position),
    )


def export_csv(store: Store, actor: auth.User | None, project_id: int, filters: RecordFilter) -> bytes:
    """The filtered set as CSV (UTF-8), one row per item with its whole prompt and response, every text
    cell made inert for spreadsheets (in a rubric project with the ``criterion`` its grade columns read);
    audited as an export of the browser's selection."""
    user = check(store, actor, project_id)
    filters = applied(store, project_id, filters)
    rows = pd.DataFrame.from_records(
        list(records.export_rows(store, project_id, filters)), columns=records.RECORD_COLUMNS
    )
    if store.project(project_id).settings.rubric is not None:
        rows.insert(rows.columns.get_loc("stratum") + 1, "criterion", filters.criterion)
    audit.record(store, user, audit.EXPORTED, project_id, what="records", filters=_described(filters), rows=len(rows))
    return rows.map(spreadsheet_safe).to_csv(index=False).encode("utf-8")


def _described(filters: RecordFilter) -> dict[str, Any]:
    """The filters that are on, for the audit event."""
    return {k: v for k, v in vars(filters).items() if v not in (None, "")}
