"""Which item the grader's browser shows: a token per showing, so a press names exactly that item.

Every time the grade page puts an item on the card it is given a showing (a
random token bound to the item's position and id). The browser sends the
token back with every key press; ``match`` returns the showing only when the
token is one this page issued for that very position and id and has not been
used yet. A press for an item no longer on screen therefore acts, at most, on
the item it names (the caller then checks that the item is still the
grader's), never on whatever item happens to be current; a second press with
the same token (a key pressed twice, a replayed message) finds it used. A showing
remembers when the server released it, which bounds the viewing time the
browser reports (core.services.grading.viewing_seconds).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field

KEEP = 16
"""Showings remembered per page; older tokens are refused like unknown ones."""


@dataclass(frozen=True)
class Showing:
    token: str
    position: int
    item_id: str
    reviewing: bool
    released_at: float = field(default_factory=time.monotonic, compare=False)
    """When the server released the card with this item to the browser (time.monotonic)."""

    def seconds_since_released(self) -> float:
        """The server's measure of how long the grader can have seen the item (core.services.grading.viewing_seconds)."""
        return time.monotonic() - self.released_at


class Showings:
    """The showings of one browser page (kept in its Streamlit session)."""

    def __init__(self) -> None:
        self._issued: OrderedDict[str, Showing] = OrderedDict()
        self._used: set[str] = set()

    def current(self, position: int, item_id: str, reviewing: bool) -> Showing:
        """The showing of this item: the latest one if it is still this item and unused, else a new one."""
        if self._issued:
            latest = next(reversed(self._issued.values()))
            same = (latest.position, latest.item_id, latest.reviewing) == (position, item_id, reviewing)
            if same and latest.token not in self._used:
                return latest
        showing = Showing(secrets.token_urlsafe(12), position, item_id, reviewing)
        self._issued[showing.token] = showing
        while len(self._issued) > KEEP:
            old, _ = self._issued.popitem(last=False)
            self._used.discard(old)
        return showing

    def match(self, token: object, position: object, item_id: object) -> Showing | None:
        """The unused showing with this token, position and item id; None for anything else."""
        showing = self._issued.get(token) if isinstance(token, str) else None
        if showing is None or token in self._used:
            return None
        if showing.position != position or showing.item_id != item_id:
            return None
        return showing

    def find(self, token: object, item_id: object) -> Showing | None:
        """The unused showing with this token and item id, whatever its position; None for anything else (for
        callers that hold only the token and the item's id: the HTTP API)."""
        showing = self._issued.get(token) if isinstance(token, str) else None
        return None if showing is None else self.match(token, showing.position, item_id)

    def use(self, token: str) -> None:
        """The press was stored: the token is spent."""
        self._used.add(token)
