"""Which item a grader's card shows: a token per showing, so a press names exactly that item.

Every time the Grade page (its one-response card or its side-by-side card), the fast grading route or the
HTTP API puts an item on a grader's card it is given a showing (``current``): a random token bound to the
project, the grader, the item's position and id,
kept in the database (core.store.showings) with the server's time of release and an expiry of TTL, a
working day: a grader who reads a long item past the reservation's 10 minutes still grades the item on the
card, which core.services.grade_actions holds for them again unless another grader took it meanwhile
(reservations.LATE); with the reservation's life, such a grade was dropped as "ignored" and the item came back
(grader's review). The browser or client sends the token back with every press; ``match`` (and
``find``, for callers that hold only the token and the item's id) returns the showing only when the token is
one issued to that grader on that project for that very position and id, unused and unexpired. A press for
an item no longer on screen therefore acts, at most, on the item it names (the caller then checks that the
item is still the grader's), never on whatever item happens to be current; a second press with the same
token (a key pressed twice, a replayed message, two sent at once) finds it used (``press_once``), an old one finds it expired, and a
token issued to another grader names nothing, and an undo ends every card shown before it (``withdraw``): the
undo puts another item on the grader's card, so a press from a tab or client still showing the old card is
refused rather than grading an item the grader has moved back from. A showing's release time bounds the viewing time the browser
reports (core.services.grading.viewing_seconds).

Because the tokens live in the database, a token the Grade page issued is checked by the API and the fast
route and the other way round, on every replica, after a restart. Each card costs one indexed read and at
most one insert (which purges the expired rows); each press one indexed read and one indexed update.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.services.outcome import Outcome, Refused
from core.store import Store
from core.store import showings as table
from core.store.models import utcnow

TTL = timedelta(hours=12)
"""How long a showing's token names its item (module docstring): longer than the reservation, whose lapse lets
another grader take the item, not the card's own grader grade it."""

USED = "that card was pressed already (the same press sent twice, or from another tab): load the next card"
"""Why a press with a spent token is refused."""


@dataclass(frozen=True)
class Showing:
    token: str
    position: int
    item_id: str
    reviewing: bool
    released_at: datetime = field(default_factory=utcnow, compare=False)
    """When the server released the card with this item (timezone-aware, the server's clock)."""

    def seconds_since_released(self) -> float:
        """The server's measure of how long the grader can have seen the item (core.services.grading.viewing_seconds)."""
        return (utcnow() - self.released_at).total_seconds()


def _showing(row: table.ShowingRow) -> Showing:
    return Showing(row.token, row.position, row.item_id, row.reviewing, row.released_at)


def _fresh(row: table.ShowingRow | None, project_id: int, grader: str) -> bool:
    """Whether ``row`` is an unexpired token of this grader on this project, used or not."""
    return row is not None and row.project_id == project_id and row.grader == grader and utcnow() < row.expires_at


def _live(row: table.ShowingRow | None, project_id: int, grader: str) -> bool:
    """Whether ``row`` is a token of this grader on this project that a press may still use."""
    return _fresh(row, project_id, grader) and row.used_at is None


def current(store: Store, project_id: int, grader: str, position: int, item_id: str, reviewing: bool) -> Showing:
    """The showing of this item on the grader's card: their latest one of this item if it is unused and unexpired
    (a rerun, a reload, a second tab or an API ``next`` keep the token; so does a card of an earlier item shown
    between, which left a second live token on the item held when a new one was made: an API review), else a new
    one."""
    same = (position, item_id, reviewing)
    readers = (
        lambda: table.latest(store, project_id, grader),
        lambda: table.unused_of_item(store, project_id, grader, position),
    )
    for read in readers:  # the second read only where the latest is another card (one query a card otherwise)
        kept = read()
        if _live(kept, project_id, grader) and (kept.position, kept.item_id, kept.reviewing) == same:
            return _showing(kept)
    released = utcnow()
    row = table.ShowingRow(
        secrets.token_urlsafe(12), project_id, grader, position, item_id, reviewing, released, released + TTL, None
    )
    table.add(store, row)
    return _showing(row)


def match(
    store: Store, project_id: int, grader: str, token: object, position: object, item_id: object
) -> Showing | None:
    """The grader's unused, unexpired showing with this token, position and item id; None for anything else."""
    showing = find(store, project_id, grader, token, item_id)
    return showing if showing is not None and showing.position == position else None


def find(store: Store, project_id: int, grader: str, token: object, item_id: object) -> Showing | None:
    """The grader's unused, unexpired showing with this token and item id, whatever its position; None for
    anything else (for callers that hold only the token and the item's id: the HTTP API)."""
    row = table.find(store, token) if isinstance(token, str) and token else None
    if not _live(row, project_id, grader) or row.item_id != item_id:
        return None
    return _showing(row)


def item_of(store: Store, project_id: int, grader: str, token: object) -> str | None:
    """The item id the grader's unused, unexpired showing ``token`` was given with; None for anything else (a
    request naming another item with it is told which, `find` saying only that nothing matched)."""
    row = table.find(store, token) if isinstance(token, str) and token else None
    return row.item_id if _live(row, project_id, grader) else None


def spent(store: Store, project_id: int, grader: str, token: object, item_id: object) -> Showing | None:
    """The grader's showing with this token and item id whose press was stored (used), unexpired, and the last
    pressed of that item's cards; None for anything else: what a press sent again names (the HTTP API answers a
    repeat of the stored press as saved). A token whose press an undo took back, the item then graded on a later
    card, named that card's grade as its own press (an integrator's review)."""
    row = _used_row(store, project_id, grader, token)
    if row is None or row.item_id != item_id:
        return None
    if table.last_used(store, project_id, grader, row.position) != row.used_at:
        return None
    return _showing(row)


PRESSING = timedelta(seconds=10)
"""How long after its token was spent a press counts as still being stored (`pressing`): a press stores its grade
in well under a second; an older spent token whose grade is gone was taken back by an undo."""


def pressing(store: Store, project_id: int, grader: str, token: object) -> bool:
    """Whether the grader's ``token`` was spent by a press in the last PRESSING, whose grade may still be being
    stored (`press_once` spends the token first): a press sent again at once, after a client's timeout, arrives
    then, and is told to send it again (an integrator's review: it was refused, "names none of your current
    items", while the first press was storing the grade)."""
    row = _used_row(store, project_id, grader, token)
    return row is not None and utcnow() - row.used_at < PRESSING


TAKEN_BACK = (
    "that card's press was stored, then taken back by your undo: nothing of it stands; GET next gives the item's "
    "card again to press anew"
)
"""Why a press sent again with a token whose press an undo took back is refused (`taken_back`)."""


def taken_back(store: Store, project_id: int, grader: str, token: object) -> bool:
    """Whether the grader undid a grade or a skip after their spent ``token``'s press: where nothing that press
    stored stands, the undo took it back (an undo acts on a stored action, the grader's last). Without it, the
    press sent again within PRESSING of the token being spent was told it might still be being stored, a 503 a
    client retries as the database busy (an API review)."""
    row = _used_row(store, project_id, grader, token)
    return row is not None and store.undone_since(project_id, grader, row.used_at)


def _used_row(store: Store, project_id: int, grader: str, token: object) -> table.ShowingRow | None:
    """The row of the grader's unexpired ``token`` where a press spent it (`spent`, `pressing`, `taken_back`);
    None for anything else."""
    row = table.find(store, token) if isinstance(token, str) and token else None
    return row if _fresh(row, project_id, grader) and row.used_at is not None else None


def use(store: Store, project_id: int, grader: str, token: str) -> bool:
    """The grader's press was stored: their token is spent, for every page and client (False when it was spent
    already, or is not theirs)."""
    return table.spend(store, project_id, grader, token, utcnow())


def withdraw(store: Store, project_id: int, grader: str) -> None:
    """Every card the grader was shown on the project and has not pressed stops naming its item (an undo changed
    which card is current: module docstring); spent tokens keep answering a press sent again."""
    table.expire_unused(store, project_id, grader, utcnow())


def press_once(
    store: Store,
    project_id: int,
    grader: str,
    token: str,
    act: Callable[[], Outcome],
    kept: Callable[[Outcome], bool],
) -> Outcome:
    """One press with the grader's ``token``: the token is spent first (``use``, one atomic update), so that of
    presses sent at once with it exactly one acts and the others are Refused (USED), and it is given back where
    ``act`` raises or its outcome is not ``kept`` (a press too fast, say: the card can still be graded). Spent
    after the act instead, two presses sent together each passed the check and each stored a grade: three
    answers of "saved" for one token, one of them for a grade the project no longer kept."""
    if not use(store, project_id, grader, token):
        raise Refused(USED)
    try:
        outcome = act()
    except BaseException:
        table.unspend(store, project_id, grader, token)
        raise
    if not kept(outcome):
        table.unspend(store, project_id, grader, token)
    return outcome
