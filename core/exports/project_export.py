"""One project's downloads as bytes, the same for the Export page (app_pages/export.py) and the command line
(`activegrade export`, `activegrade report`): the grades (CSV, JSONL, Parquet), optionally with each item's
prompt and response, and the report (JSON, Markdown, one-page HTML).

Every file's bytes depend only on the data (the report's time is its last grade's), so the same grades give
the same file whether downloaded or written by a script.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from core.errors import InputError, NotThisKind, NotYet
from core.exports.comparison_report import comparison_html, comparison_markdown, comparison_report, is_comparison
from core.exports.report import (
    ChainCheck,
    grades_csv,
    grades_jsonl,
    grades_parquet,
    grades_table,
    report,
    report_markdown,
)
from core.exports.report_html import report_html
from core.inputs.targets import response_column
from core.services import review
from core.services.comparison_reading import comparison_reading
from core.services.criteria_reading import CriterionReading, criteria_now
from core.services.project import slug
from core.services.tracking import current_estimate
from core.stats.allocation import Design
from core.stats.design import prepared_design
from core.stats.skips import skip_bound
from core.store import ProjectInfo, Store, audit_chain
from core.store.reviews import reviews as review_rows

TEXT_COLUMNS = ("prompt", "response")
"""The item's texts a grades export may carry beside its grades (after the grades' own columns)."""

GRADE_FORMATS: dict[str, tuple[Callable[[pd.DataFrame], bytes], str]] = {
    "csv": (grades_csv, "text/csv"),
    "jsonl": (grades_jsonl, "application/jsonl"),
    "parquet": (grades_parquet, "application/vnd.apache.parquet"),
}
"""Grades format -> (writer, MIME type)."""

REPORT_FORMATS: dict[str, tuple[Callable[[dict[str, Any]], str], str]] = {
    "json": (lambda data: json.dumps(data, indent=2), "application/json"),
    "md": (lambda data: (comparison_markdown if is_comparison(data) else report_markdown)(data), "text/markdown"),
    "html": (lambda data: (comparison_html if is_comparison(data) else report_html)(data), "text/html"),
}
"""Report format -> (writer, MIME type): a comparison's report (core.exports.comparison_report) or a one-model
project's (core.exports.report)."""
REPORT_EXPORTED = {"json": "report (JSON)", "md": "report (Markdown)", "html": "report (HTML)"}
"""Report format -> what the audit trail says was downloaded."""


def file_name(project: ProjectInfo, what: str, fmt: str) -> str:
    """The download's file name, e.g. 'my-project-grades.csv'."""
    return f"{slug(project.name)}-{what}.{fmt}"


def project_design(store: Store, project: ProjectInfo) -> tuple[pd.DataFrame, Design]:
    """A ready project's items and sampling design, read from the store (the pages cache theirs, ui/plan.py)."""
    if project.status != "ready":
        raise InputError(
            f"project {project.name!r} is not ready ({project.status})",
            fix="wait for its preparation to finish (`activegrade status`)",
        )
    items = store.load_items(project.id)
    return items, prepared_design(items, project.settings.stopping)


def grades_export(
    grades: pd.DataFrame,
    items: pd.DataFrame,
    design: Design,
    *,
    reviews: pd.DataFrame | None = None,
    criterion: str = "",
    texts: bool = False,
) -> pd.DataFrame:
    """core.exports.report.grades_table's columns (the final grades of ``reviews`` and ``criterion``), and with
    ``texts`` each item's TEXT_COLUMNS (those the pool has) after them; a comparison's ``response`` is each
    grade's own, the response of its ``target`` (core.inputs.targets.response_column), which the export
    dropped while saying it carried the responses."""
    table = grades_table(grades, items, design, reviews, criterion)
    if not texts:
        return table
    positions = table["position"].to_numpy(dtype=int)
    for column in TEXT_COLUMNS:
        if column in items.columns:
            table[column] = items[column].to_numpy()[positions] if len(table) else pd.Series(dtype=object)
    if "target" in table.columns and "response" not in items.columns:
        texts = {t: items[response_column(t)].to_numpy() for t in set(table["target"])}
        table["response"] = [texts[t][p] for p, t in zip(positions, table["target"])]
    return table


def grades_bytes(table: pd.DataFrame, fmt: str) -> bytes:
    """The grades table as a file of ``fmt`` (GRADE_FORMATS)."""
    return GRADE_FORMATS[fmt][0](table)


def report_data(store: Store, project: ProjectInfo, design: Design) -> dict[str, Any] | None:
    """The project's report (core.exports.report.report) from its stored grades and skips, with the audit trail's
    hash chain checked (core.store.audit_chain.verify: its sealed events, sealing none), and in a rubric project
    every criterion's reading (core.services.criteria_reading); a comparison's is
    core.exports.comparison_report's. None before the first grade (a report needs one)."""
    if project.settings.compares:
        grades = store.target_grades(project.id)
        if grades.empty:
            return None
        reading = comparison_reading(store, project.id, design)
        chain = ChainCheck(audit_chain.verify(store))
        waiting = len(review.waiting(store, project.id))
        return comparison_report(
            project,
            design,
            reading,
            store.input_files(project.id),
            grades,
            chain,
            waiting,
            _reviewed_at(store, project),
        )
    graded = store.graded_positions(project.id)
    result = current_estimate(design, graded, project.settings.method)
    if result.n == 0:
        return None
    skips = skip_bound(design, graded, graded.values(), store.skipped_positions(project.id))
    rubric = project.settings.rubric is not None
    return report(
        project,
        design,
        result,
        store.input_files(project.id),
        store.grades(project.id),
        skips,
        reviewed=store.reviewed_grades(project.id),
        validated=review.validated(store, project.id, design),
        chain=ChainCheck(audit_chain.verify(store)),
        criteria=criteria_now(store, project.id, design, project.settings, project.settings.method) if rubric else (),
        rubric_grades=store.rubric_grades(project.id) if rubric else None,
        skip_steps=store.skip_steps(project.id),
        waiting=len(review.waiting(store, project.id)),
        settled=review.disagreements_settled(store, project.id),
        reviewed_at=_reviewed_at(store, project),
        others=bool(skips.skipped) and store.others_grade(project.id),
    )


def _reviewed_at(store: Store, project: ProjectInfo) -> pd.Series:
    """When each of the project's active reviews was made (the report's time reads them: core.exports.report.as_of)."""
    return review_rows(store, project.id)["created_at"]


def report_bytes(data: dict[str, Any], fmt: str) -> bytes:
    """The report as a file of ``fmt`` (REPORT_FORMATS), UTF-8."""
    return REPORT_FORMATS[fmt][0](data).encode("utf-8")


@dataclass
class ProjectFiles:
    """What one project's exports are made from, each part read from the store once and only when an export
    needs it. ``texts``: grades exports carry each item's prompt and response; ``task`` and ``model`` name
    them in the lm-eval results (core.exports.lm_eval_results)."""

    store: Store
    project: ProjectInfo
    items: pd.DataFrame
    design: Design
    texts: bool = False
    task: str | None = None
    model: str | None = None

    @classmethod
    def of(cls, store: Store, project: ProjectInfo, **options: Any) -> ProjectFiles:
        """A ready project's files, its items and design read from the store (project_design); ``options``: the
        fields after ``design``."""
        return cls(store, project, *project_design(store, project), **options)

    @cached_property
    def pool(self) -> tuple[str, bytes]:
        """The pool's upload: (file name, bytes)."""
        return self.store.input_files(self.project.id)["pool"]

    @cached_property
    def grades(self) -> pd.DataFrame:
        """The active grades (Store.grades; a comparison's with their target and side, Store.target_grades)."""
        if self.project.settings.compares:
            return self.store.target_grades(self.project.id)
        return self.store.grades(self.project.id)

    @cached_property
    def reviews(self) -> pd.DataFrame:
        """The final grades reviewers set (Store.active_reviews)."""
        return self.store.active_reviews(self.project.id)

    @cached_property
    def design_table(self) -> pd.DataFrame:
        """The design criterion's grades as grades_export's table (of ``grades``: one score per item for the
        Inspect log)."""
        criterion = self.project.settings.design_criterion
        return grades_export(
            self.grades, self.items, self.design, reviews=self.reviews, criterion=criterion, texts=self.texts
        )

    @cached_property
    def table(self) -> pd.DataFrame:
        """The grades export's table (grades_export): in a rubric project every criterion's grades with their
        ``criterion`` (Store.rubric_grades), else ``design_table``."""
        if self.project.settings.rubric is None:
            return self.design_table
        rubric_grades = self.store.rubric_grades(self.project.id)
        return grades_export(rubric_grades, self.items, self.design, reviews=self.reviews, texts=self.texts)

    def one_score(self, what: str) -> None:
        """NotThisKind in a comparison for an export of one score (``what``): one number over its grades would
        mix its models; each model's score and each difference are in its report."""
        if self.project.settings.compares:
            raise NotThisKind(
                f"project {self.project.name!r} compares models, and {what} holds one score, which would mix them",
                fix="read each model's score and each difference in its report (the Export page's, "
                f"`activegrade report {self.project.id}`, or GET /api/v1/projects/{self.project.id}/report), or "
                "export the grades (each with its target)",
            )

    @cached_property
    def criteria(self) -> tuple[CriterionReading, ...]:
        """Every criterion's reading now (core.services.criteria_reading; one row without a rubric), with the
        project's estimator; InputError in a comparison (`one_score`)."""
        self.one_score("the estimates file")
        settings = self.project.settings
        return criteria_now(self.store, self.project.id, self.design, settings, settings.method)

    @cached_property
    def report(self) -> dict[str, Any] | None:
        """The report's data (report_data), None before the first grade."""
        return report_data(self.store, self.project, self.design)

    def require_report(self) -> dict[str, Any]:
        """The report's data; NotYet before the first grade."""
        if self.report is None:
            raise NotYet(
                f"project {self.project.name!r} has no grade yet, and the report needs one", fix="grade an item first"
            )
        return self.report
