"""The API's grading cards: which item each caller was handed (a showing token per item, the Grade page's
own, core.services.showings) and each project's design, kept in this process.

``GET next`` hands out a token bound to the item's position and id; ``POST grades`` and ``POST skip``
act on the item the token names and on no other, once (the token is spent as the press begins, and given
back when it stores nothing: `press`), and
only within TOKEN_TTL (core.services.showings.TTL: a grade after the reservation lapsed is still the item's
while no other grader took it). The tokens are
the database's (core.services.showings): a token the Grade page issued is good here and the other way
round, on every replica and after a restart. Only the designs are kept in this process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import pandas as pd

from core.exports.project_export import project_design
from core.services import showings
from core.services.grading import budget_reached, queue_state
from core.services.outcome import Outcome
from core.services.showings import Showing
from core.stats.allocation import Design
from core.stats.queue import next_item
from core.store import ProjectInfo, Store, accounts

TOKEN_TTL = showings.TTL
KEEP_DESIGNS = 16

_lock = threading.Lock()
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


def show(store: Store, project_id: int, grader: str, position: int, item_id: str) -> Showing:
    """The showing of the item now handed to ``grader`` (the same token while it stays unused and fresh)."""
    return showings.current(store, project_id, grader, position, item_id, False)


def shown(store: Store, project_id: int, grader: str, token: object, item_id: object) -> Showing | None:
    """The grader's unused, fresh showing ``token`` names for that item; None for anything else."""
    return showings.find(store, project_id, grader, token, item_id)


def press(
    store: Store, project_id: int, grader: str, token: str, act: Callable[[], Outcome], kept: tuple[str, ...]
) -> Outcome:
    """``act`` once for ``token`` (core.services.showings.press_once): a press whose outcome's status is one of
    ``kept`` spends the token, so that it names nothing any more; of presses sent at once, one acts."""
    return showings.press_once(store, project_id, grader, token, act, lambda outcome: outcome.status in kept)


def design(store: Store, project: ProjectInfo) -> tuple[pd.DataFrame, Design]:
    """A ready project's items and design (core.exports.project_export.project_design), computed once per
    preparation and stopping regime (the keys ui/plan.py caches them by)."""
    key = (str(store.engine.url), project.id, project.updated_at.isoformat(), str(project.settings.stopping))
    return _remember(_designs, key, lambda: project_design(store, project), KEEP_DESIGNS)


def ahead(store: Store, project: ProjectInfo, design: Design, grader: str, position: int) -> int | None:
    """The item the queue would hand ``grader`` once the item at ``position`` is graded, with the items the
    other graders hold taken (core.services.reservations.claim's first grades); None when the budget would
    then be reached or nothing is free. A guess, reserved for nobody: a second grade of a double-graded item,
    the stopping rule, the new grade's effect on the queue's spreads or another grader's claim can make the
    next claim differ, and only that claim's card, with its token, can be graded."""
    settings = project.settings
    others = {p for p, who in accounts.reserved(store, project.id, slot=0).items() if who != grader}
    state = queue_state(store, project.id, others | {position}, settings)
    if budget_reached(state, settings.budget(design.N)):
        return None
    return next_item(design, state, settings.seed)
