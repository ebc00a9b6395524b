"""Outbound requests go only to the servers the operator allows ($ACTIVEGRADE_SAMPLING_SERVERS), with the key the
operator named for each: whatever an admin enters, a listener on 127.0.0.1 receives no secret of the app's
environment (issue 26, finding 1)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest

from core.errors import InputError
from core.jobs.sampling_job import sample_project
from core.services.project import create_project, start_preparation
from core.store import Store

POOL = b'{"id": "q1", "prompt": "What is 2 plus 2?", "response": "4"}\n'
SECRET = "ghp-the-servers-own-token-0123456789"
ALLOWED_SECRET = "sk-the-allowed-servers-key-0123456789"


class Listener(http.server.ThreadingHTTPServer):
    """Records every request (path, headers, body); answers `reply(handler)`'s status, headers and body."""

    def __init__(self, reply) -> None:
        self.seen: list[str] = []
        self.reply = reply
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode(errors="replace")
                listener.seen.append(f"{self.path}\n{self.headers}\n{body}")
                status, headers, payload = listener.reply(self)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@pytest.fixture
def listener() -> Iterator[Listener]:
    with served(lambda handler: (500, {}, b'{"error": {"message": "remote-body-marker"}}')) as server:
        yield server


class served:
    def __init__(self, reply) -> None:
        self.server = Listener(reply)

    def __enter__(self) -> Listener:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'outbound.db'}")


def attempt(store: Store, name: str, sampling: dict) -> str:
    """Create a project with these sampling settings as an admin would and run its sampling job; the error shown."""
    sampling = {"model": "m", "k": 1, "temperature": 0.0, "max_retries": 0, "timeout": 5, **sampling}
    try:
        pid = create_project(store, name, ("pool.jsonl", POOL), None, {"sampling": sampling}, start=False)
        sample_project(store, pid, lambda done, total: None)
    except InputError as exc:
        return str(exc)
    return ""


def test_no_secret_reaches_a_listener_whatever_an_admin_enters(store, listener, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("ALLOWED_KEY", ALLOWED_SECRET)
    port = listener.server_address[1]
    with served(lambda h: (307, {"Location": f"{listener.url}/chat/completions"}, b"")) as redirector:
        monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", f"{redirector.url}=ALLOWED_KEY")
        errors = [
            attempt(store, f"p{n}", sampling)
            for n, sampling in enumerate(
                [
                    {"api_base": listener.url, "api_key_env": "GITHUB_TOKEN"},
                    {"api_base": f"http://[::ffff:127.0.0.1]:{port}/v1", "api_key_env": "GITHUB_TOKEN"},
                    {"api_base": f"http://localhost:{port}/v1"},
                    {"api_base": f"{redirector.url}/", "api_key_env": "GITHUB_TOKEN"},
                    {"api_base": redirector.url, "api_key_env": "GITHUB_TOKEN"},  # allowed: redirected, not followed
                ]
            )
        ]
        assert len(redirector.seen) == 1 and SECRET not in redirector.seen[0]
        assert f"Bearer {ALLOWED_SECRET}" in redirector.seen[0]  # the operator's key for the operator's server
    assert listener.seen == []
    assert all(errors), errors
    assert errors[-1].startswith(f"{redirector.url}: the server answered HTTP 307")
    assert not any("GITHUB_TOKEN" in e or "ALLOWED_KEY" in e or SECRET in e for e in errors), errors


def test_errors_name_neither_the_remote_body_nor_which_variables_exist(store, listener, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", f"{listener.url}=AG_OUTBOUND_UNSET_KEY,http://127.0.0.1:9/v1")
    monkeypatch.delenv("AG_OUTBOUND_UNSET_KEY", raising=False)
    unset = attempt(store, "unset", {"api_base": listener.url})
    assert "is not set where the app runs" in unset and "AG_OUTBOUND_UNSET_KEY" not in unset
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", listener.url)
    failed = attempt(store, "failed", {"api_base": listener.url})
    assert "the server answered HTTP 500" in failed and "remote-body-marker" not in failed
    assert len(listener.seen) == 1 and "authorization: bearer empty" in listener.seen[0].lower()


def test_a_server_removed_from_the_list_is_refused_when_the_job_runs(store, listener, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", listener.url)
    pid = create_project(
        store, "later", ("pool.jsonl", POOL), None, {"sampling": {"api_base": listener.url, "model": "m"}}, start=False
    )
    assert json.dumps(store.project(pid).settings.sampling).count("api_key_env") == 0
    monkeypatch.delenv("ACTIVEGRADE_SAMPLING_SERVERS")
    with pytest.raises(InputError, match="this deployment allows no server"):
        sample_project(store, pid, lambda done, total: None)
    assert listener.seen == []


# --- the embedding backend's embeddings from a server (settings.embedding_server) ---------------------------

SAMPLED_POOL = b'{"id": "q1", "prompt": "What is 2 plus 2?", "response": "4", "samples": ["4", "four"]}\n'


@pytest.fixture
def embeddings_fail_at_once(monkeypatch, tmp_path) -> None:
    """The served backend's requests are not retried, and its cache is the test's own."""
    from core.surrogate.semantic.served import ServedEmbeddingBackend

    monkeypatch.setitem(ServedEmbeddingBackend.__init__.__kwdefaults__, "max_retries", 0)
    monkeypatch.setenv("ACTIVEGRADE_CACHE_DIR", str(tmp_path / "cache"))


def embed(store: Store, name: str, server: str) -> str:
    """Create a project whose embeddings come from ``server`` and prepare it here; the error shown, or ""."""
    settings = {"backend": "embedding", "model": "m", "embedding_server": server}
    try:
        pid = create_project(store, name, ("pool.jsonl", SAMPLED_POOL), None, settings, start=False)
    except InputError as exc:
        return str(exc)
    start_preparation(store, pid, wait=True)
    return store.project(pid).error or ""


def test_embeddings_are_asked_of_an_allowed_server_only_unredirected(
    store, listener, monkeypatch, embeddings_fail_at_once
):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("ALLOWED_KEY", ALLOWED_SECRET)
    with served(lambda h: (307, {"Location": f"{listener.url}/embeddings"}, b"")) as redirector:
        monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", f"{redirector.url}=ALLOWED_KEY,{listener.url}")
        redirected = embed(store, "redirected", redirector.url)
        assert len(redirector.seen) == 1 and f"Bearer {ALLOWED_SECRET}" in redirector.seen[0]
        assert listener.seen == []  # the redirect is not followed
        monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", redirector.url)
        refused = embed(store, "elsewhere", listener.url)
    assert redirected.startswith(f"{redirector.url}/embeddings: the server answered HTTP 307")
    assert refused.startswith("the server chosen is not one this deployment allows") and listener.seen == []
    assert not any(SECRET in e or "ALLOWED_KEY" in e for e in (redirected, refused))


def test_an_embedding_servers_error_names_its_status_not_its_body(
    store, listener, monkeypatch, embeddings_fail_at_once
):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", listener.url)
    failed = embed(store, "failed", listener.url)
    assert failed.startswith(f"{listener.url}/embeddings: the server answered HTTP 500") and "Fix: " in failed
    assert "remote-body-marker" not in failed and len(listener.seen) == 1


def test_an_embedding_server_removed_from_the_list_is_refused_when_the_job_runs(
    store, listener, monkeypatch, embeddings_fail_at_once
):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", listener.url)
    settings = {"backend": "embedding", "model": "m", "embedding_server": listener.url}
    pid = create_project(store, "later", ("pool.jsonl", SAMPLED_POOL), None, settings, start=False)
    monkeypatch.delenv("ACTIVEGRADE_SAMPLING_SERVERS")
    start_preparation(store, pid, wait=True)
    error = store.project(pid).error
    assert error.startswith("this deployment allows no server to take embeddings from")
    assert "embed with a local model ('Embeddings from'" in error and listener.seen == []
