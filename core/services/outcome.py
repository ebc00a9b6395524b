"""What an action of a service returns to the page or the command that asked for it.

Every action in core/services takes the acting user, checks the rules, writes
its change with its audit event, and returns an ``Outcome`` (what happened,
in words to show) or raises ``Refused`` (nothing was changed; ``str()`` says
why, in the user's words). Bad input raises core.errors.InputError as
everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.services import auth


class Refused(Exception):
    """The action was not carried out; ``str()`` says why, and ``field`` names the request's field at fault
    where one is (``label``, ``labels.correct``: the API's error names it)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Outcome:
    """``status`` says what happened (e.g. saved, changed, skipped, created); ``message`` says it to a person;
    ``position`` is the item it concerned, for grading actions; ``grade_id`` the grade a grading action stored."""

    status: str
    message: str
    position: int | None = None
    grade_id: int | None = None


UNCHANGED = "unchanged"
"""A change that would store the grades and comment the grader's card holds already: nothing is written."""

STORED = ("saved", "changed", UNCHANGED)
"""The statuses of a grade press carried out, its grades stored (or found stored as sent), which so spent its
card's token (core.services.showings.press_once)."""


def permitted(store, actor: auth.User | None, action: str, project_id: int | None = None) -> auth.User:
    """``actor`` as the database has them now, if they may still perform ``action``; else Refused saying why.
    The command line's operator (auth.OPERATOR) may do everything: whoever can reach the database is its admin."""
    if actor is auth.OPERATOR:  # identity: a demo user who types the name "cli" is not the operator
        return actor
    try:
        return auth.recheck(store, actor, action, project_id)
    except auth.AccessDenied as exc:
        raise Refused(str(exc)) from None
