"""The report of a comparison project (docs/compare.md): each model's score and each difference with its interval,
as the Dashboard's panel reads them (core.services.comparison_reading), in JSON, Markdown and one HTML page.

A comparison has no single score: one number over its grades would mix the models (the one-model report
headlined their mean, 0.3645 for models at 0.405 and 0.324; evaluation lead's review). So this report gives
per-model and per-pair figures only; the graders, the audit trail, the inputs and the settings are read as
the one-model report reads them (core.exports.report).
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from core.exports.report import (
    ChainCheck,
    as_of,
    as_of_line,
    audit_chain_lines,
    audit_chain_section,
    graders_lines,
    graders_section,
    inputs_section,
    markdown_line,
    markdown_table,
    settings_table,
    sources_line,
)
from core.exports.report_html import audit_chain_parts, graders_parts, html_page, html_table, inputs_parts, paragraph
from core.inputs.markup import one_line_plain
from core.services.comparison_reading import DECIDED_WORDS, ComparisonReading, statement
from core.services.progress import level_percent, waiting_for_review
from core.stats.allocation import Design
from core.stats.intervals import LEVEL
from core.store import ProjectInfo, json_safe
from core.version import version

METHOD = (
    "Every item's responses are graded on one card, in an order drawn per item and recorded, the models' names "
    "hidden. Each model's score is the stratified mean of its grades, and each difference mean(A) - mean(B) the "
    "stratified mean of the paired differences, over the items graded for every model (a response's grade is "
    "a reviewer's final grade where one was set, else the mean of its graders' grades). Intervals are fixed-n "
    "Korn-Graubard ones (low, high) and anytime-valid confidence sequences (anytime_low, anytime_high), each at "
    "1 - 0.05 / P for P pairs (Bonferroni), so that all of them hold together at 95%; a difference is resolved "
    "when its interval excludes 0, the anytime-valid one's while grading goes on, the fixed-n one's once the "
    "budget fixed in advance or every item is graded (docs/compare.md)."
)


def comparison_report(
    project: ProjectInfo,
    design: Design,
    reading: ComparisonReading,
    input_files: dict[str, tuple[str, bytes]],
    grades: pd.DataFrame,
    chain: ChainCheck | None = None,
    waiting: int = 0,
    reviewed_at: pd.Series | None = None,
) -> dict[str, Any]:
    """Everything needed to read and check a comparison: its models' scores and differences (``reading``), the
    graders (their agreement over the responses graded twice), the audit trail's hash chain, the input files by
    name and SHA-256, the settings and the seed; ``grades``: Store.target_grades; ``waiting``: the items waiting
    for a reviewer's final grade (core.services.review.waiting), which the figures read at their graders' mean
    grade, so the statement is provisional until they are settled (a full census with 16 disagreements waiting
    said "A better" at a zero-width interval, and nothing of them: an integrator's review); ``reviewed_at``: when
    each active review was made (core.exports.report.as_of)."""
    models = reading.model_table().to_dict(orient="records")
    response = pd.MultiIndex.from_arrays([grades["position"], grades["target"]])
    by_response = grades.assign(position=pd.factorize(response)[0])  # a response graded twice: one "item"
    return json_safe(
        {
            "project": project.name,
            "generated_at": as_of(project, grades, reviewed_at),
            "activegrade_version": version(),
            "method": METHOD,
            "inputs": inputs_section(input_files),
            "items": design.N,
            "comparison": {
                "targets": list(project.settings.targets),
                "graded_items": reading.graded_items,
                "grades": len(grades),
                "level": reading.level,
                "joint_level": LEVEL,
                "models": models,
                "pairs": reading.table().to_dict(orient="records"),
                "statement": statement(reading),
                "statement_read_from": reading.decided_by,
                "waiting_items": waiting,
            },
            "graders": {**graders_section(by_response, project.settings), "unit": "response"},
            "audit_chain": audit_chain_section(chain),
            "settings": project.settings.shared_dict(),
            "seed": project.settings.seed,
        }
    )


def is_comparison(data: dict[str, Any]) -> bool:
    """Whether ``data`` is a comparison's report (`comparison_report`), not a one-model one."""
    return "comparison" in data


def _summary(c: dict[str, Any]) -> str:
    return (
        f"{c['graded_items']:,} items graded for every model ({c['grades']:,} grades). "
        f"Intervals at {level_percent(c['level'])} each, {level_percent(c['joint_level'])} for all of them together. "
        f"{c['statement']} ({DECIDED_WORDS[c['statement_read_from']]}).{_waiting(c.get('waiting_items', 0))}"
    )


def _waiting(count: int) -> str:
    """What the items waiting for review leave open, in words ("" when none wait)."""
    if not (words := waiting_for_review(count)):
        return ""
    return (
        f" Provisional: {words} (flagged, grades that disagree, or audited); until then each response enters with "
        "the mean of its graders' grades, and the figures can change once they are settled."
    )


def _models(c: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(c["models"], columns=["model", "estimate", "se", "low", "high"])


def _pairs(c: dict[str, Any]) -> pd.DataFrame:
    columns = [
        "pair",
        "estimate",
        "se",
        "low",
        "high",
        "anytime_low",
        "anytime_high",
        "statement",
        "says",
        "wins",
        "ties",
        "losses",
    ]
    return pd.DataFrame(c["pairs"], columns=columns)


def comparison_markdown(data: dict[str, Any]) -> str:
    """The comparison's report as a short Markdown document."""
    c = data["comparison"]
    lines = [
        f"# ActiveGrade comparison: {one_line_plain(data['project'])}",
        "",
        sources_line(data),
        "",
        markdown_line(_summary(c)),
        "",
        "## Models",
        "",
        markdown_table(_models(c).round(3)),
        "",
        "## Differences (A - B; wins, ties and losses count A's items)",
        "",
        markdown_table(_pairs(c).round(3)),
        "",
        "## Method",
        "",
        data["method"],
        "",
        *graders_lines(data["graders"]),
        *audit_chain_lines(data.get("audit_chain")),
        "## Settings",
        "",
        markdown_table(settings_table(data["settings"], data["seed"])),
        "",
    ]
    return "\n".join(lines)


def comparison_html(data: dict[str, Any]) -> str:
    """The comparison's report as one self-contained HTML page (the Markdown's content)."""
    c = data["comparison"]
    parts = [
        f"<h1>ActiveGrade comparison: {html.escape(data['project'])}</h1>",
        paragraph(f"{as_of_line(data)}."),
        paragraph(_summary(c)),
        "<h2>Models</h2>",
        html_table(_models(c)),
        "<h2>Differences</h2>",
        '<p class="note">A - B; wins, ties and losses count A\'s items.</p>',
        html_table(_pairs(c)),
        "<h2>Method</h2>",
        paragraph(data["method"]),
        *graders_parts(data["graders"]),
        *audit_chain_parts(data.get("audit_chain")),
        *inputs_parts(data),
        "<h2>Settings</h2>",
        html_table(settings_table(data["settings"], data["seed"]), "settings"),
    ]
    return html_page(f"ActiveGrade comparison: {data['project']}", parts)
