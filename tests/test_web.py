"""ui/web.py: the app's own web layer (security headers, same-origin websockets and routes, the HttpOnly
cookie's one-time handoff), on a bare Starlette app with Starlette's test client."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from core import config
from core.api.http import SESSION_COOKIE
from core.services import account_writes, auth, sessions
from core.store import Store
from ui import web


async def _page(request):
    return PlainTextResponse("page")


async def _stream(websocket):
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


@pytest.fixture
def client() -> TestClient:
    app = Starlette(
        routes=[*web.ROUTES, Route("/", _page), WebSocketRoute("/_stcore/stream", _stream)],
        middleware=web.MIDDLEWARE,
    )
    return TestClient(app, base_url="http://127.0.0.1:8501")


def test_every_response_carries_the_security_headers(client):
    headers = client.get("/").headers
    assert {name: headers[name] for name in web.HEADERS} == web.HEADERS
    assert "frame-ancestors 'none'" in web.CSP and "object-src 'none'" in web.CSP
    images = next(part.split()[1:] for part in web.CSP.split("; ") if part.startswith("img-src"))
    assert {"'self'", "data:", "https:"} <= set(images)  # a project's external images, where its admin allows them


def test_a_websocket_from_another_port_is_refused(client):
    with client.websocket_connect("/_stcore/stream", headers={"Origin": "http://testserver"}) as ws:
        assert ws.receive_text() == "hello"  # the test client's websockets go to the host "testserver"
    with client.websocket_connect("/_stcore/stream") as ws:
        assert ws.receive_text() == "hello"  # no Origin: not a browser page
    for other in ("http://testserver:9999", "null", "http://evil.example"):
        with pytest.raises(WebSocketDisconnect):
            client.websocket_connect("/_stcore/stream", headers={"Origin": other}).__enter__()


def test_the_cookie_is_set_httponly_once_per_code_and_only_for_the_apps_own_pages(client):
    code = web.handoff("the-token", 3600)
    assert client.post(web.SESSION_ROUTE, content=code, headers={"Origin": "http://127.0.0.1:9999"}).status_code == 403
    reply = client.post(web.SESSION_ROUTE, content=code, headers={"Origin": "http://127.0.0.1:8501"})
    assert reply.status_code == 204
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=the-token;") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "Max-Age=3600" in cookie and "Secure" not in cookie  # plain http here
    assert client.post(web.SESSION_ROUTE, content=code).status_code == 400  # spent
    assert client.post(web.SESSION_ROUTE, content="forged").status_code == 400
    ended = client.post(web.END_ROUTE, headers={"Origin": "http://127.0.0.1:8501"})
    assert ended.status_code == 204 and "Max-Age=0" in ended.headers["set-cookie"]


def test_the_cookie_is_secure_and_host_only_behind_a_tls_proxy(client):
    """Over https the cookie's name has the __Host- prefix, which a browser takes only from this host over https,
    so a page on another port cannot plant a session (a security review did so over http)."""
    code = web.handoff("the-token", 60)
    reply = client.post(web.SESSION_ROUTE, content=code, headers={"X-Forwarded-Proto": "https"})
    cookie = reply.headers["set-cookie"]
    assert reply.status_code == 204 and cookie.startswith(f"__Host-{SESSION_COOKIE}=the-token;")
    assert "Secure" in cookie and "Path=/" in cookie and "Domain" not in cookie
    ended = client.post(web.END_ROUTE, headers={"X-Forwarded-Proto": "https"})
    assert (
        ended.headers["set-cookie"].startswith(f"__Host-{SESSION_COOKIE}=")
        and "Max-Age=0" in ended.headers["set-cookie"]
    )


def test_over_https_a_session_is_read_from_the_host_only_cookie_alone():
    from starlette.requests import Request

    from core.api.http import session_token

    def request(scheme: str, cookie: str, proto: str = "") -> Request:
        headers = [(b"cookie", cookie.encode())] + ([(b"x-forwarded-proto", proto.encode())] if proto else [])
        return Request({"type": "http", "scheme": scheme, "path": "/", "headers": headers, "server": ("h", 1)})

    tossed = f"{SESSION_COOKIE}=planted"  # what a page of another port of the host can write
    assert session_token(request("https", tossed)) is None and session_token(request("http", tossed, "https")) is None
    assert session_token(request("https", f"__Host-{SESSION_COOKIE}=mine; {tossed}")) == "mine"
    assert session_token(request("http", tossed)) == "planted"  # plain http: no prefix can tell them apart


def test_the_served_store_is_opened_once_per_database_url(monkeypatch, tmp_path):
    """The API's requests take the app's Store (ui.state.served_store) kept by URL: opened once, not looked up in
    Streamlit's cache on every request; another URL opens its own."""
    from core import config
    from ui import state

    opened = []
    monkeypatch.setattr(state, "_open_store", lambda url: opened.append(url) or object())
    monkeypatch.setattr(state, "_served", {})
    monkeypatch.setenv(config.DB_URL, f"sqlite:///{tmp_path / 'a.db'}")
    first = state.served_store()
    assert state.served_store() is first and len(opened) == 1
    monkeypatch.setenv(config.DB_URL, f"sqlite:///{tmp_path / 'b.db'}")
    assert state.served_store() is not first and len(opened) == 2


def test_the_page_reads_the_cookie_by_the_rule_the_routes_set_it_by(monkeypatch):
    """Not by the browser's URL: behind a TLS proxy that sends no X-Forwarded-Proto the routes set the plain name
    (the request they see is http), and a page reading the __Host- one would never see its sign-in."""
    import streamlit as st

    from ui import session_cookie

    assert session_cookie._name() == SESSION_COOKIE  # no TLS here, and no proxy said https
    monkeypatch.setattr(st, "get_option", lambda name: "cert.pem" if name == "server.sslCertFile" else None)
    assert session_cookie._name() == f"__Host-{SESSION_COOKIE}"  # the server speaks TLS itself


def test_a_handoff_body_longer_than_a_code_is_refused_unread(client):
    """The handoff route reads at most HANDOFF_BYTES: a body of any size was read whole into memory before anything
    was checked, by anyone, signed in or not (an attacker's review: 1.5 GB in one POST)."""
    code = web.handoff("the-token", 60)
    assert client.post(web.SESSION_ROUTE, content=code + " " * web.HANDOFF_BYTES).status_code == 413
    streamed = client.post(web.SESSION_ROUTE, content=(b"x" * 1024 for _ in range(1024)))  # no Content-Length
    assert streamed.status_code == 413
    assert client.post(web.SESSION_ROUTE, content=code).status_code == 204  # the code itself, still unspent


def test_streamlits_upload_route_needs_a_creator_and_its_metrics_an_admin(tmp_path, monkeypatch):
    """Streamlit's upload route took a file from any session, the sign-in page's included, and kept it in memory
    (an attacker's review: six 50 MB PUTs with no account, 300 MB held); the Projects page, whose new project is
    the app's one upload, is an admin's."""
    url = f"sqlite:///{tmp_path / 'web.db'}"
    monkeypatch.setenv(config.DB_URL, url)
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    store = Store.open(url)
    password = "correct horse battery"
    for name, role in (("root", auth.ADMIN), ("ann", auth.GRADER)):
        account_writes.create_account(store, name, role, password=password)
    cookie = {name: sessions.start(store, auth.sign_in(store, name, password)) for name in ("root", "ann")}
    taken = []

    async def _upload(request):
        taken.append(await request.body())
        return PlainTextResponse("", status_code=204)

    async def _metrics(request):
        return PlainTextResponse("active_sessions 3")

    app = Starlette(
        routes=[
            Route("/_stcore/upload_file/{sid}/{fid}", _upload, methods=["PUT"]),
            Route("/_stcore/metrics", _metrics),
        ],
        middleware=web.MIDDLEWARE,
    )
    path, body = "/_stcore/upload_file/s1/f1", b"x" * 1000
    origin = {"Origin": "http://127.0.0.1:8501"}

    def put(name: str | None, headers=origin) -> int:
        client = TestClient(
            app, base_url="http://127.0.0.1:8501", cookies={SESSION_COOKIE: cookie[name]} if name else {}
        )
        return client.put(path, content=body, headers=headers).status_code

    assert put(None) == 403 and put("ann") == 403 and taken == []  # not a byte of theirs read
    assert put("root", {"Origin": "http://evil.example"}) == 403
    assert put("root") == 204 and taken == [body]

    def metrics(name: str | None) -> int:  # it answered anyone without sign-in (an attacker's review)
        client = TestClient(
            app, base_url="http://127.0.0.1:8501", cookies={SESSION_COOKIE: cookie[name]} if name else {}
        )
        return client.get("/_stcore/metrics").status_code

    assert metrics(None) == 403 and metrics("ann") == 403 and metrics("root") == 200
