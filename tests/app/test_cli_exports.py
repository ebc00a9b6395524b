"""The headless exports: `activegrade export`, `report` and `status` write the Export page's own files from the
database, to a file or standard output, audited; `--json -`, `--quiet` and `--version` as every command has them."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main, version
from core.exports.formats import EXPORTS
from core.exports.project_export import ProjectFiles, report_bytes
from core.scales import BINARY
from core.services import audit
from core.services.reservations import submit


def _grade(store, project_id: int, n: int = 20) -> None:
    items = store.load_items(project_id)
    for position in range(n):
        label = "Correct" if items.loc[position, "label"] == 1 else "Incorrect"
        submit(store, project_id, position, BINARY, label, "ann", seconds=2.0)
    submit(store, project_id, 0, BINARY, "Correct", "bob", seconds=3.0)


def test_export_writes_the_export_pages_csv_and_the_estimate_is_recomputed_from_it(store, project_id, db_url, tmp_path):
    _grade(store, project_id)
    out = tmp_path / "grades.csv"
    assert main(["export", str(project_id), "--db-url", db_url, "--out", str(out)]) == 0
    files = ProjectFiles.of(store, store.project(project_id))
    assert out.read_bytes() == EXPORTS["csv"].write(files)  # the page's bytes
    g = pd.read_csv(out)
    y = g.groupby("position").agg(y=("grade", "mean"), h=("stratum", "first"), W=("weight", "first"))
    s = y.groupby("h").agg(m=("y", "mean"), W=("W", "first"))
    assert np.isclose((s.W * s.m).sum(), files.report["recompute"]["value"])
    trail = audit.trail(store, project_id)
    assert trail.iloc[-1]["actor"] == "cli" and trail.iloc[-1]["detail"] == {"what": "grades (CSV)"}


def test_export_by_name_to_standard_output_with_texts_and_a_json_report(store, project_id, db_url, capsysbinary):
    _grade(store, project_id)
    assert main(["export", "Arithmetic", "--db-url", db_url, "--format", "jsonl", "--texts", "--out", "-"]) == 0
    captured = capsysbinary.readouterr()
    rows = [json.loads(line) for line in captured.out.decode().splitlines()]
    assert len(rows) == 21 and rows[0]["prompt"].startswith("What is") and "response" in rows[0]
    assert b"wrote" not in captured.out  # messages never mix with the data
    assert audit.trail(store, project_id).iloc[-1]["detail"] == {"what": "grades (JSONL) with prompts and responses"}
    assert main(["export", "Arithmetic", "--db-url", db_url, "--format", "parquet", "--out", "-", "-q"]) == 0
    table = pd.read_parquet(io.BytesIO(capsysbinary.readouterr().out))
    assert len(table) == 21 and "prompt" not in table.columns


def test_export_json_report_on_standard_output(store, project_id, db_url, tmp_path, capsys):
    _grade(store, project_id)
    out = tmp_path / "g.parquet"
    assert (
        main(["export", str(project_id), "--db-url", db_url, "--format", "parquet", "--out", str(out), "--json", "-"])
        == 0
    )
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["grades"] == 21 and summary["file"] == str(out) and summary["bytes"] == out.stat().st_size
    assert "wrote" in captured.err


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_report_writes_the_export_pages_report(store, project_id, db_url, tmp_path, fmt):
    _grade(store, project_id)
    out = tmp_path / f"report.{fmt}"
    assert main(["report", str(project_id), "--db-url", db_url, "--format", fmt, "--out", str(out), "-q"]) == 0
    files = ProjectFiles.of(store, store.project(project_id))
    assert out.read_bytes() == report_bytes(files.report, fmt)


def test_report_without_grades_fails_clearly_and_writes_nothing(store, project_id, db_url, tmp_path, capsys):
    out = tmp_path / "report.md"
    assert main(["report", str(project_id), "--db-url", db_url, "--out", str(out)]) == 2
    assert "has no grade yet" in capsys.readouterr().err and not out.exists()


def test_an_export_that_cannot_be_made_leaves_no_file(store, project_id, db_url, tmp_path, capsys):
    _grade(store, project_id)
    out = tmp_path / "out" / "graded.eval"
    assert main(["export", str(project_id), "--db-url", db_url, "--format", "inspect", "--out", str(out)]) == 2
    assert "is not an Inspect log" in capsys.readouterr().err
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_status_lists_projects_as_text_and_as_json(store, project_id, db_url, capsys):
    _grade(store, project_id, n=5)
    assert main(["status", "--db-url", db_url]) == 0
    assert "Arithmetic\tready\t5 of 40 items graded (6 grades)" in capsys.readouterr().out
    assert main(["status", "--db-url", db_url, "--json", "-"]) == 0
    captured = capsys.readouterr()
    (state,) = json.loads(captured.out)["projects"]
    assert state["status"] == "ready" and state["graded_items"] == 5 and state["items"] == 40
    assert "Arithmetic" in captured.err  # the text went to stderr, beside the JSON
    assert main(["status", "--db-url", db_url, "-q"]) == 0 and capsys.readouterr().out == ""


def test_status_of_an_unknown_project_names_those_there_are(project_id, db_url, capsys):
    assert main(["status", "nope", "--db-url", db_url]) == 2
    assert f"{project_id} (Arithmetic)" in capsys.readouterr().err


def test_the_database_url_comes_from_the_environment(project_id, db_url, capsys):
    assert main(["status"]) == 0  # db_url set ACTIVEGRADE_DB_URL
    assert "Arithmetic" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"activegrade {version()}"


def test_export_page_offers_the_grades_with_prompts_and_responses(open_app, store, project_id):
    _grade(store, project_id)
    at = open_app("app_pages/export.py", project_id=project_id)
    plain = {b.key: b.proto.url for b in at.get("download_button")}
    at.toggle(key="export_texts").set_value(True).run()
    assert not at.exception
    assert "prompt and response" in at.caption[0].value
    with_texts = {b.key: b.proto.url for b in at.get("download_button")}
    assert all(with_texts[k] != plain[k] for k in ("dl_csv", "dl_jsonl", "dl_parquet"))
    assert with_texts["dl_report_md"] == plain["dl_report_md"]
