"""The one exception type for bad user input."""
from __future__ import annotations


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
    ) -> None:
        self.problem = problem
        self.file = file
        self.row = row
        self.column = column
        self.fix = fix
        super().__init__(self.describe())

    def describe(self) -> str:
        """One line: where, what is wrong, and what to do about it."""
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
        return text
