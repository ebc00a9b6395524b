"""The Projects page's control for a rubric: several criteria asked of every item on one card.

A table of criteria (core.rubric_table: name, scale, custom labels, guidelines, required), the primary
criterion (the one the design, the stopping rule and the forecast read) and what the queue allocates for.
The rows are turned into settings and checked by core.rubric_table and core.rubric; this module only renders.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.rubric import ALL, ALLOCATE_FOR, MAX_CRITERIA, PRIMARY
from core.rubric_table import COLUMNS, LABEL_SEPARATOR, SCALE_KINDS, rubric_settings, table_rows
from core.settings import ProjectSettings

STARTER_ROWS = [{"name": "correct", "scale": "binary", "labels": "", "guidelines": "", "required": True}]
"""The table a new rubric starts from: one criterion, today's correct/incorrect question."""

ALLOCATE_LABELS = {
    PRIMARY: "the primary criterion",
    ALL: "all criteria together (a compromise between their allocations)",
}


def uses_rubric(key: str, current: ProjectSettings) -> bool:
    """The choice between one question on a scale and a rubric (on for a project that has criteria)."""
    return st.checkbox(
        "Ask several questions of each item (a rubric)",
        bool(current.criteria),
        key=key,
        help=f"Up to {MAX_CRITERIA} criteria, each on its own scale, answered together on one card.",
    )


def rubric_editor(key: str, current: ProjectSettings) -> dict[str, Any] | None:
    """The criteria table, the primary criterion and what the queue allocates for, starting from ``current``'s
    rubric; the settings they make (``criteria``, ``primary_criterion``, ``allocate_for``), or None, with the
    error shown, while a row is bad. ``key`` prefixes the widgets' keys."""
    rows = table_rows(current.criteria) or STARTER_ROWS
    edited = st.data_editor(
        pd.DataFrame(rows, columns=list(COLUMNS)),
        key=f"{key}_criteria_{_digest(rows)}",  # a fresh table once the stored criteria change
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            "name": st.column_config.TextColumn("Criterion", help="A short name, unique within the rubric."),
            "scale": st.column_config.SelectboxColumn("Scale", options=list(SCALE_KINDS), default="binary"),
            "labels": st.column_config.TextColumn(
                "Custom labels",
                help=f"For the custom scale only: 'label = value' pairs, values in [0, 1], separated by "
                f"'{LABEL_SEPARATOR}', e.g. 'Wrong = 0{LABEL_SEPARATOR} Partly = 0.5{LABEL_SEPARATOR} Right = 1'.",
            ),
            "guidelines": st.column_config.TextColumn("Guidelines", help="What graders read for this criterion."),
            "required": st.column_config.CheckboxColumn("Required", default=True),
        },
    )
    records = edited.to_dict("records")
    names = list(dict.fromkeys(n.strip() for n in edited["name"].dropna().astype(str) if n.strip()))
    cols = st.columns(2)
    primary = cols[0].selectbox(
        "Primary criterion",
        names,
        index=names.index(current.primary_criterion) if current.primary_criterion in names else 0,
        key=f"{key}_primary",
        help="The criterion the design, the stopping rule and the forecast read. It must be required.",
    )
    allocate_for = cols[1].selectbox(
        "Allocate for",
        ALLOCATE_FOR,
        index=ALLOCATE_FOR.index(current.allocate_for),
        format_func=ALLOCATE_LABELS.get,
        key=f"{key}_allocate_for",
        help="Which criterion's spreads decide how many items each stratum gets.",
    )
    try:
        return rubric_settings(records, primary or "", allocate_for)
    except InputError as exc:
        st.error(f"Rubric: {exc}")
        return None


def _digest(rows: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:8]
