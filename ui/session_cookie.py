"""The sign-in cookie: set and cleared in the browser through a tiny ``st.components.v2`` component.

Served by serve.py (``streamlit run serve.py``, ui/web.py's routes), the cookie is HttpOnly: the component
hands the server a one-time code and the server's answer sets the cookie, so the token never reaches a
script. Served as a bare script (``streamlit run app.py``) there is no such route: the component then sets it
from JavaScript, SameSite=Strict (never sent by another site's page), Secure on https, and readable by a
script of the same host (another port's included). Either way the server reads it back from the request
that opens the websocket (``st.context.cookies``).
"""

from __future__ import annotations

import streamlit as st

from core.api.http import https, session_cookie
from ui import web

_SET = "session-cookie-set"  # session state: this tab has set the cookie (so signing out clears it)

_JS = """
export default async function ({ data }) {
  const secure = location.protocol === "https:" ? "; Secure" : "";
  const base = `${data.name}=`;
  if (data.route) {  // the server sets (or clears) the cookie HttpOnly
    await fetch(data.route, { method: "POST", body: data.code || "", credentials: "same-origin" });
  } else if (data.token) {
    document.cookie = `${base}${data.token}; Path=/; Max-Age=${data.max_age}; SameSite=Strict${secure}`;
  } else if (document.cookie.split("; ").some((c) => c.startsWith(base))) {
    document.cookie = `${base}; Path=/; Max-Age=0; SameSite=Strict${secure}`;
  }
}
"""
_mount = st.components.v2.component("activegrade_session_cookie", js=_JS)


def _name() -> str:
    """The cookie's name (core.api.http.session_cookie: ``__Host-`` over https), by the rule ui/web.py's routes
    set it by: https where this server speaks TLS itself (``server.sslCertFile``), or a TLS proxy said so in the
    websocket's X-Forwarded-Proto. Not the browser's own URL: behind a proxy that sends no X-Forwarded-Proto the
    routes set the plain name, and a page reading the other would never see its sign-in."""
    scheme = "https" if st.get_option("server.sslCertFile") else "http"
    try:
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no request context (AppTest, bare mode)
        headers = {}
    return session_cookie(https(scheme, headers or {}))


def from_request() -> str | None:
    """The token the browser sent when it opened this session, if any."""
    try:
        value = st.context.cookies.get(_name())
    except Exception:  # noqa: BLE001 - no request context (AppTest, bare mode): no cookie
        return None
    return value if isinstance(value, str) and value else None


def mirror(token: str | None, max_age_s: int) -> None:
    """Make the browser's cookie hold ``token`` (in the sidebar of a signed-in page); with None,
    clear a cookie the browser sent (on the sign-in page, which has no sidebar)."""
    if web.SERVED.is_set():
        route = web.SESSION_ROUTE if token is not None else web.END_ROUTE
        data = {"name": _name(), "route": route, "code": _code(token, max_age_s)}
    else:
        data = {"name": _name(), "token": token, "max_age": max_age_s}
    if token is not None:
        st.session_state[_SET] = True
        with st.sidebar:
            _mount(key="session-cookie", data=data)
    elif st.session_state.pop(_SET, False) or from_request() is not None:
        _mount(key="session-cookie", data=data)


_CODE = "session-cookie-code"  # session state: (token, its handoff code), so a rerun sends the same data again


def _code(token: str | None, max_age_s: int) -> str | None:
    """The handoff code of ``token`` (ui.web.handoff), issued on this tab's first run with it: later reruns
    send the same data (a spent code is refused, and the cookie is set already)."""
    if token is None:
        st.session_state.pop(_CODE, None)
        return None
    kept = st.session_state.get(_CODE)
    if kept is None or kept[0] != token:
        kept = st.session_state[_CODE] = (token, web.handoff(token, max_age_s))
    return kept[1]
