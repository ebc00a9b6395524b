"""Exports: the grades as CSV and JSONL, and a report (JSON and Markdown) that lets anyone reproduce the run."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, datetime
from typing import Any

import pandas as pd

import core
from core.allocation import Design
from core.estimate import Estimate
from core.io import spreadsheet_safe
from core.skips import SkipBound
from core.store import ProjectInfo, json_safe

EXPORT_COLUMNS = ["item", "position", "grade", "label", "grader", "time", "seconds", "comment"]


def grades_table(grades: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Active grades with the item's id: EXPORT_COLUMNS, in submission order."""
    if grades.empty:
        return pd.DataFrame(columns=EXPORT_COLUMNS)
    table = pd.DataFrame(
        {
            "item": items["id"].to_numpy()[grades["position"].to_numpy()],
            "position": grades["position"],
            "grade": grades["value"],
            "label": grades["label"],
            "grader": grades["grader"],
            "time": pd.to_datetime(grades["created_at"], utc=True).map(lambda t: t.isoformat()),
            "seconds": grades["seconds"],
            "comment": grades["comment"],
        }
    )
    return table[EXPORT_COLUMNS]


def grades_csv(table: pd.DataFrame) -> bytes:
    """CSV (UTF-8) with every text cell made inert for spreadsheets (core.io.spreadsheet_safe)."""
    return table.map(spreadsheet_safe).to_csv(index=False).encode("utf-8")


def grades_jsonl(table: pd.DataFrame) -> bytes:
    """One JSON object per grade; values as stored (JSON is not a spreadsheet)."""
    lines = (json.dumps(json_safe(row), ensure_ascii=False) for row in table.to_dict(orient="records"))
    return ("\n".join(lines) + ("\n" if len(table) else "")).encode("utf-8")


def grades_parquet(table: pd.DataFrame) -> bytes:
    """The grades as a Parquet file, which Hugging Face `datasets.load_dataset("parquet", data_files=...)`
    and the Hub's dataset viewer read as they are (values unchanged: Parquet runs no formulas)."""
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    return buffer.getvalue()


def report(
    project: ProjectInfo,
    design: Design,
    result: Estimate,
    input_files: dict[str, tuple[str, bytes]],
    skips: SkipBound | None = None,
) -> dict[str, Any]:
    """Everything needed to read and reproduce the result: estimate, interval, method, strata,
    savings, skips (per stratum and their worst-case bound, `core.skips`), settings, seed, and
    the input files by name and SHA-256."""
    saving = result.saving
    return json_safe(
        {
            "project": project.name,
            "generated_at": datetime.now(UTC).isoformat(),
            "activegrade_version": getattr(core, "__version__", "unreleased"),
            "inputs": {
                role: {"file": name, "sha256": hashlib.sha256(content).hexdigest()}
                for role, (name, content) in input_files.items()
            },
            "items": design.N,
            "estimate": {
                "value": result.value,
                "se": result.se,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "level": result.level,
                "interval": INTERVAL,
                "method": result.method,
                "grades": result.n,
                "missing_strata": list(result.missing),
                "design_effect": result.deff,
                "uniform_labels_for_same_precision": result.uniform_labels,
                "labels_saved": result.labels_saved,
                "saving_share": None if saving is None else saving.share,
                "saving_range": None if saving is None else [saving.low, saving.high],
            },
            "strata": result.strata.to_dict(orient="records"),
            "skips": None
            if skips is None
            else {
                "skipped": skips.skipped,
                "estimate_if_all_skipped_were_0": skips.low,
                "estimate_if_all_skipped_were_1": skips.high,
                "by_stratum": skips.table.to_dict(orient="records"),
            },
            "settings": project.settings,
            "seed": project.settings["seed"],
        }
    )


INTERVAL = "fixed-n Korn-Graubard (core.intervals): valid for a number of grades decided in advance"


def _savings_line(e: dict[str, Any]) -> str:
    if e["design_effect"] is None:
        return "Savings against uniform sampling: withheld until every stratum has 2 grades."
    spread = f", likely range {e['saving_range'][0]:+.0%} to {e['saving_range'][1]:+.0%}"
    return (
        f"Design effect {e['design_effect']:.3f}: uniform random sampling would need about "
        f"{e['uniform_labels_for_same_precision']:.0f} grades for the same precision "
        f"({e['labels_saved']:.0f} labels saved, {e['saving_share']:+.0%}{spread})."
    )


def _skips_lines(skips: dict[str, Any] | None) -> list[str]:
    if skips is None:
        return []
    if not skips["skipped"]:
        return ["## Skips", "", "No item was skipped.", ""]
    return [
        "## Skips",
        "",
        f"{skips['skipped']} items were skipped and not graded. Had they been graded, the estimate would lie "
        f"between {skips['estimate_if_all_skipped_were_0']:.4f} (all 0) and "
        f"{skips['estimate_if_all_skipped_were_1']:.4f} (all 1), before sampling error.",
        "",
        _markdown_table(pd.DataFrame(skips["by_stratum"])),
        "",
    ]


def report_markdown(data: dict[str, Any]) -> str:
    """The report as a short Markdown document."""
    e, s = data["estimate"], data["settings"]
    strata = pd.DataFrame(data["strata"])
    lines = [
        f"# ActiveGrade report: {data['project']}",
        "",
        f"Generated {data['generated_at']} from "
        + ", ".join(f"{role} `{f['file']}` (SHA-256 `{f['sha256'][:16]}...`)" for role, f in data["inputs"].items())
        + ".",
        "",
        _estimate_line(data),
        "",
        _savings_line(e),
        "",
        f"Design proxy (strata and predicted grades): {design_proxy(s)}.",
        "",
        "## Strata",
        "",
        _markdown_table(strata) if not strata.empty else "(none)",
        "",
        *_skips_lines(data.get("skips")),
        "## Settings",
        "",
        *(f"- {k}: `{json.dumps(v)}`" for k, v in s.items() if k not in ("guidelines", "seed")),
        f"- seed: `{data['seed']}`",
        "",
    ]
    return "\n".join(lines)


def _estimate_line(data: dict[str, Any]) -> str:
    e = data["estimate"]
    if e["missing_strata"]:
        return (
            f"No estimate yet: strata {', '.join(map(str, e['missing_strata']))} have no grade "
            f"({e['grades']} grades of {data['items']} items)."
        )
    return (
        f"**Estimated mean grade: {e['value']:.4f}**, {e['level']:.0%} interval "
        f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}] ({e['interval']}; standard error {e['se']:.4f}), "
        f"from {e['grades']} grades of {data['items']} items with the {e['method']} estimator."
    )


def design_proxy(settings: dict[str, Any]) -> str:
    """Which proxy a project's design used: its pool column, or the surrogate's agreement."""
    return f"pool column '{settings['proxy']}'" if settings.get("proxy") else "agreement of the surrogate samples"


def _markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; floats to 3 decimals, NaN as an empty cell."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return "" if value != value else f"{value:.3f}"
        return str(value).replace("|", "\\|")

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])
