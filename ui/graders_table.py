"""The graders' pace as a table, one for the Dashboard and the comparison's panel: grades, working time, grades
per working hour with thousands separated ("2,717", as the throughput metric), median seconds on a card to a
tenth ("0.4", where whole seconds showed fast graders "0") and the last grade."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.services.progress import grader_pace, with_working_time

COLUMNS = {  # short headings and set widths: the six columns fit half the page at 1,400 px (they scrolled)
    "grader": st.column_config.TextColumn("grader", width=125),
    "grades": st.column_config.NumberColumn("grades", width=50),
    "working time": st.column_config.TextColumn("time", width=60, help="working time: the grading sessions' spans"),
    "grades per hour": st.column_config.TextColumn("per hour", width=62, help="grades per working hour, from 2 on"),
    "median seconds": st.column_config.TextColumn("median s", width=65, help="median seconds on a card"),
    "last grade": st.column_config.DatetimeColumn("last grade", width=100, format="D MMM HH:mm", help="UTC"),
}

DIGITS = {"grades per hour": 0, "median seconds": 1}
"""Decimals of each figure; "–" where it is not known yet (one grade's pace)."""


def graders_table(grades: pd.DataFrame) -> None:
    """The pace of each grader of ``grades`` (core.services.progress.grader_pace), busiest first."""
    table = with_working_time(grader_pace(grades))
    st.dataframe(
        table.assign(
            **{c: table[c].map(lambda v, d=d: "–" if pd.isna(v) else f"{v:,.{d}f}") for c, d in DIGITS.items()}
        ),
        hide_index=True,
        width="stretch",
        column_config=COLUMNS,
    )
