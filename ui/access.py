"""Access checks for code that runs without the page's gate: fragments and widget callbacks.

A Streamlit fragment reruns on its own (a timer, a button inside it) and
keeps its callbacks after the page that drew it ended in ``st.stop()``; the
sign-in gate and the page's role check do not run then. Each fragment and
each callback therefore asks core.services.auth.recheck first, which reads the
account, its role, its project assignment and the project again from the
database.
"""

from __future__ import annotations

import streamlit as st

from core.services import audit, auth
from core.services.outcome import Refused
from ui import signin, state


def fragment_guard(action: str, project_id: int | None = None) -> auth.User:
    """In a fragment: the current user if they may still perform ``action``. Signed out (or the session
    ended: disabled, expired, password or role changed): the whole page reruns and shows the sign-in
    form, saying why (ui.signin.gate). Otherwise (unassigned, project deleted): say why and stop the
    fragment (it keeps nothing on screen but the reason). Either way the reason says whether the last
    press on the grading card was saved (ui.signin.press_note)."""
    current = signin.user()
    if current is None:
        st.rerun(scope="app")
    try:
        return auth.recheck(state.store(), current, action, project_id)
    except auth.AccessDenied as exc:
        st.error(f"Not allowed: {exc}.{signin.press_note()}")
        st.stop()


def audited_download(what: str, project_id: int | None, action: str = auth.EXPORT) -> dict:
    """``on_click``/``args`` for st.download_button: records who downloaded ``what`` in the audit trail
    (rechecking that they still may)."""
    return {"on_click": _record_download, "args": (what, project_id, action)}


def _record_download(what: str, project_id: int | None, action: str) -> None:
    try:
        audit.exported(state.store(), signin.user(), what, project_id, action)
    except Refused as exc:
        st.toast(f"Not allowed: {exc}.")
