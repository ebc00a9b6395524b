"""The design for a difference between targets: strata where the targets' answers differ, Neyman on its variance.

Per item i and pair (A, B), from the surrogate (no grade read):
- p_k,i = 1/2 + shrink (a_k,i - 1/2), target k's smoothed predicted grade (a its agreement with the surrogate
  samples, 1/2 where unknown; shrink = core.stats.allocation.DEFAULT_SHRINK, as for one target);
- where A's and B's answers fall in one meaning class (core.surrogate.targets), their grades should agree:
  E d = 0, E d^2 = SAME_MEANING_DISAGREEMENT; elsewhere the grades are taken as independent:
  E d = p_A - p_B, E d^2 = p_A (1 - p_B) + p_B (1 - p_A).

Strata: items are first split by how many distinct meaning classes the K targets' answers form (1: every
target said the same thing), then, inside each group with more than one class, into quantile bins of the
predicted difference E d (two targets: which of them the surrogate sides with, and how firmly) or, for three
targets or more, of the mean E d^2 over pairs; strata under `min_size` items are merged into a neighbour
(core.stats.strata.merge_small_strata), at most `n_strata` in all.

Spreads: in stratum h, Var_h(d) = mean_h E d^2 - (mean_h E d)^2 (the law of total variance), at least
MIN_DIFFERENCE_VARIANCE. The design's grade is z = (1 + d) / 2 in [0, 1], so the stratum's share of the bound
m_h (1 - m_h) of z, m_h = (1 + mean_h E d) / 2, is Var_h(d) / (1 - (mean_h E d)^2): the design's
`spread_share`, through which the queue (core.stats.queue) and the anytime interval (core.stats.confseq) read
these spreads, re-estimated from the grades as they arrive (core.stats.spreads.adaptive_sd, with
DIFFERENCE_PRIOR_STRENGTH pseudo-grades behind the prior).

Allocation: Neyman on S_h (Cochran 1977, 5.5), grade by grade (`comparison_stratum`): the next item goes to
the stratum core.stats.allocation.next_stratum picks with each pair's spreads as the one-target queue
estimates them from the grades so far (core.stats.queue.queue_spreads on that pair's z), combined as
S_h^2 = sum_p S_h,p^2: the sum of the pairs' variances sum_p sum_h W_h^2 S_h,p^2 / n_h is minimised by
Neyman on that S_h. For one pair it is exactly the queue of a one-target project run on z, so every prefix
is close to Neyman for its size; the rule reads past grades only, so the confidence sequence stays valid.

Safeguards, as for one target: the shrink towards 1/2, the floor of `floor` grades in every stratum, the
variance floor, and the prior blended with each stratum's own grades, so a stratum the surrogate thought quiet
gets its grades back once they disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from core.stats.allocation import DEFAULT_FLOOR, DEFAULT_SHRINK, KAPPA, Design, make_design, next_stratum
from core.stats.compare import Comparison, pairs
from core.stats.queue import queue_differ, queue_floor, queue_kappa, queue_spreads
from core.stats.strata import DEFAULT_MIN_STRATUM_SIZE, DEFAULT_N_STRATA, merge_small_strata

SAME_MEANING_DISAGREEMENT = 0.1
"""E d^2 where two targets' answers mean the same: the chance their grades still differ (a stand-in; the
stratum's own grades take over as they arrive)."""

MIN_DIFFERENCE_VARIANCE = 0.01
"""The smallest prior Var_h(d): no stratum is predicted certain."""

DIFFERENCE_PRIOR_STRENGTH = 15.0
"""Pseudo-grades behind a stratum's prior spread of the difference (core.stats.spreads.adaptive_sd)."""


def predicted_grades(comparison: Comparison, shrink: float = DEFAULT_SHRINK) -> np.ndarray:
    """(K, N): p_k,i = 1/2 + shrink (a_k,i - 1/2), 1/2 where the agreement is unknown."""
    agreement = np.stack([comparison.items[m]["agreement"].to_numpy(dtype=float) for m in comparison.models])
    return 0.5 + shrink * (np.where(np.isfinite(agreement), agreement, 0.5) - 0.5)


def pair_moments(comparison: Comparison, a: str, b: str, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E d, E d^2) of each item for the pair (a, b), `p` from `predicted_grades` (module docstring)."""
    index = comparison.models.index
    pa, pb = p[index(a)], p[index(b)]
    same = comparison.same_meaning(a, b)
    mean = np.where(same, 0.0, pa - pb)
    square = np.where(same, SAME_MEANING_DISAGREEMENT, pa * (1 - pb) + pb * (1 - pa))
    return mean, square


def difference_strata(
    comparison: Comparison, p: np.ndarray, n_strata: int = DEFAULT_N_STRATA, min_size: int = DEFAULT_MIN_STRATUM_SIZE
) -> np.ndarray:
    """(N,) stratum of each item (module docstring), 0..H-1, items whose targets all agree first."""
    classes = comparison.classes
    distinct = np.array([np.unique(classes[:, i]).size for i in range(comparison.N)])
    moments = [pair_moments(comparison, a, b, p) for a, b in pairs(comparison.models)]
    key = moments[0][0] if len(moments) == 1 else np.mean([square for _, square in moments], axis=0)
    groups = np.unique(distinct)
    split = groups[groups > 1]
    bins = max(1, (n_strata - (groups.size - split.size)) // max(split.size, 1))
    strata = np.zeros(comparison.N, dtype=np.int64)
    for g in groups:
        inside = distinct == g
        code = np.zeros(int(inside.sum()), dtype=np.int64)
        if g > 1 and bins > 1:
            cuts = np.quantile(key[inside], np.linspace(0, 1, bins + 1)[1:-1])
            code = np.searchsorted(cuts, key[inside], side="right")
        strata[inside] = g * n_strata + code
    return merge_small_strata(strata, min(min_size, comparison.N))


def stratum_difference_variance(
    stratum: np.ndarray, mean: np.ndarray, square: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum: mean_h E d and Var_h(d) = mean_h E d^2 - (mean_h E d)^2, at least MIN_DIFFERENCE_VARIANCE."""
    sizes = np.bincount(stratum)
    m = np.bincount(stratum, weights=mean) / sizes
    var = np.maximum(np.bincount(stratum, weights=square) / sizes - m**2, MIN_DIFFERENCE_VARIANCE)
    return m, var


def pair_design(
    comparison: Comparison,
    a: str,
    b: str,
    stratum: np.ndarray,
    *,
    kappa: float = KAPPA,
    floor: int = DEFAULT_FLOOR,
) -> Design:
    """The design of the difference (a, b) on strata `stratum`: grade z = (1 + d) / 2, predicted z of each
    item (1 + E d) / 2, prior spreads and spread_share of the module docstring."""
    p = predicted_grades(comparison)
    mean, square = pair_moments(comparison, a, b, p)
    base = make_design(
        stratum,
        (1 + mean) / 2,
        mean[:, None],
        floor=floor,
        shrink=1.0,
        kappa=kappa,
        prior_strength=DIFFERENCE_PRIOR_STRENGTH,
        ids=tuple(comparison.items[a]["id"].astype(str)),
    )
    m, var = stratum_difference_variance(base.stratum, mean, square)
    share = np.clip(var / np.maximum(1 - m**2, 1e-12), 0.0, 1.0)
    return replace(base, prior_sd=np.sqrt(var) / 2, spread_share=share)


def comparison_stratum(
    designs: Sequence[Design],
    taken: np.ndarray,
    moments: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    pooled: Sequence[tuple[np.ndarray, ...]],
) -> np.ndarray:
    """The stratum of the next graded item (-1 when every stratum is taken), for one state or R at once:
    next_stratum with S_h = sqrt(sum_p S_h,p^2), S_h,p = queue_spreads(designs[p], moments[p], pooled[p])
    (module docstring). The strata are read as one (proportional allocation, a floor of one grade) until some
    pair's differences show that they differ (core.stats.queue.queue_differ: in their means or their spreads).
    Every design has the same strata; ``taken`` counts items graded or reserved."""
    differ = np.any([queue_differ(d, m) for d, m in zip(designs, moments)], axis=0)
    spreads = np.sqrt(sum(queue_spreads(d, m, p, differ) ** 2 for d, m, p in zip(designs, moments, pooled)))
    first = designs[0]
    return next_stratum(
        first.weights, spreads, taken, first.sizes, queue_floor(first, differ), queue_kappa(first, differ)
    )


def comparison_design(
    comparison: Comparison,
    *,
    kappa: float = KAPPA,
    n_strata: int = DEFAULT_N_STRATA,
    min_size: int = DEFAULT_MIN_STRATUM_SIZE,
    floor: int = DEFAULT_FLOOR,
) -> dict[tuple[str, str], Design]:
    """Each pair's design (`pair_design`) on the comparison's strata (`difference_strata`), pairs in order."""
    stratum = difference_strata(comparison, predicted_grades(comparison), n_strata, min_size)
    return {
        (a, b): pair_design(comparison, a, b, stratum, kappa=kappa, floor=floor) for a, b in pairs(comparison.models)
    }
