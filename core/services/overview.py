"""Summaries of a prepared pool for the setup page, in the terms of the variable the pool is stratified by.

A pool stratified by agreement is described by agreement ranges, one by
entropy by entropy ranges ("both": each). The histogram counts items per bin
and per stratum, so the strata's cut points show on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.services.progress import counted

COLUMN_OF = {"entropy": "semantic_entropy", "agreement": "agreement"}
"""Stratifying variable (settings' ``stratify_by`` part) -> its column in the prepared items."""

NAME_OF = {"semantic_entropy": "semantic entropy (nats)", "agreement": "agreement"}


def stratifying_columns(by: str | None) -> list[str]:
    """The items' columns that a ``stratify_by`` setting cuts on ("both": entropy then agreement)."""
    if by == "both":
        return [COLUMN_OF["entropy"], COLUMN_OF["agreement"]]
    return [COLUMN_OF.get(by or "agreement", "agreement")]


def histogram(items: pd.DataFrame, column: str, bins: int = 20) -> pd.DataFrame:
    """Items per bin of ``column`` and stratum: columns ``from``, ``to`` (bin edges), ``stratum``, ``items``.

    Items without a value (no samples) are left out; see ``without_samples``. Agreement is binned on [0, 1];
    entropy on [0, its maximum].
    """
    values = items[column].to_numpy(dtype=float)
    known = np.isfinite(values)
    if not known.any():
        return pd.DataFrame({"from": [], "to": [], "stratum": [], "items": []})
    top = 1.0 if column == "agreement" else max(values[known].max(), 1e-9)
    edges = np.histogram_bin_edges(values[known], bins=bins, range=(0.0, top))
    rows = []
    for stratum, group in items[known].groupby("stratum"):
        counts, _ = np.histogram(group[column].to_numpy(dtype=float), bins=edges)
        rows += [
            {"from": edges[i], "to": edges[i + 1], "stratum": int(stratum), "items": int(c)}
            for i, c in enumerate(counts)
            if c
        ]
    return pd.DataFrame(rows, columns=["from", "to", "stratum", "items"])


def without_samples(items: pd.DataFrame) -> int:
    """How many items have no surrogate sample (no entropy, their own stratum)."""
    return int((~np.isfinite(items["semantic_entropy"].to_numpy(dtype=float))).sum())


def empty_responses(items: pd.DataFrame) -> list[str]:
    """The ids of the items whose response is empty or blank (a pool row with ``response`` "": graders would be
    shown an empty box, which a manager's review saw accepted without a word); [] for a pool without the column
    (a comparison's responses are per model)."""
    if "response" not in items:
        return []
    text = items["response"].fillna("").astype(str).str.strip()
    return items.loc[text == "", "id"].astype(str).tolist()


@dataclass(frozen=True)
class Warnings:
    """What a prepared pool's manager should know before grading, in words: ``design`` (its strata will do no
    better than uniform sampling, ``uniform``, or some items stand apart) and ``pool`` (items graders would see
    empty)."""

    design: str | None
    pool: str | None
    uniform: bool = False
    strata: str | None = None

    def words(self) -> list[str]:
        """Every warning, in order (the API's ``warnings``)."""
        return [w for w in (self.design, self.strata, self.pool) if w]


def one_stratum(items: pd.DataFrame, proxy: str | None) -> str | None:
    """Words for a pool whose items have surrogate samples and still fall in one stratum: the samples tell no
    item from another, so the design is no better than uniform sampling (an lm-eval pool whose whole answers were
    compared with a cheaper run's extracted ones read agreement 0 on every item, without a word: a new user's
    review); None otherwise. Where the pool has an extracted answer (an lm-eval pool's ``filtered_response``)
    and no ``answer``, it says how to compare the samples with that. None where a pool column (``proxy``) makes
    the strata."""
    if proxy is not None or len(items) < 2 or without_samples(items) == len(items) or items["stratum"].nunique() > 1:
        return None
    scores = [c for c in ("agreement", "semantic_entropy") if c in items]
    if any(items[c].dropna().nunique() > 1 for c in scores):  # a pool too small to cut, not samples alike
        return None
    words = "Every item falls in one stratum: the surrogate's samples tell no item from another"
    if "agreement" in items:
        words += f" (agreement {items['agreement'].iloc[0]:g} on every item)"
    words += ", so the design is no better than uniform sampling"
    if "filtered_response" in items and "answer" not in items:
        words += (
            ". To compare the samples with the pool's extracted answers (filtered_response) rather than its whole "
            "responses, set the columns setting answer=filtered_response (--columns on the command line)"
        )
    return words


def preparation_warnings(items: pd.DataFrame, proxy: str | None) -> Warnings:
    """The prepared ``items``' warnings: no item with a surrogate sample and no ``proxy`` to stratify by (the
    design is then no better than uniform sampling, as `activegrade prepare` warns), some items without one
    (their own stratum), and empty responses (`empty_responses`). The setup page and the API's project say
    them alike (an integrator's review: a pool uploaded without its samples became ready without a word)."""
    missing = without_samples(items)
    uniform = missing == len(items) and proxy is None
    if uniform:
        design = (
            "No item has a surrogate sample, so the strata tell nothing apart and the design is no better than "
            "uniform sampling: upload the surrogate's samples with the pool (docs/formats.md)"
        )
    elif missing:
        design = f"{counted(missing, 'item')} {'has' if missing == 1 else 'have'} no surrogate sample: they form their own stratum"
    else:
        design = None
    empty = empty_responses(items)
    shown = ", ".join(empty[:5]) + (f" and {len(empty) - 5:,} more" if len(empty) > 5 else "")
    pool = (
        f"{counted(len(empty), 'item')} of the pool {'has' if len(empty) == 1 else 'have'} an empty response "
        f"({shown}): graders will see an empty box. Check the pool's `response` column"
        if empty
        else None
    )
    return Warnings(design, pool, uniform, None if uniform else one_stratum(items, proxy))


def strata_table(items: pd.DataFrame, by: str | None) -> pd.DataFrame:
    """One row per stratum: size, share of the pool, the range of each stratifying variable (``by``) and the
    mean agreement (what the surrogate predicts of the grade)."""
    grouped = items.groupby("stratum")
    table = pd.DataFrame({"items": grouped.size(), "share": grouped.size() / len(items)})
    for column in stratifying_columns(by):
        name = "entropy" if column == "semantic_entropy" else "agreement"
        table[f"{name} from"] = grouped[column].min()
        table[f"{name} to"] = grouped[column].max()
    table["mean agreement"] = grouped["agreement"].mean()
    table.index.name = "stratum"
    return table.reset_index()
