"""Every file a project exports, by the name `activegrade export --format` takes: what it is, how it is
written from core.exports.project_export.ProjectFiles, its MIME type and file suffix."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.errors import NotThisKind
from core.exports.argilla import records_parquet
from core.exports.inspect_export import with_human_scores
from core.exports.label_studio import check_one_question, labeling_config, shown_fields, tasks_json
from core.exports.lm_eval_results import lm_eval_results
from core.exports.project_export import GRADE_FORMATS, ProjectFiles, grades_bytes, slug
from core.exports.report import criterion_rows, grades_csv
from core.inputs.readers import detect
from core.stats.queue import handed_out_order


@dataclass(frozen=True)
class Export:
    what: str  # what the audit trail records as downloaded, e.g. "grades (CSV)"
    write: Callable[[ProjectFiles], bytes]
    mime: str
    suffix: str  # the file name's end, e.g. "-grades.csv"


def _grades(fmt: str) -> Callable[[ProjectFiles], bytes]:
    return lambda files: grades_bytes(files.table, fmt)


def inspect_log(files: ProjectFiles) -> bytes:
    """The Inspect log the pool came from with the human grades as the score 'human' (core.exports.inspect_export)."""
    files.one_score("the Inspect log's score")
    pool = files.pool
    if detect(pool) != "inspect":
        raise NotThisKind(
            f"the pool of project {files.project.name!r}, {pool[0]!r}, is not an Inspect log",
            fix="choose another --format: the Inspect log exists only for a pool read from one",
        )
    return with_human_scores(pool, files.design_table, files.require_report())


def estimates_csv(files: ProjectFiles) -> bytes:
    """Every criterion's estimate and intervals, one row each (core.exports.report.criterion_rows; a one-question
    project's one row has the criterion ""), as spreadsheet-safe CSV."""
    return grades_csv(pd.DataFrame(criterion_rows(files.criteria)))


def lm_eval(files: ProjectFiles) -> bytes:
    """The human-graded metric as lm-eval's results JSON (core.exports.lm_eval_results)."""
    files.one_score("lm-eval's results")
    results = lm_eval_results(files.require_report(), files.pool, task=files.task, model=files.model)
    return (json.dumps(results, indent=2, ensure_ascii=False) + "\n").encode()


def label_studio_tasks(files: ProjectFiles) -> bytes:
    """The pool as Label Studio tasks (core.exports.label_studio), for a project that asks one question."""
    settings = files.project.settings
    check_one_question(files.project.name, settings)
    order = handed_out_order(files.design, settings.seed)
    return tasks_json(files.items, order, files.project.id, shown_fields(files.items, settings))


def label_studio_config(files: ProjectFiles) -> bytes:
    """The Label Studio labeling config for the project's scale (core.exports.label_studio), for a project
    that asks one question."""
    settings = files.project.settings
    check_one_question(files.project.name, settings)
    return labeling_config(settings.grading_scale, shown_fields(files.items, settings)).encode()


def argilla_records(files: ProjectFiles) -> bytes:
    """The pool and its grades as Argilla records, a Parquet file written by datasets (core.exports.argilla); a
    comparison is refused: a record holds one response, and its grades would lose the model each one is of."""
    if files.project.settings.compares:
        raise NotThisKind(
            f"project {files.project.name!r} compares models, and an Argilla record holds one response with its "
            "grades: the model each grade is of would be lost",
            fix="export the grades (csv, jsonl or parquet: each grade with its target and side) or the report",
        )
    return records_parquet(files.items, files.grades, shown_fields(files.items, files.project.settings))


GRADES_NAMES = {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet"}
EXPORTS: dict[str, Export] = {
    **{
        fmt: Export(f"grades ({GRADES_NAMES[fmt]})", _grades(fmt), mime, f"-grades.{fmt}")
        for fmt, (_, mime) in GRADE_FORMATS.items()
    },
    "estimates": Export("estimates (CSV, one row per criterion)", estimates_csv, "text/csv", "-estimates.csv"),
    "inspect": Export("grades (Inspect log)", inspect_log, "application/octet-stream", ""),
    "lm-eval": Export("results (lm-eval JSON)", lm_eval, "application/json", "-lm-eval-results.json"),
    "label-studio": Export(
        "tasks (Label Studio JSON)", label_studio_tasks, "application/json", "-label-studio-tasks.json"
    ),
    "label-studio-config": Export(
        "labeling config (Label Studio XML)", label_studio_config, "application/xml", "-label-studio-config.xml"
    ),
    "argilla": Export(
        "records (Argilla, Parquet)", argilla_records, "application/vnd.apache.parquet", "-argilla.parquet"
    ),
}


def exported_what(fmt: str, texts: bool = False) -> str:
    """What the audit trail records as downloaded: the export's ``what``, and whether it held the items' texts."""
    return EXPORTS[fmt].what + (" with prompts and responses" if texts and fmt in GRADE_FORMATS else "")


def export_name(files: ProjectFiles, fmt: str) -> str:
    """The export's file name: the project's slug and the format's suffix; the Inspect log the pool's name with
    '-graded' before its extension (never the original log's own name, which a command run beside it would
    overwrite)."""
    if fmt == "inspect":
        pool = Path(files.pool[0])
        return f"{pool.stem}-graded{pool.suffix}"
    return slug(files.project.name) + EXPORTS[fmt].suffix
