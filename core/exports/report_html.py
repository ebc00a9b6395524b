"""The report as one self-contained HTML page: the Markdown report's sections as HTML tables and text, and
its charts as inline SVG (no script, no external file: it opens offline and prints as it shows).

Every text from the data is escaped (html.escape, pandas' to_html escapes by default). It reads on a phone
(390 px wide) without sideways scrolling and without a number broken across lines, and its prose names methods
and the docs that explain them, never the code's modules (the Markdown and JSON say the same).
"""

from __future__ import annotations

import html
import itertools
from typing import Any

import pandas as pd

from core.exports.report import (
    RECOMPUTE_FILE,
    agreement_line,
    as_of_line,
    audit_chain_line,
    criteria_table,
    estimand_lines,
    estimate_line,
    grader_rows,
    recompute_line,
    review_lines,
    settings_table,
    skips_words,
    stopping_line,
)
from core.services.tracking import PATH_NOTE

WIDTH, HEIGHT, PAD = 640, 260, 40
LEFT = 56
"""The path chart's left margin: room for the y axis's tick labels ("0.25") and, left of them, its title."""
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222;overflow-wrap:break-word}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}
.inputs td,.settings td:last-child{overflow-wrap:anywhere}th{overflow-wrap:normal}
.table{max-width:100%;overflow-x:auto}.settings td:first-child{white-space:nowrap}
th{background:#f3f3f3}pre{background:#f6f6f6;padding:.7em;overflow-x:auto;font-size:12px}
svg{max-width:100%;height:auto}.note{color:#555;font-size:13px}
"""
"""A long value (a hash, a file name, a setting's JSON) may break anywhere so its table fits a phone; a number
("0.527") or a header's word ("stratum", not "stratu m") never breaks: a table they make wider than the page
scrolls inside its box."""


def _x(k: float, kmax: float) -> float:
    return LEFT + (WIDTH - LEFT - PAD) * (k / max(kmax, 1))


def _y(v: float) -> float:
    return HEIGHT - PAD - (HEIGHT - 2 * PAD) * v


def ticks(top: float, most: int = 6) -> list[int]:
    """Whole-number ticks 0, s, 2s, ... up to ``top``, s the smallest of 1, 2, 5 x 10^k giving at most ``most``."""
    step = next(s for power in itertools.count() for m in (1, 2, 5) if top / (s := m * 10**power) <= most - 1)
    return list(range(0, int(top) + 1, step))


def _axes(kmax: float) -> list[str]:
    """The x axis (grades, ticks from 0 to kmax) and the y axis (mean grade, 0 to 1), with tick marks and titles."""
    grey = 'stroke="#888"'
    parts = [
        f'<line x1="{LEFT}" y1="{_y(0)}" x2="{WIDTH - PAD}" y2="{_y(0)}" {grey}/>',
        f'<line x1="{LEFT}" y1="{_y(0)}" x2="{LEFT}" y2="{_y(1)}" {grey}/>',
    ]
    for k in ticks(kmax):
        x = _x(k, kmax)
        parts.append(
            f'<g class="tick x"><line x1="{x:.1f}" y1="{_y(0)}" x2="{x:.1f}" y2="{_y(0) + 5}" {grey}/>'
            f'<text x="{x:.1f}" y="{_y(0) + 17}" font-size="11" text-anchor="middle">{k}</text></g>'
        )
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<g class="tick y"><line x1="{LEFT - 4}" y1="{_y(v):.1f}" x2="{LEFT}" y2="{_y(v):.1f}" {grey}/>'
            f'<text x="{LEFT - 6}" y="{_y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text></g>'
        )
    parts.append(
        f'<text x="{(LEFT + WIDTH - PAD) / 2}" y="{HEIGHT - 4}" font-size="12" text-anchor="middle">grades</text>'
    )
    parts.append(
        f'<text x="11" y="{HEIGHT / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 11 {HEIGHT / 2})">mean grade</text>'
    )
    return parts


def path_svg(path: list[dict[str, Any]]) -> str:
    """The estimate (line) and its fixed-n interval (blue band) against the number of grades, uniform sampling's
    interval dashed grey, the interval valid whenever grading stops dotted blue; y from 0 to 1."""
    rows = [r for r in path if r.get("estimate") is not None]
    if not rows:
        return '<p class="note">No estimate yet: the chart appears once every stratum has a grade.</p>'
    kmax = max(r["grades"] for r in rows)

    def points(key: str, rows=rows) -> list[str]:
        return [f"{_x(r['grades'], kmax):.1f},{_y(r[key]):.1f}" for r in rows if r[key] is not None]

    band = points("ci_high") + points("ci_low")[::-1]
    axes = _axes(kmax)
    dashed = "".join(
        f'<polyline points="{" ".join(points(k))}" fill="none" stroke="{colour}" stroke-dasharray="{dash}"/>'
        for k, colour, dash in (
            ("uniform_low", "#7f7f7f", "6 4"),
            ("uniform_high", "#7f7f7f", "6 4"),
            ("anytime_low", "#1f77b4", "2 3"),
            ("anytime_high", "#1f77b4", "2 3"),
        )
        if any(r.get(k) is not None for r in rows)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-label="estimate against the number of grades">'
        + "".join(axes)
        + f'<polygon points="{" ".join(band)}" fill="#1f77b4" fill-opacity="0.35"/>'
        + dashed
        + f'<polyline points="{" ".join(points("estimate"))}" fill="none" stroke="#1f3b73" stroke-width="2"/>'
        + "</svg>"
    )


def allocation_svg(strata: list[dict[str, Any]]) -> str:
    """Per stratum: grades planned (light) and done (dark) as paired bars."""
    if not strata:
        return ""
    top = max(max(r["planned"], r["done"]) for r in strata) or 1
    slot = (WIDTH - 2 * PAD) / len(strata)
    bars = []
    for i, r in enumerate(strata):
        for j, (key, colour) in enumerate((("planned", "#9ecae1"), ("done", "#1f3b73"))):
            h = (HEIGHT - 2 * PAD) * r[key] / top
            x = PAD + i * slot + slot * (0.15 + 0.35 * j)
            bars.append(
                f'<rect x="{x:.1f}" y="{_y(0) - h:.1f}" width="{slot * 0.33:.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>stratum {r['stratum']}: {r[key]} {key}</title></rect>"
            )
        bars.append(
            f'<text x="{PAD + (i + 0.5) * slot:.1f}" y="{HEIGHT - 22}" font-size="11" text-anchor="middle">'
            f"stratum {r['stratum']}</text>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-label="grades planned and done per stratum">' + "".join(bars) + "</svg>"
    )


def html_table(rows: list[dict[str, Any]] | pd.DataFrame, kind: str = "") -> str:
    """The rows as an HTML table in a box of class ``table`` (and ``kind``, for STYLE)."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    table = frame.to_html(index=False, na_rep="–", float_format=lambda v: f"{v:.3f}", border=0)
    return f'<div class="table {kind}">{table}</div>'  # a table wider than a phone scrolls inside, not the page


def paragraph(text: str) -> str:
    return f"<p>{html.escape(text.replace('**', ''))}</p>"


def _criteria_parts(section: dict[str, Any] | None) -> list[str]:
    """A rubric's criteria: the criterion the stopping rule reads, each criterion's figures and estimand."""
    if section is None:
        return []
    return [
        "<h2>Criteria</h2>",
        paragraph(section["words"]),
        html_table(criteria_table(section)),
        *(paragraph(line) for line in estimand_lines(section)),
    ]


def graders_parts(graders: dict[str, Any]) -> list[str]:
    """The graders' section: their pace and their agreement (core.exports.report.agreement_line)."""
    table = html_table(grader_rows(graders["by_grader"])) if graders["by_grader"] else paragraph("No grade.")
    return ["<h2>Graders</h2>", table, paragraph(agreement_line(graders))]


def report_html(data: dict[str, Any]) -> str:
    """The one-page HTML report of ``core.exports.report.report``'s data (same content as the Markdown)."""
    g, skips = data["graders"], data.get("skips")
    parts = [
        f"<h1>ActiveGrade report: {html.escape(data['project'])}</h1>",
        paragraph(f"{as_of_line(data)}."),
        paragraph(estimate_line(data)),
        paragraph(stopping_line(data["stopping_rule"])),
        *_criteria_parts(data.get("criteria")),
        "<h2>Estimate against the number of grades</h2>",
        path_svg(data.get("path", [])),
        f'<p class="note">{html.escape(PATH_NOTE)}</p>',
        "<h2>Method</h2>",
        paragraph(data["method"]),
        "<h2>Strata: grades planned and done</h2>",
        allocation_svg(data["strata"]),
        '<p class="note">Light: grades the plan gives each stratum at this count. Dark: grades done.</p>',
        html_table(data["strata"]),
        *graders_parts(g),
    ]
    if skips is not None:
        parts += [
            "<h2>Skips</h2>",
            paragraph(skips_words(skips)),
            html_table(skips["by_stratum"]),
        ]
    review = review_lines(data.get("review"))
    parts += ["<h2>Review</h2>", *(paragraph(line.lstrip("- ")) for line in review[2:] if line)] if review else []
    parts += audit_chain_parts(data.get("audit_chain"))
    r = data["recompute"]
    parts += [
        "<h2>Recompute the estimate from the grades export</h2>",
        paragraph(RECOMPUTE_FILE),
        f"<pre>{html.escape(r['formula'])}</pre>",
        paragraph(recompute_line(r)),
        f"<pre>{html.escape(r['script'])}</pre>",
        *inputs_parts(data),
        "<h2>Settings</h2>",
        html_table(settings_table(data["settings"], data["seed"], len(data["strata"])), "settings"),
    ]
    return html_page(f"ActiveGrade report: {data['project']}", parts)


def html_page(title: str, parts: list[str]) -> str:
    """One self-contained page of ``parts`` (HTML already escaped) under ``title`` (escaped here), with STYLE."""
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def inputs_parts(data: dict[str, Any]) -> list[str]:
    """The inputs section: each input file's role, name and SHA-256."""
    rows = [{"role": role, "file": f["file"], "sha256": f["sha256"]} for role, f in data["inputs"].items()]
    return ["<h2>Inputs</h2>", html_table(rows, "inputs")]


def audit_chain_parts(chain: dict[str, Any] | None) -> list[str]:
    """The audit trail's section (core.exports.report.audit_chain_line), none where the chain was not checked."""
    return [] if chain is None else ["<h2>Audit trail</h2>", paragraph(audit_chain_line(chain))]
