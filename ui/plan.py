"""Cached items and design of a prepared project, and the planned-allocation panel."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.allocation import Design, planned_allocation, planned_saving, proportional_allocation
from core.design import prepared_design
from core.estimate import grades_needed
from core.store import ProjectInfo
from core.tracking import estimate_path
from ui import state


@st.cache_resource(max_entries=16, show_spinner="Loading items...")
def _items(url: str, project_id: int, prepared_at: str) -> pd.DataFrame:
    return state.store().load_items(project_id)


@st.cache_resource(max_entries=16, show_spinner=False)
def _design(url: str, project_id: int, prepared_at: str) -> Design:
    return prepared_design(_items(url, project_id, prepared_at))


def _key(project: ProjectInfo) -> tuple[str, int, str]:
    # items change only when a preparation finishes, which also stamps updated_at
    return str(state.store().engine.url), project.id, project.updated_at.isoformat()


def items(project: ProjectInfo) -> pd.DataFrame:
    """The project's prepared items (shared, read-only)."""
    return _items(*_key(project))


def design(project: ProjectInfo) -> Design:
    """The project's sampling design (shared, read-only)."""
    return _design(*_key(project))


def show_planned_allocation(project: ProjectInfo, budget: int) -> None:
    d = design(project)
    table = pd.DataFrame(
        {
            "stratum": range(d.H),
            "items": d.sizes,
            "predicted mean grade": d.prior_mean.round(3),
            "predicted spread": d.prior_sd.round(3),
            "planned grades": planned_allocation(d, budget),
            "proportional": proportional_allocation(d.sizes, budget, d.floor),
        }
    )
    left, right = st.columns([3, 1])
    left.dataframe(table, hide_index=True, width="stretch")
    saving = planned_saving(d, budget)
    right.metric(
        "Predicted saving vs uniform",
        f"{saving:.0%}",
        help="Share of grades saved at equal precision, predicted from the surrogate before any grade.",
    )
    right.caption(
        f"Uniform sampling would need about {budget / max(1 - saving, 1e-9):,.0f} grades for the same precision."
    )


@st.cache_data(max_entries=64, show_spinner=False)
def _path(url: str, project_id: int, prepared_at: str, positions: tuple, grades: tuple, method: str) -> pd.DataFrame:
    return estimate_path(_design(url, project_id, prepared_at), list(positions), list(grades), method=method)


@st.cache_data(max_entries=64, show_spinner=False)
def _needed(
    url: str, project_id: int, prepared_at: str, positions: tuple, grades: tuple, target: float, method: str
) -> int:
    return grades_needed(_design(url, project_id, prepared_at), list(positions), list(grades), target, method=method)


def estimate_path_of(project: ProjectInfo, graded: dict[int, float], method: str) -> pd.DataFrame:
    """core.tracking.estimate_path, computed once per set of grades (the dashboard refreshes often)."""
    return _path(*_key(project), tuple(graded), tuple(graded.values()), method)


def grades_needed_of(project: ProjectInfo, graded: dict[int, float], target: float, method: str) -> int:
    """core.estimate.grades_needed, computed once per set of grades."""
    return _needed(*_key(project), tuple(graded), tuple(graded.values()), target, method)
