"""Projects page: the embedding backend's embeddings from one of the servers the operator allows
($ACTIVEGRADE_SAMPLING_SERVERS), chosen as the sampling control chooses one (ui.servers); the preparation asks
that server, and a server that is down or refuses shows as one clear line on the page. A real embedding server
prepares a project in tests/test_semantic_served.py."""

from __future__ import annotations

import pytest

import core.services.project
from core.surrogate.semantic.served import ServedEmbeddingBackend
from core.testing.local_server import free_port
from tests.app.test_sampling_control import headline
from tests.test_outbound import served as listening

START = core.services.project.start_preparation  # the real one, before a test replaces it


@pytest.fixture
def no_preparation(monkeypatch, tmp_path) -> list[int]:
    """No demo, no app worker, no preparation started by the page; the ids of the projects it would start."""
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "0")
    monkeypatch.setenv("ACTIVEGRADE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(ServedEmbeddingBackend.__init__.__kwdefaults__, "max_retries", 0)  # fail at once
    started: list[int] = []
    monkeypatch.setattr(core.services.project, "start_preparation", lambda store, pid, **_: started.append(pid))
    return started


def fill_form(at, uploads, name: str, server: str | None, model: str = "served-embedder") -> None:
    """A new project with the embedding backend, its embeddings from ``server`` (None: the first offered)."""
    at.text_input(key="new_name").set_value(name)
    for key, file in (("new_pool", "pool.jsonl"), ("new_samples", "samples.jsonl")):
        at.file_uploader(key=key).set_value((*uploads[file], "application/octet-stream"))
    at.run()
    next(s for s in at.selectbox if s.label == "Semantic backend").set_value("embedding").run()
    assert not at.text_input(key="new_model").disabled
    at.radio(key="new_embedding_source").set_value("server").run()
    assert at.text_input(key="new_model").disabled  # the server's model is named beside the server
    if server is not None:
        at.selectbox(key="new_embedding_api_base").set_value(server)
    at.text_input(key="new_embedding_server_model").set_value(model)
    at.button(key="create").click().run()


def test_the_embedding_server_and_its_model_are_recorded(open_app, store, uploads, no_preparation, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8001/v1=AG_EMBED_KEY,http://other/v1")
    monkeypatch.setenv("AG_EMBED_KEY", "sk-never-stored")
    at = open_app()
    at.file_uploader(key="new_pool").set_value((*uploads["pool.jsonl"], "application/octet-stream")).run()
    assert not any(r.key == "new_embedding_source" for r in at.radio)  # only for the embedding backend
    fill_form(at, uploads, "Served embeddings", "http://127.0.0.1:8001/v1")
    assert at.selectbox(key="new_embedding_api_base").options == ["http://127.0.0.1:8001/v1", "http://other/v1"]
    assert not at.exception and not at.error, [e.value for e in at.error]
    project = store.project_by_name("Served embeddings")
    assert project is not None and no_preparation == [project.id]
    settings = project.settings
    assert (settings.backend, settings.model, settings.embedding_server) == (
        "embedding",
        "served-embedder",
        "http://127.0.0.1:8001/v1",
    )
    assert "sk-never-stored" not in str(settings.to_dict()) and "AG_EMBED_KEY" not in str(settings.to_dict())
    assert "backend embedding (served-embedder from http://127.0.0.1:8001/v1)" in headline(at)


def test_without_an_allowed_server_none_is_offered_and_nothing_is_created(
    open_app, store, uploads, no_preparation, monkeypatch
):
    monkeypatch.delenv("ACTIVEGRADE_SAMPLING_SERVERS", raising=False)
    at = open_app()
    fill_form(at, uploads, "Nowhere", None)
    assert at.selectbox(key="new_embedding_api_base").options == []
    assert "Embed with a local model instead" in at.info[0].value
    assert "this deployment allows no server to take embeddings from" in at.error[0].value
    assert store.projects() == []


def test_a_server_without_a_model_name_is_refused(open_app, store, uploads, no_preparation, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8001/v1")
    at = open_app()
    fill_form(at, uploads, "Nameless", None, model=" ")
    assert "the name of the model the embedding server serves" in at.error[0].value
    assert store.projects() == []


@pytest.mark.parametrize("down", [True, False], ids=["server down", "HTTP 404"])
def test_a_failing_server_fails_the_preparation_with_one_line_naming_it_and_the_fix(
    open_app, store, uploads, no_preparation, monkeypatch, down
):
    with listening(lambda handler: (404, {}, b'{"error": {"message": "remote-body-marker"}}')) as listener:
        url = f"http://127.0.0.1:{free_port()}/v1" if down else listener.url
        monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", url)
        at = open_app()
        fill_form(at, uploads, "Failing", url)
        assert not at.error, [e.value for e in at.error]
        project = store.project_by_name("Failing")
        START(store, project.id, wait=True)  # the preparation job, run here
        assert len(listener.seen) == (0 if down else 1)
    error = store.project(project.id).error
    assert error.startswith(f"{url}/embeddings: ") and "\n" not in error
    if down:
        assert "no answer from the server" in error and "Fix: check that the server runs" in error
    else:
        assert "the server answered HTTP 404" in error and "Fix: check the model's name" in error
    assert "remote-body-marker" not in error
    at.run()
    shown = at.error[0].value  # as plain text: markdown's characters escaped
    assert shown.startswith("Preparation failed: ") and shown.replace("\\", "") == f"Preparation failed: {error}"
    assert any(b.key == "retry" for b in at.button)
