"""Rubrics: several questions (criteria) asked of every item, each with its own scale.

A project's settings store a rubric as ``criteria``, a list of ``{"name", "scale", "guidelines",
"required"}`` (``scale`` as core.scales stores one), with ``primary_criterion`` naming the criterion the
design, the stopping rule and the forecast read, and ``allocate_for`` saying whether the queue allocates
for that criterion alone (``primary``) or for all of them together (``all``: the compromise allocation of
core.stats.allocation.compromise_spreads). A project with no criteria asks one question, stored under the
criterion "" (grades.criterion), as before rubrics existed.

A grader answers every criterion of one item on one card and one press submits them all, in one
transaction (core.store.Store.add_rubric_grades): a grade per criterion, keyed (item, target, criterion,
grader). The primary criterion is required, so an item counts as graded exactly when its primary grade
exists.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import InputError, hidden_character
from core.inputs.limits import MAX_NAME_CHARS, check_length
from core.inputs.markup import has_image
from core.scales import DEFAULT_SCALE, Scale, scale_from_settings

ONE_QUESTION = ""
"""The criterion of a project without a rubric (grades.criterion's default)."""

PRIMARY, ALL = "primary", "all"
ALLOCATE_FOR = (PRIMARY, ALL)
"""What the queue allocates for in a rubric project: the primary criterion, or every criterion together."""

MAX_CRITERIA = 9
"""The most criteria one card asks (a card of more would not fit one screen with its keys)."""


@dataclass(frozen=True)
class Criterion:
    """One question of a rubric: its name (grades.criterion), scale, guidelines and whether every card must
    answer it."""

    name: str
    scale: Scale
    guidelines: str = ""
    required: bool = True

    def to_settings(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scale": self.scale.to_settings(),
            "guidelines": self.guidelines,
            "required": self.required,
        }


@dataclass(frozen=True)
class Rubric:
    """A project's criteria, in the order the card shows them, and the one the design reads."""

    criteria: tuple[Criterion, ...]
    primary: str
    allocate_for: str = PRIMARY

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.criteria)

    def criterion(self, name: str) -> Criterion:
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a criterion of this rubric")

    def card_values(self, labels: Mapping[str, str]) -> list[tuple[str, float, str]]:
        """(criterion, value, label) for one card's answers, in the rubric's order; InputError for an unknown
        criterion, a label not on its criterion's scale, or a required criterion left unanswered."""
        unknown = sorted(set(labels) - set(self.names))
        if unknown:
            raise InputError(
                f"{unknown[0]!r} is not a criterion of this project",
                fix=f"use one of {', '.join(self.names)}",
                field=f"labels.{unknown[0]}",
            )
        card = []
        for c in self.criteria:
            label = labels.get(c.name)
            if label is None or label == "":
                if c.required:
                    raise InputError(
                        f"criterion {c.name!r} has no grade",
                        fix="answer every required criterion",
                        field=f"labels.{c.name}",
                    )
                continue
            try:
                card.append((c.name, c.scale.value_of(str(label)), str(label)))
            except KeyError:
                choices = ", ".join(ch.label for ch in c.scale.choices)
                raise InputError(
                    f"{label!r} is not a grade of criterion {c.name!r}",
                    fix=f"use one of {choices}",
                    field=f"labels.{c.name}",
                ) from None
        return card


def rubric_from_settings(
    criteria: Sequence[Mapping[str, Any]], primary: str = "", allocate_for: str = PRIMARY
) -> Rubric | None:
    """The rubric stored in a project's settings (None for a one-question project: no criteria).

    InputError, naming the criterion (its row, from 1) and the fix, for a missing or repeated name, a
    malformed scale, more than MAX_CRITERIA criteria, a primary criterion that is not one of them or is not
    required, or an unknown ``allocate_for``. ``primary`` "" means the first criterion."""
    if not criteria:
        if primary:
            raise InputError(f"primary criterion {primary!r} given without criteria", fix="define the criteria first")
        return None
    if not isinstance(criteria, Sequence) or isinstance(criteria, str):
        raise InputError("setting criteria is not a list", fix="give a list of criteria, each with a name and a scale")
    if len(criteria) > MAX_CRITERIA:
        raise InputError(f"{len(criteria)} criteria, more than {MAX_CRITERIA}", fix="ask at most 9 questions a card")
    parsed: list[Criterion] = []
    for row, stored in enumerate(criteria, start=1):
        parsed.append(_criterion(row, stored, {c.name for c in parsed}))
    names = [c.name for c in parsed]
    chosen = primary or names[0]
    if chosen not in names:
        raise InputError(f"primary criterion {chosen!r} is not one of {', '.join(names)}", fix="name one of them")
    if not parsed[names.index(chosen)].required:
        raise InputError(f"primary criterion {chosen!r} is optional", fix="make the primary criterion required")
    if allocate_for not in ALLOCATE_FOR:
        raise InputError(f"allocate_for = {allocate_for!r} is not valid", fix=f"use {PRIMARY} or {ALL}")
    return Rubric(tuple(parsed), chosen, allocate_for)


CRITERION_KEYS = ("name", "scale", "guidelines", "required")
"""The keys a criterion is written with (`Criterion.to_settings`); another is refused by name."""


def _criterion(row: int, stored: Mapping[str, Any], taken: set[str]) -> Criterion:
    if not isinstance(stored, Mapping):
        raise InputError("a criterion is not an object", row=row, fix="give each criterion a name and a scale")
    unknown = sorted(set(stored) - set(CRITERION_KEYS))
    if unknown:  # a typo ("requred") left the criterion required without a word (an integrator's review)
        close = difflib.get_close_matches(str(unknown[0]), CRITERION_KEYS, n=1)
        raise InputError(
            f"a criterion has the unknown key {unknown[0]!r}",
            row=row,
            fix=f"did you mean {close[0]!r}?" if close else f"use only {', '.join(CRITERION_KEYS)}",
        )
    name = str(stored.get("name") or "").strip()
    if not name:
        raise InputError("a criterion has no name", row=row, fix="name every criterion")
    check_length(name, MAX_NAME_CHARS, "the criterion's name", row=row)
    if name in taken:
        raise InputError(f"criterion {name!r} appears twice", row=row, fix="give every criterion its own name")
    if (hidden := hidden_character(name)) is not None:  # "Accuracy" and "Accuracy\u200b" shown as one
        raise InputError(
            f"the criterion's name holds the invisible character {hidden}",
            row=row,
            fix="type the name of visible characters on one line",
        )
    if has_image(name):  # the Dashboard shows the name as markdown: every viewer's browser fetched the image
        raise InputError("the criterion's name holds a markdown image", row=row, fix="remove the ![...](...) part")
    try:
        scale = scale_from_settings({"scale": stored.get("scale")}) if stored.get("scale") else DEFAULT_SCALE
    except InputError as exc:  # core.scales names the shape or the label at fault
        raise InputError(f"the scale of {name!r} is malformed ({exc.problem})", row=row, fix=exc.fix) from None
    required = stored.get("required", True)
    if not isinstance(required, bool):
        raise InputError(f"required = {required!r} of {name!r} is not true or false", row=row, fix="use true or false")
    return Criterion(name, scale, str(stored.get("guidelines") or ""), required)
