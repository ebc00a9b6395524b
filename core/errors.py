"""The one exception type for bad user input."""

from __future__ import annotations

import re

_LINE_BREAKS = re.compile(r"\s*[\r\n\v\f\x85\u2028\u2029]+\s*")
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
HIDDEN = re.compile(f"{_LINE_BREAKS.pattern}|{_INVISIBLE.pattern}")
"""A line break, or a control, zero-width or bidirectional-override character: what `one_line` rewrites."""


def one_line(text: str) -> str:
    """`text` on one line: line breaks become a space, and control, zero-width and
    bidirectional-override characters (which could hide or reorder what a person
    reads) are written as escapes such as \\x0e or \\u202e."""
    text = _LINE_BREAKS.sub(" ", text.strip())
    return _INVISIBLE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


class InputError(ValueError):
    """Bad user input, with the place it was found and how to fix it.

    The message is meant for a person: the CLI prints it without a traceback
    and exits non-zero, the app shows it in an error box.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
        fix: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.row = row
        self.column = column
        self.fix = fix
        self.field = field or column  # the request field at fault, for the API's error ("settings.n_strata")
        super().__init__(self.describe())

    def describe(self) -> str:
        """One line: where, what is wrong, and what to do about it (see `one_line`)."""
        where = []
        if self.file:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column '{self.column}'")
        text = (", ".join(where) + ": " if where else "") + self.problem
        if self.fix:
            text += f". Fix: {self.fix}"
        return one_line(text)


class NotYet(InputError):
    """A request that is right but comes before the project can answer it (a report before any grade): the CLI
    prints it as any InputError; the API answers 409, the project's state, not 422, the request's form."""


class NotSaved(RuntimeError):
    """A write the database did not take (it is down, its disk is full): nothing of it was stored,
    everything stored before is intact, and the same action can simply be tried again. ``str()`` is
    the message for the person: what was not saved and to try again."""
