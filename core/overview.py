"""Summaries of a prepared pool for the setup page: entropy histogram and strata table."""
from __future__ import annotations

import numpy as np
import pandas as pd


def entropy_histogram(items: pd.DataFrame, bins: int = 20) -> pd.DataFrame:
    """Counts of items per semantic-entropy bin: columns ``entropy`` (bin centre) and ``items``.

    Items without samples (entropy NaN) are left out.
    """
    values = items["semantic_entropy"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return pd.DataFrame({"entropy": [], "items": []})
    counts, edges = np.histogram(values, bins=bins, range=(0.0, max(values.max(), 1e-9)))
    return pd.DataFrame({"entropy": np.round((edges[:-1] + edges[1:]) / 2, 3), "items": counts})


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
