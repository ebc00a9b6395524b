"""The human grades back into the Inspect AI log the pool came from: one more score per sample, and the
score with ActiveGrade's estimate in the log's results.

Each graded item's sample (epoch 1: the response the experts graded) gets
`scores[scorer] = {"value": grade, "answer": null, "explanation": comment,
"metadata": {"label": ..., "grader": ...}}`, the shape of Inspect's Score, in the
sample itself, in the sample summaries (`summaries.json` and the journal's, which
`inspect view` lists) and in the log's `reductions` (one EvalSampleReductions for
the scorer). An item graded by several graders gets its final grade (a reviewer's, else their mean grade), its
comments joined.

With the report (core.exports.report.report), `results.scores` lists the scorer
as an EvalScore whose metrics are `mean` (the plain mean of the graded items'
grades), `estimate` (ActiveGrade's estimate of the pool's mean grade), `stderr`,
and `ci_low`/`ci_high` (the interval the project's reading reports now,
`reported_interval`; its name and level in the score's metadata), and `results.headline` names its `estimate`, so `inspect view` and
`inspect_ai.log.read_eval_log` show it first. A scorer of that name already in
the log is replaced, never listed twice. Everything else in the log is copied
unchanged; a .eval archive is rewritten with standard deflate compression
(Inspect reads it).
"""

from __future__ import annotations

import json
import zipfile
from io import BytesIO
from typing import Any

import pandas as pd

from core.errors import InputError
from core.inputs.readers.inspect_log import FIX, member_bytes, sample_file

DEFAULT_SCORER = "human"
SUMMARY_FILES = ("summaries.json",)
JOURNAL_SUMMARIES = "_journal/summaries/"


def human_scores(table: pd.DataFrame) -> dict[str, dict]:
    """Per item id, the Score of its grades (core.exports.report.grades_table's columns item, final_grade, label,
    grader, comment): the item's final grade (a reviewer's, else the mean of its grades: the one the estimate
    reads), the labels and graders in grading order, the non-empty comments."""
    scores = {}
    for item, rows in table.groupby("item", sort=False):
        comments = [c for c in rows["comment"].fillna("").astype(str) if c]
        scores[str(item)] = {
            "value": float(rows["final_grade"].iloc[0]),
            "answer": None,
            "explanation": "\n".join(comments) or None,
            "metadata": {"label": rows["label"].astype(str).tolist(), "grader": rows["grader"].astype(str).tolist()},
        }
    return scores


def eval_score(scores: dict[str, dict], report: dict[str, Any], scorer: str) -> dict[str, Any]:
    """The EvalScore of the human grades (see the module docstring); its unscored samples are the pool's
    items without a grade (the log's epochs aside)."""
    stopping = reported_interval(report)
    values = [s["value"] for s in scores.values()]
    numbers = {
        "mean": sum(values) / len(values) if values else None,
        "estimate": stopping["value"],
        "stderr": stopping["se"],
        "ci_low": stopping["ci_low"],
        "ci_high": stopping["ci_high"],
    }
    return {
        "name": scorer,
        "scorer": scorer,
        "scored_samples": len(scores),
        "unscored_samples": max(report["items"] - len(scores), 0),
        "params": {},
        "metrics": {
            name: {"name": name, "value": value, "params": {}} for name, value in numbers.items() if value is not None
        },
        "metadata": {"source": "ActiveGrade", **result_summary(report, stopping)},
    }


def with_results(
    header: dict[str, Any], scores: dict[str, dict], report: dict[str, Any], scorer: str = DEFAULT_SCORER
) -> None:
    """Put the scorer's EvalScore in the header's ``results`` (replacing one of that name) and make it the headline."""
    results = header.get("results") or {}
    listed = [s for s in results.get("scores") or [] if s.get("name") != scorer]
    results["scores"] = [*listed, eval_score(scores, report, scorer)]
    results.setdefault("total_samples", report["items"])
    results.setdefault("completed_samples", report["items"])
    results["headline"] = {"scorer": scorer, "score": scorer, "metric": "estimate"}
    header["results"] = results


def with_reductions(reductions: list[dict] | None, scores: dict[str, dict], scorer: str = DEFAULT_SCORER) -> list[dict]:
    """The log's reductions with the scorer's (one sample score per graded item) replacing any of that name."""
    kept = [r for r in reductions or [] if r.get("scorer") != scorer]
    samples = [{**score, "history": [], "sample_id": item} for item, score in scores.items()]
    return [*kept, {"scorer": scorer, "reducer": "mean", "samples": samples}]


def with_human_scores(
    log: tuple[str, bytes], table: pd.DataFrame, report: dict[str, Any] | None = None, scorer: str = DEFAULT_SCORER
) -> bytes:
    """The log (an upload pair, .eval or .json) with the human grades of `table` added as the score `scorer`,
    and with ``report`` (core.exports.report.report) that score in its results (see the module docstring)."""
    name, data = log
    scores = human_scores(table)
    if data[:2] != b"PK":
        try:
            content = json.loads(data)
        except ValueError as error:
            raise InputError(f"the log is neither a .eval archive nor JSON ({error})", file=name, fix=FIX) from None
        for sample in content.get("samples") or []:
            _add(sample, scores, scorer)
        content["reductions"] = with_reductions(content.get("reductions"), scores, scorer)
        if report is not None:
            with_results(content, scores, report, scorer)
        return json.dumps(content, ensure_ascii=False).encode()
    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        members = old.namelist()
        for member in members:
            new.writestr(member, _member(name, old, member, scores, report, scorer))
        if "reductions.json" not in members:
            new.writestr("reductions.json", json.dumps(with_reductions([], scores, scorer)))
    return out.getvalue()


def _member(
    name: str, archive: zipfile.ZipFile, member: str, scores: dict[str, dict], report: dict | None, scorer: str
) -> bytes:
    """One archive member's bytes, with the human scores where it holds samples, summaries, reductions or results."""
    content = member_bytes(name, archive, member)
    if sample_file(member):
        sample = json.loads(content)
        return json.dumps(sample, ensure_ascii=False).encode() if _add(sample, scores, scorer) else content
    if member in SUMMARY_FILES or member.startswith(JOURNAL_SUMMARIES):
        summaries = json.loads(content)
        for summary in summaries:
            _add(summary, scores, scorer)
        return json.dumps(summaries, ensure_ascii=False).encode()
    if member == "reductions.json":
        return json.dumps(with_reductions(json.loads(content), scores, scorer), ensure_ascii=False).encode()
    if member == "header.json" and report is not None:
        header = json.loads(content)
        with_results(header, scores, report, scorer)
        return json.dumps(header, ensure_ascii=False).encode()
    return content


def _add(sample: dict, scores: dict[str, dict], scorer: str) -> bool:
    """Add the item's score to an epoch-1 sample (or its summary); True when it was graded."""
    item = str(sample.get("id"))
    if int(sample.get("epoch", 1)) != 1 or item not in scores:
        return False
    sample["scores"] = {**(sample.get("scores") or {}), scorer: scores[item]}
    return True


def reported_interval(report: dict[str, Any]) -> dict[str, Any]:
    """The interval a tool's results file gives as ActiveGrade's (``ci_low``, ``ci_high``, ``interval``, ``level``)
    with the estimate reported with it (``value``: the stop's where the looks said done before the grades given,
    core.services.reading.reported_estimate) and that estimate's standard error ``se`` and ``grades``: the one
    the project's reading reports now (core.exports.report's ``stopping_interval``: the planned look's at the
    stop, the anytime one before it, widened by the skips' worst case), or the fixed-n interval where the budget is fixed in advance or a stratum has no grade yet:
    the report's ``estimate.reported``, decided there."""
    return report["estimate"]["reported"]


def result_summary(report: dict[str, Any], stopping: dict[str, Any]) -> dict[str, Any]:
    """What a tool's results file says of ActiveGrade's result (Inspect's scorer metadata, lm-eval's results):
    the project, estimator, the stopping rule's interval and level, the fixed-n interval and the counts."""
    e = report["estimate"]
    return {
        "project": report["project"],
        "estimator": e["method"],
        "interval": stopping["interval"],
        "level": stopping["level"],
        "fixed_n_interval": [e["ci_low"], e["ci_high"]],
        "graded_items": e["grades"],
        "grades": e["grades_given"],
    }
