"""The API's grading cards: which item each caller was handed (a showing token per item, as the grade
page's, core.services.showings) and each project's design, kept in this process.

``GET next`` hands out a token bound to the item's position and id; ``POST grades`` and ``POST skip``
act on the item the token names and on no other, once (the token is spent when the grade is stored), and
only within TOKEN_TTL (the reservation's own life, core.services.grade_actions.DEFAULT_TTL). Tokens live in
this server process: after a restart, or on another replica, a caller asks ``next`` again and gets its
reserved item back with a new token (the reservation itself is the database's).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pandas as pd

from core.exports.project_export import project_design
from core.services.grade_actions import DEFAULT_TTL
from core.services.showings import Showing, Showings
from core.stats.allocation import Design
from core.store import ProjectInfo, Store

TOKEN_TTL = DEFAULT_TTL
KEEP_CALLERS = 4096
"""Callers (project, account) whose showings are remembered; the least recently used are forgotten."""
KEEP_DESIGNS = 16

_lock = threading.Lock()
_showings: OrderedDict[tuple[str, int, str], Showings] = OrderedDict()
_designs: OrderedDict[tuple[str, int, str, str], tuple[pd.DataFrame, Design]] = OrderedDict()


def _remember(cache: OrderedDict, key: tuple, make, keep: int):
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with _lock:
        value = cache.setdefault(key, value)
        while len(cache) > keep:
            cache.popitem(last=False)
    return value


def showings(store: Store, project_id: int, grader: str) -> Showings:
    """The showings of ``grader`` on the project (one Showings per caller, as per browser page)."""
    return _remember(_showings, (str(store.engine.url), project_id, grader), Showings, KEEP_CALLERS)


def show(store: Store, project_id: int, grader: str, position: int, item_id: str) -> Showing:
    """The showing of the item now handed to ``grader`` (the same token while it stays unused and fresh)."""
    cards = showings(store, project_id, grader)
    with _lock:
        showing = cards.current(position, item_id, False)
        if showing.seconds_since_released() > TOKEN_TTL.total_seconds():
            cards.use(showing.token)
            showing = cards.current(position, item_id, False)
    return showing


def shown(store: Store, project_id: int, grader: str, token: object, item_id: object) -> Showing | None:
    """The unused, fresh showing ``token`` names for that item; None for anything else."""
    cards = showings(store, project_id, grader)
    with _lock:
        showing = cards.find(token, item_id)
    if showing is None or showing.seconds_since_released() > TOKEN_TTL.total_seconds():
        return None
    return showing


def spend(store: Store, project_id: int, grader: str, token: str) -> None:
    """The press was stored: ``token`` names nothing any more."""
    cards = showings(store, project_id, grader)
    with _lock:
        cards.use(token)


def design(store: Store, project: ProjectInfo) -> tuple[pd.DataFrame, Design]:
    """A ready project's items and design (core.exports.project_export.project_design), computed once per
    preparation and stopping regime (the keys ui/plan.py caches them by)."""
    key = (str(store.engine.url), project.id, project.updated_at.isoformat(), str(project.settings.get("stopping")))
    return _remember(_designs, key, lambda: project_design(store, project), KEEP_DESIGNS)
