"""Grading scales: the labels a grader can choose, their values in [0, 1] and keys.

Binary (correct/incorrect), Likert 1-5 mapped linearly onto [0, 1], or a
custom list of labels with values. Stored in a project's settings as
``{"kind": ..., "labels": [[label, value], ...]}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import InputError, hidden_character
from core.inputs.limits import MAX_LABEL_CHARS, check_length
from core.inputs.markup import has_image

MAX_LABELS = 9  # one digit key each


@dataclass(frozen=True)
class Choice:
    label: str
    value: float
    key: str  # keyboard shortcut, a single key Streamlit's st.button accepts


@dataclass(frozen=True)
class Scale:
    kind: str
    choices: tuple[Choice, ...]

    def value_of(self, label: str) -> float:
        for choice in self.choices:
            if choice.label == label:
                return choice.value
        raise KeyError(f"{label!r} is not a label of this {self.kind} scale")

    @property
    def values(self) -> tuple[float, ...]:
        """The grade values a grader can give, in the scale's order."""
        return tuple(c.value for c in self.choices)

    @property
    def binary(self) -> bool:
        """Whether every value is 0 or 1 (correct/incorrect, however labelled): grades of Bernoulli variance."""
        return all(c.value in (0.0, 1.0) for c in self.choices)

    @property
    def level(self) -> str:
        """Krippendorff's level of measurement for this scale: nominal for binary, ordinal for the others."""
        return "nominal" if self.kind == "binary" else "ordinal"

    @property
    def name(self) -> str:
        """The scale in words: "correct/incorrect", "Likert 1-5", or "custom" with its labels."""
        if self.kind == "binary":
            return "correct/incorrect"
        if self.kind == "likert":
            return f"Likert {self.choices[0].label}-{self.choices[-1].label}"
        return f"custom ({', '.join(c.label for c in self.choices)})"

    def value_words(self) -> str | None:
        """How a mean grade in [0, 1] reads on this scale, for one finer than correct/incorrect: its labels'
        values ("on [0, 1], 1 = 0, 2 = 0.25, 3 = 0.5, 4 = 0.75, 5 = 1"; `on_labels` places a mean among them);
        None for a binary scale (the share correct)."""
        if self.binary:
            return None
        return "on [0, 1], " + ", ".join(f"{c.label} = {c.value:g}" for c in self.choices)

    def on_labels(self, value: float) -> str | None:
        """A mean grade ``value`` in [0, 1] on the labels themselves where they are numbers that the values
        follow linearly ("1.44 on the 1-5 scale" for 0.110 on a Likert 1-5), else None."""
        try:
            numbers = [float(c.label) for c in self.choices]
        except ValueError:
            return None
        low, high = self.choices[0], self.choices[-1]
        if self.binary or numbers[0] == numbers[-1] or high.value == low.value:
            return None
        slope = (high.value - low.value) / (numbers[-1] - numbers[0])  # value per label unit
        if not all(math.isclose(c.value, low.value + slope * (n - numbers[0])) for c, n in zip(self.choices, numbers)):
            return None
        on = numbers[0] + (value - low.value) / slope
        return f"{on:.2f} on the {low.label}-{high.label} scale"

    def to_settings(self) -> dict:
        return {"kind": self.kind, "labels": [[c.label, c.value] for c in self.choices]}


BINARY = Scale("binary", (Choice("Correct", 1.0, "Y"), Choice("Incorrect", 0.0, "N")))
LIKERT = Scale("likert", tuple(Choice(str(k), (k - 1) / 4, str(k)) for k in range(1, 6)))
DEFAULT_SCALE = BINARY
"""The scale of a project that stores none (core.settings.ProjectSettings.scale's default)."""


def custom_scale(pairs: list[tuple[str, float]]) -> Scale:
    """A custom scale; raises InputError unless there are 2-9 distinct labels with values in [0, 1], at least two
    of those values different."""
    if not 2 <= len(pairs) <= MAX_LABELS:
        raise InputError(
            f"a custom scale needs 2 to {MAX_LABELS} labels, got {len(pairs)}",
            fix="write one 'label = value' per line",
        )
    seen: set[str] = set()
    for row, (label, value) in enumerate(pairs, start=1):
        if not label:
            raise InputError("empty label", row=row, fix="give every line a label before '='")
        check_length(label, MAX_LABEL_CHARS, f"label {row}", row=row)
        if (hidden := hidden_character(label)) is not None:  # "Good" and "Good\u200b": two labels shown as one
            raise InputError(
                f"the label holds the invisible character {hidden}, which would show it as another",
                row=row,
                fix="type the label of visible characters on one line",
            )
        if has_image(label):
            raise InputError(
                "the label holds a markdown image, which every grader's browser would fetch",
                row=row,
                fix="remove the ![...](...) part",
            )
        if label in seen:
            raise InputError(f"label {label!r} appears twice", row=row, fix="make every label unique")
        if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1):
            raise InputError(f"value {value!r} of {label!r} is not in [0, 1]", row=row, fix="use a number from 0 to 1")
        seen.add(label)
    if len({float(v) for _, v in pairs}) < 2:  # every grade the same number: no estimate could vary
        raise InputError(
            f"every label of the scale has the value {float(pairs[0][1]):g}",
            fix="give the labels at least two different values, e.g. Wrong = 0 and Right = 1",
        )
    return Scale("custom", tuple(Choice(name, float(v), str(k)) for k, (name, v) in enumerate(pairs, start=1)))


def parse_custom_labels(text: str) -> Scale:
    """Parse lines of ``label = value`` (e.g. ``Partly right = 0.5``) into a custom scale."""
    pairs: list[tuple[str, float]] = []
    for row, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label, sep, value = line.rpartition("=")
        if not sep:
            raise InputError(
                f"{line.strip()!r} has no '='", row=row, fix="write 'label = value', e.g. 'Partly right = 0.5'"
            )
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"{value.strip()!r} is not a number", row=row, fix="use a number from 0 to 1") from None
        pairs.append((label.strip(), number))
    return custom_scale(pairs)


def scale_from_settings(values: Mapping[str, Any]) -> Scale:
    """The scale stored in a project's settings as JSON (DEFAULT_SCALE when none is stored); typed settings give
    theirs as ``ProjectSettings.grading_scale``."""
    stored = values.get("scale")
    if not stored:
        return DEFAULT_SCALE
    named = {BINARY.kind: BINARY, LIKERT.kind: LIKERT}
    if isinstance(stored, Mapping) and stored.get("kind") in named:
        own = named[stored["kind"]].to_settings()["labels"]
        if "labels" in stored and stored["labels"] != own:  # stored, never shown: graders saw 1-5 (a user's review)
            raise InputError(
                f"a {stored['kind']} scale has its own labels, not {stored['labels']!r}",
                fix='give your own labels as {"kind": "custom", "labels": [["Good", 1], ["Bad", 0]]}',
                field="scale",
            )
        return named[stored["kind"]]
    try:
        return custom_scale(_label_pairs(stored))
    except InputError as exc:  # its row counts the scale's labels, not a file's rows ("row 1" of a JSON object)
        if exc.row is None:
            raise
        raise InputError(f"label {exc.row} of the scale: {exc.problem}", fix=exc.fix, field="scale") from None


def _label_pairs(stored: Any) -> list[tuple[str, float]]:
    """A custom scale's stored ``labels`` as (label, value) pairs; InputError naming the shape expected when the
    stored scale is not ``{"kind": "custom", "labels": [[label, value], ...]}``."""
    labels = stored.get("labels") if isinstance(stored, Mapping) else None
    shape_fix = 'write a scale as {"kind": "binary"}, {"kind": "likert"} or {"kind": "custom", "labels": [["Good", 1], ["Bad", 0]]}'
    if not isinstance(labels, (list, tuple)):
        raise InputError(f"the scale {stored!r} has the wrong shape", fix=shape_fix)
    pairs = []
    for row, pair in enumerate(labels, start=1):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and _is_value(pair[1])):
            raise InputError(f"label {pair!r} is not a [label, value] pair", row=row, fix=shape_fix)
        pairs.append((str(pair[0]), float(pair[1])))
    return pairs


def _is_value(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
