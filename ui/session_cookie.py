"""The sign-in cookie: set and cleared in the browser through a tiny ``st.components.v2`` component.

Streamlit cannot set an HttpOnly cookie, so the cookie is SameSite=Strict
(never sent by another site's page), Secure on https, and scoped to the app's
path; item content is rendered inert (ui/markdown_html.py), so no script
from a pool can read it. The server reads it back from the request that opens
the websocket (``st.context.cookies``).
"""

from __future__ import annotations

import streamlit as st

NAME = "activegrade_session"
_SET = "session-cookie-set"  # session state: this tab has set the cookie (so signing out clears it)

_JS = """
export default function ({ data }) {
  const secure = location.protocol === "https:" ? "; Secure" : "";
  const base = `${data.name}=`;
  if (data.token) {
    document.cookie = `${base}${data.token}; Path=/; Max-Age=${data.max_age}; SameSite=Strict${secure}`;
  } else if (document.cookie.split("; ").some((c) => c.startsWith(base))) {
    document.cookie = `${base}; Path=/; Max-Age=0; SameSite=Strict${secure}`;
  }
}
"""
_mount = st.components.v2.component("activegrade_session_cookie", js=_JS)


def from_request() -> str | None:
    """The token the browser sent when it opened this session, if any."""
    try:
        value = st.context.cookies.get(NAME)
    except Exception:  # noqa: BLE001 - no request context (AppTest, bare mode): no cookie
        return None
    return value if isinstance(value, str) and value else None


def mirror(token: str | None, max_age_s: int) -> None:
    """Make the browser's cookie hold ``token`` (in the sidebar of a signed-in page); with None,
    clear a cookie the browser sent (on the sign-in page, which has no sidebar)."""
    data = {"name": NAME, "token": token, "max_age": max_age_s}
    if token is not None:
        st.session_state[_SET] = True
        with st.sidebar:
            _mount(key="session-cookie", data=data)
    elif st.session_state.pop(_SET, False) or from_request() is not None:
        _mount(key="session-cookie", data=data)
