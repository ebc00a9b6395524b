"""Projects page: a numeric pool column chosen as the design's proxy, and an eval log uploaded as the pool."""

from __future__ import annotations

import json
from pathlib import Path

from core.testing.waiting import prepared

LOGS = Path(__file__).resolve().parents[1] / "data" / "eval_logs"


def test_a_numeric_column_can_be_the_proxy(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    rows = [json.loads(line) for line in uploads["pool.jsonl"][1].decode().splitlines()]
    judged = "".join(json.dumps({**r, "judge": r["label"]}) + "\n" for r in rows).encode()
    at = open_app()
    at.text_input(key="new_name").set_value("Judged")
    at.file_uploader(key="new_pool").set_value(("pool.jsonl", judged, "application/octet-stream"))
    at.run()
    proxy = at.selectbox(key="new_proxy")
    assert proxy.options == ["none: the surrogate's agreement", "judge"]  # text columns and the label are not offered
    proxy.set_value("judge")
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    project = store.project_by_name("Judged")
    assert project.settings.proxy == "judge"
    prepared(store, project.id)
    assert store.project(project.id).status == "ready", store.project(project.id).error
    at.run()
    assert "proxy judge" in next(c.value for c in at.caption if " · seed " in c.value)  # the project's caption


def test_an_inspect_log_upload_with_a_picked_label(open_app, store, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    log = LOGS / "arith_epochs3.eval"
    at = open_app()
    at.text_input(key="new_name").set_value("Inspect")
    at.file_uploader(key="new_pool").set_value((log.name, log.read_bytes(), "application/octet-stream"))
    at.text_input(key="new_columns").set_value("label=match")
    at.run()
    assert "match" in at.selectbox(key="new_proxy").options
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    project = store.project_by_name("Inspect")
    assert project.settings.columns == "label=match"
    prepared(store, project.id)
    assert store.project(project.id).status == "ready", store.project(project.id).error
    assert store.item_count(project.id) == 8
