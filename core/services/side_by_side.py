"""The side-by-side card's rules: which target's response goes on which side, and whose grade is whose.

Every target's response to an item is on one card, in an order drawn at random for that item (from the
project's seed, its secret card key and the item's position, so the same card always shows the same order and
the order can be recorded with the grades), under neutral names: the graders never see which model wrote what. A grade given
to the response on side j is the grade of the target `order[j]` and is stored with that target
(grades.target).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.errors import InputError
from core.inputs.targets import response_column
from core.settings import ProjectSettings


def card_order(seed: int, position: int, targets: Sequence[str], key: str = "") -> tuple[str, ...]:
    """The targets in the order their responses are shown on item `position`'s card (left to right):
    a uniform random permutation drawn from (seed, position, the project's secret ``key``). Without the key the
    order follows from the seed and this code, which a grader could read: an API review named the model on
    39 of 39 cards from the seed the project's settings showed."""
    words = [int(key[i : i + 8], 16) for i in range(0, len(key), 8)]
    permutation = np.random.default_rng([int(seed), int(position), *words]).permutation(len(targets))
    return tuple(targets[i] for i in permutation)


def order_of(settings: ProjectSettings, position: int) -> tuple[str, ...]:
    """The card order of the item at ``position`` in a comparison project (`card_order` with its settings)."""
    return card_order(settings.seed, position, settings.targets, settings.card_key)


def new_card_key() -> str:
    """A comparison's secret card key (ProjectSettings.card_key): 128 random bits, hex."""
    return secrets.token_hex(16)


def side_name(side: int) -> str:
    """The neutral name graders see for side ``side`` (0, 1, ...): "Response 1", "Response 2", ..."""
    return f"Response {side + 1}"


def side_names(count: int) -> tuple[str, ...]:
    """The names of a card's ``count`` sides (`side_name`)."""
    return tuple(side_name(j) for j in range(count))


def labels_by_side(labels: Mapping[str, str], count: int) -> list[str]:
    """The labels of a card of ``count`` responses given by side name (``{"Response 1": "Correct", ...}``, as the
    HTTP API takes them), in side order; InputError naming the side for an unknown name or a side left ungraded."""
    names = side_names(count)
    unknown = sorted(set(labels) - set(names))
    if unknown:
        raise InputError(
            f"{unknown[0]!r} is not a response on this card",
            fix=f"use {', '.join(names)}",
            field=f"labels.{unknown[0]}",
        )
    for name in names:
        if not labels.get(name):
            raise InputError(f"{name} has no grade", fix="grade every response on the card", field=f"labels.{name}")
    return [labels[name] for name in names]


def grades_for_targets(order: Sequence[str], side_grades: Sequence[float]) -> dict[str, float]:
    """Target -> grade from the grades given side by side (side j's grade is order[j]'s); InputError unless
    every side has one grade in [0, 1]."""
    if len(side_grades) != len(order):
        raise InputError(
            f"{len(side_grades)} grades for a card of {len(order)} responses", fix="grade every response on the card"
        )
    grades = {}
    for name, target, grade in zip(side_names(len(order)), order, side_grades):
        if not 0.0 <= float(grade) <= 1.0:
            raise InputError(f"the grade of {name} is {grade!r}, not in [0, 1]", fix="map the scale onto [0, 1]")
        grades[target] = float(grade)
    return grades


def card_responses(item: Mapping[str, Any], order: Sequence[str]) -> list[str]:
    """The responses on an item's card, side by side in `order` (the stored item's `response_column`s):
    text only, never the target's name."""
    return [str(item.get(response_column(target)) or "") for target in order]
