"""The human-graded metric as lm-evaluation-harness writes its results (`results_<date>.json`), so the tools that
read lm-eval's results (its own `--output_path` readers, leaderboards' parsers, W&B's lm-eval logger) take the
human grade as one more metric of the task.

The shape is lm-eval 0.4's: `results[task]` holds `alias` and `"<metric>,<filter>"` keys; the metric is
`human` (filter `none`): `human,none` is ActiveGrade's estimate of the pool's mean grade,
`human_stderr,none` its standard error, and `human_ci_low,none` / `human_ci_high,none` the interval the
project's reading reports now (core.exports.inspect_export.reported_interval).
`n-samples[task]` gives the pool's size (`original`) and the graded items (`effective`),
`higher_is_better[task].human` is true, `task_hashes[task]` is the SHA-256 of the samples file the pool came
from (lm-eval hashes its samples there), `config.model` and `model_name` the model the user names
(lm-eval's samples file does not hold it). `activegrade` adds what lm-eval has no key for: the interval's name
and level, the estimator, grades, the project.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pandas as pd

from core.exports.inspect_export import reported_interval, result_summary

METRIC = "human"
FILTER = "none"
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+?)(_\d{4}-\d{2}-\d{2}T[\d\-.:]+)?$")
"""lm-eval's samples file name: samples_<task>_<date>.jsonl, the date as 2024-05-13T12-34-56.123456 (a
renamed file may have lost it)."""


def task_of(file_name: str) -> str:
    """The task in an lm-eval samples file's name, else the file's stem."""
    stem = Path(file_name).name.removesuffix(".jsonl")
    match = _SAMPLES_NAME.match(stem)
    return match["task"] if match else Path(stem).stem


def lm_eval_results(
    report: dict[str, Any], pool: tuple[str, bytes], *, task: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """The results JSON (see the module docstring) of ``report`` (core.exports.report.report) for the pool upload
    ``pool`` (name, bytes); ``task`` defaults to the one in the pool's file name."""
    stopping = reported_interval(report)
    task = task or task_of(pool[0])
    key = f"{METRIC},{FILTER}"
    return {
        "results": {
            task: {
                "alias": task,
                key: stopping["value"],
                f"{METRIC}_stderr,{FILTER}": stopping["se"],
                f"{METRIC}_ci_low,{FILTER}": stopping["ci_low"],
                f"{METRIC}_ci_high,{FILTER}": stopping["ci_high"],
            }
        },
        "group_subtasks": {task: []},
        "configs": {task: {"task": task, "metric_list": [{"metric": METRIC, "higher_is_better": True}]}},
        "versions": {task: None},
        "higher_is_better": {task: {METRIC: True}},
        "n-samples": {task: {"original": report["items"], "effective": stopping["grades"]}},
        "config": {"model": model, "model_args": None},
        "model_name": model,
        "task_hashes": {task: hashlib.sha256(pool[1]).hexdigest()},
        "date": pd.Timestamp(report["generated_at"]).timestamp(),
        "activegrade": {**result_summary(report, stopping), "version": report["activegrade_version"]},
    }
