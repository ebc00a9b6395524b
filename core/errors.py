"""The one exception type for bad user input."""

from __future__ import annotations

import functools
import re
import unicodedata

_LINE_BREAKS = re.compile(r"\s*[\r\n\v\f\x85\u2028\u2029]+\s*")
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_BLANK_LOOKING = "\u034f\u115f\u1160\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef"
"""Characters that show as nothing or as blank without being formats or spaces: the combining grapheme joiner,
the Hangul fillers, the Mongolian variation selectors, the Braille blank and the variation selectors."""


@functools.cache
def _hidden() -> re.Pattern[str]:
    """`hidden_character`'s pattern, its class built once per process from the Unicode database (about half a
    second): every control, format, line or paragraph separator, private-use or unassigned character, every
    space but U+0020, and _BLANK_LOOKING."""
    ranges: list[str] = []
    start = None
    for code in range(0x110001):
        category = unicodedata.category(chr(code)) if code <= 0x10FFFF else ""
        hidden = category in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs") or (category == "Zs" and code != 0x20)
        if hidden and start is None:
            start = code
        elif not hidden and start is not None:
            ranges.append(f"\\U{start:08x}-\\U{code - 1:08x}")
            start = None
    return re.compile(f"[{''.join(ranges)}{_BLANK_LOOKING}]")


def hidden_character(text: str) -> str | None:
    """The first character of ``text`` a reader cannot see or tell from a space (a control, format, zero-width,
    bidirectional, variation-selector or filler character, a space other than U+0020, a line break), written
    as an escape such as \\u2060; None where there is none. Two names that differ only by one show as one name
    (ids, labels, criteria, models: security reviews)."""
    found = _hidden().search(text)
    return None if found is None else ascii(found.group())[1:-1]


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


class NotThisKind(InputError):
    """A request that is right but that this kind of project does not answer (one score of a comparison, whose
    models' scores are its report's): the CLI prints it as any InputError; the API answers 409, as GET reading
    does for a comparison, not 422 (an integrator's review: the same refusal was both)."""


class Taken(InputError):
    """A name that is right but already used by another (a project's, an account's): the CLI prints it as any
    InputError; the API answers 409, a conflict with what is stored, not 422, the request's form (an integrator's
    review: a create whose name was taken read as a malformed request)."""


class NotSaved(RuntimeError):
    """A write the database did not take (it is down, its disk is full): nothing of it was stored,
    everything stored before is intact, and the same action can simply be tried again. ``str()`` is
    the message for the person: what was not saved and to try again."""
