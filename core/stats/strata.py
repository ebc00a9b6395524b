"""Stratify a pool by semantic entropy and/or agreement (docs/method.md, *Stratification*).

Stratum numbers are ordered by surrogate doubt, lowest first:

- `by="entropy"`: stratum 0 holds the items whose samples all mean the same
  (SE = 0), when there are any; the positive entropies are split at their
  quantiles into the remaining strata, in increasing order of entropy.
- `by="agreement"`: the same scheme on the disagreement 1 - agreement:
  stratum 0 holds the items where every sample agrees with the target's
  answer, then strata of decreasing agreement.
- `by="both"`: the entropy strata, each split in two by whether the target's
  answer is in the majority (agreement >= 1/2, lower number) or not. There are
  up to 2 x n_strata strata before merging.

Quantile cut points of tied values can coincide; empty strata are dropped and
the rest renumbered 0..H-1 without gaps. A stratum smaller than `min_size` is
merged into the smaller of its neighbours in this order, repeatedly, until
every stratum is large enough or only one is left. Items whose stratifying
score is NaN (items without samples) form one extra stratum numbered last, H,
which is never merged.
"""

from __future__ import annotations

import numpy as np

from core.errors import InputError

STRATIFY_BY = ("entropy", "agreement", "both")
DEFAULT_STRATIFY_BY = "agreement"
"""The one default for every entry (preparation, CLI, app, simulator). Agreement of the target with the
surrogate predicts the grade far better than entropy alone (benchmarks/estimation.md: MSE ratio 0.35-0.40
against 0.77-0.81 on gsm8k)."""
DEFAULT_N_STRATA = 5
DEFAULT_MIN_STRATUM_SIZE = 10
_ZERO = 1e-12  # scores at or below this are treated as exactly zero


def _dense(labels: np.ndarray) -> np.ndarray:
    """Renumber labels to 0..H-1 keeping their order."""
    return np.unique(labels, return_inverse=True)[1].astype(int)


def zero_and_quantile_strata(values: np.ndarray, n_strata: int) -> np.ndarray:
    """Stratum 0 for values == 0 (if any), quantile bins of the positive values above it.

    `values` must be finite and non-negative. Uses n_strata - 1 bins for the
    positive values when zeros are present, n_strata otherwise; cut points are
    the empirical quantiles at 1/k, ..., (k-1)/k of the positive values, a value
    equal to a cut point going to the upper bin.
    """
    positive = values > _ZERO
    has_zero = bool((~positive).any())
    n_bins = n_strata - 1 if has_zero else n_strata
    strata = np.zeros(values.size, dtype=int)
    if positive.any() and n_bins >= 1:
        pos = values[positive]
        cuts = np.quantile(pos, np.linspace(0.0, 1.0, n_bins + 1)[1:-1])
        strata[positive] = np.searchsorted(cuts, pos, side="right") + int(has_zero)
    return _dense(strata)


def merge_small_strata(strata: np.ndarray, min_size: int) -> np.ndarray:
    """Merge every stratum smaller than `min_size` into its smaller neighbour, smallest first."""
    strata = _dense(strata)
    while True:
        counts = np.bincount(strata)
        if counts.size <= 1 or counts.min() >= min_size:
            return strata
        small = int(np.argmin(counts))
        neighbours = [h for h in (small - 1, small + 1) if 0 <= h < counts.size]
        into = min(neighbours, key=lambda h: (counts[h], h))
        strata = _dense(np.where(strata == small, into, strata))


def stratify(
    entropy: np.ndarray,
    agreement: np.ndarray,
    *,
    n_strata: int = DEFAULT_N_STRATA,
    by: str = DEFAULT_STRATIFY_BY,
    min_size: int = DEFAULT_MIN_STRATUM_SIZE,
) -> np.ndarray:
    """Stratum of every item, 0..H-1 (see the module docstring for the scheme and numbering)."""
    if by not in STRATIFY_BY:
        raise InputError(f"unknown stratification '{by}'", fix=f"use one of {', '.join(STRATIFY_BY)}")
    if int(n_strata) != n_strata or n_strata < 1:
        raise InputError(f"number of strata must be a positive whole number, got {n_strata}", fix="use e.g. 5")
    if int(min_size) != min_size or min_size < 1:
        raise InputError(f"minimum stratum size must be a positive whole number, got {min_size}", fix="use e.g. 10")
    entropy = np.asarray(entropy, dtype=float)
    disagreement = 1.0 - np.asarray(agreement, dtype=float)
    if entropy.shape != disagreement.shape:
        raise ValueError("entropy and agreement must have the same length")

    needed = {"entropy": [entropy], "agreement": [disagreement], "both": [entropy, disagreement]}[by]
    known = np.logical_and.reduce([np.isfinite(v) for v in needed])
    strata = np.full(entropy.size, -1, dtype=int)
    if known.any():
        if by == "agreement":
            inner = zero_and_quantile_strata(disagreement[known], n_strata)
        else:
            inner = zero_and_quantile_strata(entropy[known], n_strata)
        if by == "both":
            inner = 2 * inner + (disagreement[known] > 0.5)
        strata[known] = merge_small_strata(inner, min_size)
    strata[~known] = strata.max() + 1
    return strata
