"""Per-item scores from the meaning classes of an item's surrogate samples.

Reference: Kuhn, Gal, Farquhar, "Semantic Uncertainty", ICLR 2023; Farquhar,
Kossen, Kuhn, Gal, "Detecting hallucinations in large language models using
semantic entropy", Nature 2024. See docs/method.md, *Semantic clustering and entropy*.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import entr, logsumexp


def semantic_entropy(class_ids: Sequence[int] | np.ndarray) -> float:
    """Discrete semantic entropy SE = -sum_c p_c ln p_c, p_c = |c| / K (natural log).

    `class_ids` holds the class of each of the K samples. NaN when K = 0.
    """
    class_ids = np.asarray(class_ids)
    if class_ids.size == 0:
        return float("nan")
    _, counts = np.unique(class_ids, return_counts=True)
    return float(entr(counts / class_ids.size).sum())  # entr(p) = -p ln p, elementwise


def weighted_semantic_entropy(
    class_ids: Sequence[int] | np.ndarray,
    logprobs: Sequence[float] | np.ndarray,
    lengths: Sequence[float] | np.ndarray,
) -> float:
    """Likelihood-weighted semantic entropy (Kuhn et al. 2023, eq. 3, with length normalisation).

    Each sample j gets weight w_j = exp(logprob_j / length_j) (its length-normalised
    sequence likelihood); a class's probability is p_c = sum_{j in c} w_j / sum_j w_j,
    and SE_w = -sum_c p_c ln p_c. Computed in log space (log-sum-exp) so very
    negative log-likelihoods do not underflow. NaN when there are no samples or
    any sample lacks a log-likelihood (a partial weighting would not be comparable
    across items). Lengths are floored at 1.
    """
    class_ids = np.asarray(class_ids)
    logprobs = np.asarray(logprobs, dtype=float)
    lengths = np.maximum(np.asarray(lengths, dtype=float), 1.0)
    if class_ids.size == 0 or np.isnan(logprobs).any():
        return float("nan")
    log_weights = logprobs / lengths
    classes, inverse = np.unique(class_ids, return_inverse=True)
    log_mass = np.array([logsumexp(log_weights[inverse == c]) for c in range(classes.size)])
    log_p = log_mass - logsumexp(log_mass)
    return float(entr(np.exp(log_p)).sum())


def agreement(class_ids: Sequence[int] | np.ndarray, target_class: int) -> float:
    """Share of the samples whose class is the target answer's class; NaN without samples."""
    class_ids = np.asarray(class_ids)
    if class_ids.size == 0:
        return float("nan")
    return float(np.mean(class_ids == target_class))
