"""Results written back into the tools evaluations come from, read by those tools' own readers: the Inspect log
with the human score in its results (inspect_ai.log.read_eval_log), and lm-eval's results JSON."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from core.cli import main
from core.exports.formats import export_name
from core.exports.inspect_export import reported_interval, result_summary
from core.exports.lm_eval_results import task_of
from core.exports.project_export import ProjectFiles
from core.scales import BINARY
from core.services.project import create_project, start_preparation
from core.services.reservations import submit
from core.store import Store

LOGS = Path(__file__).parent / "data" / "eval_logs"


def _graded_project(tmp_path, pool: Path, samples: Path | None = None, settings: dict | None = None):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    store = Store.open(url)
    upload = None if samples is None else (samples.name, samples.read_bytes())
    pid = create_project(store, "Eval", (pool.name, pool.read_bytes()), upload, settings=settings or {}, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    items = store.load_items(pid)
    for position in range(len(items) - 2):  # two items left ungraded
        submit(store, pid, position, BINARY, "Correct" if position % 3 else "Incorrect", "ann", seconds=2.0)
    submit(store, pid, 0, BINARY, "Correct", "bob", seconds=2.0)
    return url, store, pid


@pytest.mark.parametrize("log", ["arith_epochs3.eval", "arith.json"])
def test_the_inspect_log_lists_the_human_score_and_the_estimate_in_its_results(tmp_path, log):
    url, store, pid = _graded_project(tmp_path, LOGS / log, settings={"proxy": "match"})
    out = tmp_path / "out" / log
    assert main(["export", str(pid), "--db-url", url, "--format", "inspect", "--out", str(out), "-q"]) == 0
    report = ProjectFiles.of(store, store.project(pid)).report
    read = read_eval_log(str(out))
    (human,) = [s for s in read.results.scores if s.name == "human"]
    assert [s.name for s in read.results.scores][0] == "match"  # the log's own scorer stays, first
    metrics = {name: m.value for name, m in human.metrics.items()}
    e = report["estimate"]
    assert metrics["estimate"] == pytest.approx(e["value"]) and metrics["stderr"] == pytest.approx(e["se"])
    assert metrics["ci_low"] == pytest.approx(e["stopping_interval"]["ci_low"])  # the interval the reading reports
    assert metrics["ci_low"] <= metrics["estimate"] <= metrics["ci_high"]
    assert human.scored_samples == 6 and human.unscored_samples == 2 and human.metadata["level"] == 0.95
    assert read.results.headline.scorer == "human" and read.results.headline.metric == "estimate"
    graded = {s.id: s.scores["human"].value for s in read.samples if s.epoch == 1 and "human" in s.scores}
    assert len(graded) == 6 and graded["q01"] == 0.5  # ann's Incorrect and bob's Correct
    assert {r.scorer for r in read.reductions} >= {"human", "match"}
    assert read_eval_log(str(out), header_only=True).results.scores[-1].name == "human"
    assert export_name(ProjectFiles.of(store, store.project(pid)), "inspect") == log.replace(".", "-graded.")


def test_exporting_twice_lists_the_human_score_once(tmp_path):
    url, store, pid = _graded_project(tmp_path, LOGS / "arith.eval", settings={"proxy": "match"})
    files = ProjectFiles.of(store, store.project(pid))
    from core.exports.inspect_export import with_human_scores

    again = with_human_scores(
        ("arith.eval", with_human_scores(files.pool, files.table, files.report)), files.table, files.report
    )
    (tmp_path / "twice.eval").write_bytes(again)
    read = read_eval_log(str(tmp_path / "twice.eval"))
    assert [s.name for s in read.results.scores] == ["match", "human"]
    assert [r.scorer for r in read.reductions].count("human") == 1


def test_lm_eval_results_json_for_the_human_graded_metric(tmp_path, capsys):
    pool = LOGS / "samples_arith.jsonl"
    url, store, pid = _graded_project(tmp_path, pool, LOGS / "samples_arith_repeats.jsonl")
    assert main(["export", str(pid), "--db-url", url, "--format", "lm-eval", "--model", "smollm2", "--out", "-"]) == 0
    results = json.loads(capsys.readouterr().out)
    report = ProjectFiles.of(store, store.project(pid)).report
    assert results["results"]["arith"]["human,none"] == pytest.approx(report["estimate"]["value"])
    assert results["results"]["arith"]["human_stderr,none"] == pytest.approx(report["estimate"]["se"])
    assert results["task_hashes"]["arith"] == hashlib.sha256(pool.read_bytes()).hexdigest()
    assert results["config"]["model"] == "smollm2" and results["model_name"] == "smollm2"
    assert results["n-samples"]["arith"] == {"original": 8, "effective": 6}
    assert results["higher_is_better"]["arith"] == {"human": True}


def test_the_task_is_read_from_lm_evals_samples_file_name():
    assert task_of("samples_gsm8k_2024-05-13T12-34-56.123456.jsonl") == "gsm8k"
    assert task_of("samples_mmlu_high_school_math_2025-01-02T03-04-05.6.jsonl") == "mmlu_high_school_math"
    assert task_of("samples_arith.jsonl") == "arith" and task_of("pool.jsonl") == "pool"


def test_the_tools_get_the_interval_the_reading_reports_with_its_own_level():
    estimate = {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "level": 0.95, "interval": "fixed-n", "method": "m"}
    estimate |= {"grades": 90, "grades_given": 91, "anytime": {"ci_low": 0.3, "ci_high": 0.7, "interval": "anytime"}}
    look = {"ci_low": 0.42, "ci_high": 0.58, "level": 0.952, "interval": "look 2 of 2", "when": "at the stop"}
    report = {"project": "P", "estimate": {**estimate, "stopping_interval": look, "reported": look}}
    assert reported_interval(report) == look  # the report's choice (tests/app/test_report_exports.py), not the anytime
    assert result_summary(report, look)["level"] == 0.952
