"""`activegrade projects demo`: the demo project created and prepared before the app starts (`make demo` runs
it), so the first visit finds it ready; run again, it changes nothing."""

from __future__ import annotations

import json

from core.cli import main
from core.store import Store


def test_the_demo_project_is_ready_before_the_app_starts_and_made_once(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    assert main(["projects", "demo", "--db-url", url, "--json", "-", "--quiet"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["status"] == "ready" and made["name"] == "Demo"
    store = Store.open(url)
    assert len(store.load_items(made["id"])) > 0
    assert main(["projects", "demo", "--db-url", url, "--json", "-", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out) == made and len(store.projects()) == 1


def test_a_missing_demo_folder_is_named_with_its_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    assert main(["projects", "demo", "--db-url", f"sqlite:///{tmp_path / 'demo.db'}"]) == 2
    err = capsys.readouterr().err
    assert "the demo pool is not available yet" in err and "Traceback" not in err
