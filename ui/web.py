"""What the app's web server adds to Streamlit's (serve.py builds the ``st.App``): security headers on every
response, a websocket that only pages of the app's own origin may open, the sign-in cookie set HttpOnly, and the
app's own worker started with the server (``lifespan``).

- Headers (``HEADERS``): no framing by other sites (X-Frame-Options and CSP frame-ancestors), no MIME
  sniffing, no referrer, and a Content-Security-Policy under which a page loads scripts, styles, fonts and
  connections from the app alone, and images from anywhere (the policy allows http(s) images; whether a web
  image reaches a card is each project's setting, core.inputs.images). Inline scripts and styles stay allowed
  because Streamlit's frontend and the app's own card scripts need them, and WebAssembly
  ('wasm-unsafe-eval'), which Streamlit's frontend compiles as it loads; ``eval`` and ``new Function`` do
  not: no page of the browser tests needs them (tests/conftest.py fails a test whose pages report a
  violation of the policy), so a script that an injected text got onto a page cannot build code from
  strings.
- Origins: the browser sends the ``Origin`` of the page that opens a websocket or posts to a route; one
  whose host and port differ from the request's own ``Host`` is refused (a page on another port of the same
  host is another origin, but SameSite cookies treat it as the same site).
- The cookie: JavaScript cannot set an HttpOnly cookie, so a signed-in page hands the server a one-time
  code (``handoff``) that ``POST /api/session`` exchanges for the session token in a ``Set-Cookie`` header
  (HttpOnly, SameSite=Strict, Secure over https); ``POST /api/session/end`` clears it. No script, of
  this origin or any other, can read the token from ``document.cookie``.
- The HTTP API (core/api) under ``/api/v1``, on the app's own Store; it takes bearer tokens only.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core import api, logs
from core.api import fast
from core.api.http import (
    METRICS_ROUTE,
    UPLOAD_ROUTE,
    https,
    in_thread,
    metrics_refusal,
    same_origin,
    session_cookie,
    small_body,
    upload_refusal,
)
from ui import state

SESSION_ROUTE = "/api/session"
END_ROUTE = "/api/session/end"
HANDOFF_S = 120.0
"""A handoff code is redeemed within this long, once, or never."""
HANDOFF_BYTES = 256
"""The most of a handoff's body read (its code is 32 characters): a longer one is a 413, unread."""

CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' blob:",
        "style-src 'self' 'unsafe-inline'",
        # web images too: a project whose admin turned external images on shows an item's http(s) image URL
        # (core.inputs.images.shown_image decides, per project, which URL reaches a card; with 'self' alone the
        # browser refused every one of them)
        "img-src 'self' data: blob: https: http:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-src 'self' blob: data:",
        "media-src 'self' data: blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
"""Added to every HTTP response that does not set its own."""

SERVED = threading.Event()
"""Set by serve.py: this process serves ROUTES, so ui/session_cookie.py lets the server set the cookie."""

_handoffs: dict[str, tuple[str, int, float]] = {}
_lock = threading.Lock()


def handoff(token: str, max_age_s: int) -> str:
    """A one-time code the browser exchanges for a cookie holding ``token`` (for ``max_age_s`` seconds)."""
    code = secrets.token_urlsafe(24)
    with _lock:
        now = time.monotonic()
        for old in [c for c, (_, _, at) in _handoffs.items() if now - at > HANDOFF_S]:
            del _handoffs[old]
        _handoffs[code] = (token, max_age_s, now)
    return code


def _redeem(code: object) -> tuple[str, int] | None:
    with _lock:
        found = _handoffs.pop(code, None) if isinstance(code, str) else None
    if found is None or time.monotonic() - found[2] > HANDOFF_S:
        return None
    return found[0], found[1]


async def _session(request: Request) -> Response:
    if not same_origin(request.headers):
        return Response(status_code=403)
    body = await small_body(request, HANDOFF_BYTES)
    if body is None:
        return Response(status_code=413)
    redeemed = _redeem(body.decode(errors="replace").strip())
    if redeemed is None:
        return Response(status_code=400)
    token, max_age = redeemed
    response = Response(status_code=204)
    _set_cookie(request, response, token, max_age)
    return response


async def _end(request: Request) -> Response:
    if not same_origin(request.headers):
        return Response(status_code=403)
    response = Response(status_code=204)
    _set_cookie(request, response, "", 0)
    return response


def _set_cookie(request: Request, response: Response, value: str, max_age: int) -> None:
    """The sign-in cookie, under its name for the page's scheme (core.api.http.session_cookie: ``__Host-`` over
    https, where it is Secure; ui/session_cookie.py reads it back through st.context.cookies)."""
    secure = https(request.url.scheme, request.headers)
    response.set_cookie(
        session_cookie(secure), value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure
    )


ROUTES = [
    Route(SESSION_ROUTE, _session, methods=["POST"]),
    Route(END_ROUTE, _end, methods=["POST"]),
    *api.routes(state.served_store),  # /api/v1: bearer tokens only, never the cookie (core/api)
    *fast.routes(state.served_store),  # /grade-fast: the signed-in session's cookie (core/api/fast.py)
]


class Guard:
    """ASGI middleware: HEADERS on every HTTP response, a websocket from another origin refused, an upload to
    Streamlit's own route refused to whoever may not create projects (core.api.http.upload_refusal), and its
    metrics route to whoever is no admin (core.api.http.metrics_refusal)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not same_origin(Headers(scope=scope)):
            await send({"type": "websocket.close", "code": 1008})  # before accepting: the handshake gets 403
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        guarded = (
            upload_refusal  # before a byte of the body is read
            if scope["method"] == "PUT" and UPLOAD_ROUTE in scope["path"]
            else metrics_refusal
            if scope["path"].rstrip("/").endswith(METRICS_ROUTE)
            else None
        )
        if guarded is not None:
            refusal = await in_thread(guarded, state.served_store(), Request(scope))
            if refusal is not None:
                await PlainTextResponse(refusal, status_code=403)(scope, receive, with_headers)
                return
        await self.app(scope, receive, with_headers)


MIDDLEWARE = [Middleware(Guard)]


@asynccontextmanager
async def lifespan(_app: object) -> AsyncIterator[None]:
    """The server's start: the log's handler is set (core.logs), so that a server whose clients are all on the API
    logs its refused presses, though app.py, which sets it too, runs only once a page is opened (an integrator's
    review); the app's own worker starts now and waits warm, so the first job queued does not wait for a process
    to start (issue 28); it stops with the server. A setting not understood has stopped serve.py before this."""
    logs.configure()
    state.keep_worker_warm()
    yield
