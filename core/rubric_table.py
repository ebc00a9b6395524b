"""A rubric as a table, the form the Projects page edits and the CLI reads from a CSV file.

One row per criterion: ``name``, ``scale`` (binary, likert or custom), ``labels`` (a custom scale's
``label = value`` pairs separated by ``;``, e.g. ``Wrong = 0; Partly = 0.5; Right = 1``), ``guidelines`` and
``required``. ``rubric_settings`` turns the rows into the settings core.rubric reads (``criteria``,
``primary_criterion``, ``allocate_for``), checked there; ``table_rows`` gives stored criteria back as rows.
``rubric_from_file`` reads a JSON list of criteria as the settings store them, or the table as CSV.

A project's questions (its scale, or its rubric) are fixed once it has grades, since grades are keyed by
criterion name and read on their criterion's scale: ``check_questions_change``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from core.errors import InputError
from core.rubric import PRIMARY, rubric_from_settings
from core.scales import BINARY, LIKERT, parse_custom_labels

COLUMNS = ("name", "scale", "labels", "guidelines", "required")
"""The table's columns, in the order the page shows them and a CSV file gives them."""

SCALE_KINDS = (BINARY.kind, LIKERT.kind, "custom")
"""The scales a row may name."""

LABEL_SEPARATOR = ";"
"""What separates a custom scale's ``label = value`` pairs in one cell."""

QUESTION_SETTINGS = ("scale", "criteria", "primary_criterion", "allocate_for")
"""The settings that say what graders are asked: fixed once a project has grades."""

_TRUE, _FALSE = ("true", "yes", "1", "y"), ("false", "no", "0", "n")


def rubric_settings(
    rows: Iterable[Mapping[str, Any]], primary: str = "", allocate_for: str = PRIMARY
) -> dict[str, Any]:
    """The settings of the rubric the table's rows define: ``criteria``, ``primary_criterion`` and
    ``allocate_for``, checked by core.rubric.rubric_from_settings. InputError naming the row (from 1), the
    criterion and the fix for a bad row; no rows at all is a rubric without criteria, refused too."""
    criteria = [_criterion(row, cells) for row, cells in enumerate(rows, start=1)]
    if not criteria:
        raise InputError("the rubric has no criterion", fix="add a row for each question graders answer")
    rubric_from_settings(criteria, primary, allocate_for)
    return {"criteria": criteria, "primary_criterion": primary, "allocate_for": allocate_for}


def table_rows(criteria: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Stored criteria (a project's ``criteria``) as the table's rows; ``rubric_settings`` reads them back."""
    rubric = rubric_from_settings(list(criteria))
    if rubric is None:
        return []
    return [
        {
            "name": c.name,
            "scale": c.scale.kind,
            "labels": _labels_text(c.scale.to_settings()["labels"]) if c.scale.kind == "custom" else "",
            "guidelines": c.guidelines,
            "required": c.required,
        }
        for c in rubric.criteria
    ]


def rubric_from_file(path: str, text: str, primary: str = "", allocate_for: str = PRIMARY) -> dict[str, Any]:
    """The settings of the rubric a file gives (as ``rubric_settings``): a ``.json`` file holds a list of
    criteria as the settings store them (the ``criteria`` setting), a ``.csv`` file the table (a header row
    naming some of COLUMNS, ``name`` among them, then one row per criterion). InputError naming the file, the
    criterion's row (from 1, a CSV file's header not counted) and the fix."""
    try:
        if path.lower().endswith(".csv"):
            return rubric_settings(_csv_rows(text), primary, allocate_for)
        rubric = rubric_from_settings(_json_criteria(text), primary, allocate_for)
    except InputError as exc:
        raise InputError(exc.problem, file=path, row=exc.row, column=exc.column, fix=exc.fix) from None
    criteria = [c.to_settings() for c in rubric.criteria]
    return {"criteria": criteria, "primary_criterion": primary, "allocate_for": allocate_for}


def check_questions_change(before: Mapping[str, Any], changes: Mapping[str, Any], n_grades: int) -> None:
    """InputError when ``changes`` change what graders are asked (QUESTION_SETTINGS: the scale, the
    criteria, the primary criterion, what the queue allocates for) of a project with grades: its grades are
    keyed by criterion name and read on their criterion's scale. ``before`` is the stored settings (JSON)."""
    changed = [k for k in QUESTION_SETTINGS if k in changes and changes[k] != before.get(k)]
    if changed and n_grades:
        raise InputError(
            f"the project has {n_grades:,} grades, so its questions ({', '.join(changed)}) cannot change",
            fix="keep the questions, or create a new project that asks the new ones",
        )


def _criterion(row: int, cells: Mapping[str, Any]) -> dict[str, Any]:
    """One row as a stored criterion; InputError naming the row and the criterion."""
    name = _text(cells.get("name"))
    if not name:
        raise InputError("a criterion has no name", row=row, fix="name every criterion, or delete the row")
    kind = _text(cells.get("scale")).lower() or BINARY.kind
    if kind not in SCALE_KINDS:
        raise InputError(
            f"criterion {name!r} has the scale {kind!r}", row=row, fix=f"use one of {', '.join(SCALE_KINDS)}"
        )
    labels = _text(cells.get("labels"))
    return {
        "name": name,
        "scale": _scale(row, name, kind, labels),
        "guidelines": _text(cells.get("guidelines")),
        "required": _required(row, name, cells.get("required")),
    }


def _scale(row: int, name: str, kind: str, labels: str) -> dict[str, Any]:
    if kind != "custom":
        if labels:
            raise InputError(
                f"criterion {name!r} has labels but the {kind} scale",
                row=row,
                fix="choose the custom scale for these labels, or clear them",
            )
        return (BINARY if kind == BINARY.kind else LIKERT).to_settings()
    if not labels:
        raise InputError(
            f"criterion {name!r} has the custom scale but no labels",
            row=row,
            fix="write its labels as 'label = value; ...', e.g. 'Wrong = 0; Partly = 0.5; Right = 1'",
        )
    try:
        return parse_custom_labels("\n".join(labels.split(LABEL_SEPARATOR))).to_settings()
    except InputError as exc:
        where = f"label {exc.row}: " if exc.row is not None else ""
        raise InputError(f"criterion {name!r}, {where}{exc.problem}", row=row, fix=exc.fix) from None


def _required(row: int, name: str, value: Any) -> bool:
    """A row's ``required`` cell: a checkbox's bool, or a CSV cell's word; empty is required."""
    if isinstance(value, bool):
        return value
    word = _text(value).lower()
    if word in ("", *_TRUE):
        return True
    if word in _FALSE:
        return False
    raise InputError(
        f"required = {word!r} of criterion {name!r} is not true or false", row=row, fix="use true or false"
    )


def _text(value: Any) -> str:
    """A cell as stripped text: None and NaN (an empty cell of an edited table) are ""."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _labels_text(labels: list[list[Any]]) -> str:
    return f"{LABEL_SEPARATOR} ".join(f"{label} = {value:g}" for label, value in labels)


def _csv_rows(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    unknown = [h for h in header if h not in COLUMNS]
    if unknown or "name" not in header:
        raise InputError(
            f"the header names {', '.join(repr(h) for h in unknown) or 'no name column'}",
            fix=f"name the columns {', '.join(COLUMNS)} (name at least; an empty scale is binary)",
        )
    reader.fieldnames = header
    return list(reader)


def _json_criteria(text: str) -> list[dict[str, Any]]:
    try:
        criteria = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg}, line {exc.lineno})", fix="give a JSON list of criteria") from None
    if not isinstance(criteria, list) or not criteria:
        raise InputError(
            "the file does not hold a list of criteria",
            fix='give a JSON list such as [{"name": "correct", "scale": {"kind": "binary"}}]',
        )
    return criteria
