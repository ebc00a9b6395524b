"""The audit trail: who changed what and when, and its export for admins.

Grades carry their grader and time themselves (core.store, never deleted,
only retracted); the trail adds what grades cannot say: sign-ins, changed
grades, undos, skips, settings changes, uploads, preparation starts,
deletions, account and assignment changes, exports, and which project a user opened (once per browser tab). Events are appended, never edited.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from core.inputs.io import spreadsheet_safe
from core.services.auth import User
from core.services.outcome import permitted
from core.store import Store, accounts
from core.store.reviews import FLAGGED, REVIEWED
from core.store.store import COMMENTED, GRADE_CHANGED, SKIP, UNDO

# event names the app records (sign_in / sign_in_failed come from core.services.auth; GRADE_CHANGED, UNDO,
# COMMENTED and SKIP, REVIEWED and FLAGGED are written by the store in the transaction of the change itself)
__all__ = ["COMMENTED", "FLAGGED", "GRADE_CHANGED", "REVIEWED", "SKIP", "UNDO", "record", "trail", "trail_csv"]
SETTINGS_CHANGED = "settings_changed"
PROJECT_CREATED = "project_created"
PROJECT_DELETED = "project_deleted"
PREPARATION_STARTED = "preparation_started"
ACCOUNT_CREATED = "account_created"
ACCOUNT_CHANGED = "account_changed"
ACCOUNT_UNLOCKED = "account_unlocked"  # failed sign-ins cleared (core.services.team.unlock)
MEMBER_ADDED = "member_added"
MEMBER_REMOVED = "member_removed"
EXPORTED = "exported"
PROJECT_OPENED = "project_opened"  # a page opened with the project (core.services.navigation): its last use


OPEN_DEMO_VISITORS = "(open demo)"
"""The name an open-demo visitor (no account) acts and opens projects under until they type one: a new tab has
no name typed yet, and every visitor is the same anonymous admin of the same projects, so the demo remembers one
last-used project for all (core.services.navigation), and the trail names them so (a project created before a
name was typed had a blank actor: a manager's review)."""


def record(store: Store, user: User, action: str, project_id: int | None = None, **detail: Any) -> None:
    """Append ``action`` by ``user`` (on ``project_id``; an open-demo visitor with no name typed, under
    OPEN_DEMO_VISITORS) with ``detail`` to the trail."""
    accounts.record_event(store, user.name or OPEN_DEMO_VISITORS, action, project_id=project_id, detail=detail)


def exported(store: Store, actor: User | None, what: str, project_id: int | None, action: str) -> None:
    """Record that ``actor`` downloaded ``what`` (an export needing ``action``), if they still may (else Refused)."""
    record(store, permitted(store, actor, action, project_id), EXPORTED, project_id, what=what)


def trail(store: Store, project_id: int | None = None, last: int | None = None) -> pd.DataFrame:
    """The trail, oldest first (one project's when given; its ``last`` events when given): id, at, actor, action,
    project_id, detail."""
    return accounts.events(store, project_id, last)


def trail_size(store: Store, project_id: int | None = None) -> int:
    """How many events the trail holds (one project's when given)."""
    return accounts.event_count(store, project_id)


def trail_csv(events: pd.DataFrame) -> bytes:
    """CSV (UTF-8) of the trail; detail as JSON text; every text cell made inert for spreadsheets."""
    table = events.assign(
        at=pd.to_datetime(events["at"], utc=True).map(lambda t: t.isoformat()),
        detail=events["detail"].map(lambda d: json.dumps(d or {}, ensure_ascii=False, sort_keys=True)),
    )
    return table.map(spreadsheet_safe).to_csv(index=False).encode("utf-8")
