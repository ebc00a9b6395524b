"""Summaries of a prepared pool for the setup page: entropy histogram and strata table."""

from __future__ import annotations

import numpy as np
import pandas as pd


def entropy_histogram(items: pd.DataFrame, bins: int = 20) -> pd.DataFrame:
    """Items per semantic-entropy bin: columns ``from``, ``to`` (bin edges) and ``items``.

    Items without samples (entropy NaN) are left out; see ``without_samples``.
    """
    values = items["semantic_entropy"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return pd.DataFrame({"from": [], "to": [], "items": []})
    counts, edges = np.histogram(values, bins=bins, range=(0.0, max(values.max(), 1e-9)))
    return pd.DataFrame({"from": edges[:-1], "to": edges[1:], "items": counts})


def without_samples(items: pd.DataFrame) -> int:
    """How many items have no surrogate sample (no entropy, their own stratum)."""
    return int((~np.isfinite(items["semantic_entropy"].to_numpy(dtype=float))).sum())


def strata_table(items: pd.DataFrame) -> pd.DataFrame:
    """One row per stratum: size, share of the pool, entropy range and mean surrogate agreement."""
    grouped = items.groupby("stratum")
    table = pd.DataFrame(
        {
            "items": grouped.size(),
            "share": grouped.size() / len(items),
            "entropy min": grouped["semantic_entropy"].min(),
            "entropy max": grouped["semantic_entropy"].max(),
            "mean agreement": grouped["agreement"].mean(),
        }
    )
    table.index.name = "stratum"
    return table.reset_index()
