"""Simulate: replay the queue and the estimators on a pool with known labels."""
from __future__ import annotations

import streamlit as st

st.title("Simulate")
st.info("The simulator page is being wired to core.simulate.")
