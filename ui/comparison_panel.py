"""The Dashboard of a comparison project: each model's estimate, each difference with its interval, win / tie /
loss counts and the plain statement of which differences are resolved (core.services.comparison_reading).
Rendered only."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.services.comparison_reading import comparison_reading, statement
from core.services.database import ProjectInfo, Store
from ui import plan


def panel(store: Store, project: ProjectInfo) -> None:
    reading = comparison_reading(store, project.id, plan.design(project))
    level = f"{reading.level:.2%}"
    st.metric("Items graded for every model", f"{reading.graded_items:,}")
    st.subheader("Models")
    st.dataframe(
        pd.DataFrame(
            [{"model": m, "estimate": e, "low": lo, "high": hi} for m, (e, lo, hi) in reading.models.items()]
        ).round(3),
        hide_index=True,
    )
    st.subheader("Differences")
    st.caption(
        f"mean(A) - mean(B) on the items graded for both, stratified; intervals at {level} each so that all "
        "pairs hold together at 95% (fixed-n). Wins, ties and losses count A's items."
    )
    st.dataframe(reading.table().round(3), hide_index=True)
    st.markdown(f"**{statement(reading)}**")
