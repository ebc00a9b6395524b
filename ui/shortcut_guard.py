"""Streamlit's button shortcuts kept to the page: ui/shortcut_guard.js, put on a page whose buttons have single
keys (``shortcut=``), so a key typed on a link, a summary, a table cell or the sidebar is that element's."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

SCRIPT = (Path(__file__).parent / "shortcut_guard.js").read_text(encoding="utf-8")
MARKER = '<span id="ag-shortcut-guard" hidden></span>'
"""Where the guard acts: the pages that put it there."""


def guard() -> None:
    """Put the guard (and its marker) on this page."""
    st.html(f"{MARKER}<script>{SCRIPT}</script>", unsafe_allow_javascript=True)
