"""The grading card: a two-way Streamlit component (``st.components.v2``) that owns the item on
screen and the grade page's keys; the browser half is ui/grading_card.js (with its CSS)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from ui.page_keys import with_own_keys

KEY = "grading-card"
_HERE = Path(__file__).parent
_mount = st.components.v2.component(
    "activegrade_grading_card",
    js=with_own_keys((_HERE / "grading_card.js").read_text(encoding="utf-8")),
    css=(_HERE / "grading_card.css").read_text(encoding="utf-8"),
    isolate_styles=False,
)


def card(data: dict[str, Any], on_action: Callable[[], None]) -> None:
    """Show ``data`` (see app_pages/grade.py) on the card; ``on_action`` runs on every press."""
    _mount(key=KEY, data=data, on_action_change=on_action)


def pressed() -> dict[str, Any] | None:
    """The press that triggered the current callback (its JSON payload), if any."""
    result = st.session_state.get(KEY)
    value = result.get("action") if hasattr(result, "get") else getattr(result, "action", None)
    return value if isinstance(value, dict) else None
