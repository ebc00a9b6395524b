"""Signing in through the browser for the Chromium tests, and the sign-in cookie it leaves.

The page says "Signed in as NAME" before a server route sets the HttpOnly session cookie, so a test that goes
to another address at once could arrive signed out; `sign_in` returns once the cookie is there.
"""

from __future__ import annotations

import time

from core.api.http import SESSION_COOKIE
from core.testing.appserver import TIMEOUT_MS


def session_cookie(context, page, *, present: bool = True) -> dict | None:
    """The sign-in cookie once it is set (``present``) or gone (not ``present``), polled until TIMEOUT_MS: a
    server route sets and clears it after the page's own round trip, and the page's script cannot see it."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        cookie = next((c for c in context.cookies() if c["name"] == SESSION_COOKIE and c["value"]), None)
        if (cookie is not None) == present or time.monotonic() > deadline:
            return cookie
        page.wait_for_timeout(100)


def sign_in(page, url: str, name: str, password: str) -> None:
    """Open ``url``, sign in as ``name`` and wait until the page says so and the session cookie is set."""
    page.goto(url)
    page.get_by_role("textbox", name="Name", exact=True).fill(name)
    page.get_by_role("textbox", name="Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {name}").wait_for(timeout=TIMEOUT_MS)
    session_cookie(page.context, page)
