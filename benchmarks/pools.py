"""Labelled pools of our own making for the interval and bias benchmarks (not tuned to ../shared/data).

A pool has N items with a grade y and a surrogate score s whose AUROC for
telling a grade above the pool's median... is set: s = delta z + e, e ~ N(0, 1),
z = y for binary grades (AUROC = Phi(delta / sqrt 2)) and the normal score of
y's rank for continuous ones. The surrogate's 5 samples agree with the target
on a = Binomial(5, Phi(s - median s)) / 5 of them; semantic entropy falls with
agreement, plus noise, as in core.stats.simulate.synthetic_items. Strata as
core.surrogate.prepare makes them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from core.stats.simulate import surrogate_items

KINDS = ("binary", "skewed", "likert", "spiked", "bimodal")

SPIKE_BACKGROUND = 0.01
"""The spiked kind's background mean: Beta(1, 99), a judge's probability on a wrong answer."""

SPIKE_VALUES = (0.85, 1.0)
"""The spiked kind's rare values lie uniformly between these: a judge's probability on a right answer."""


def _spiked(rng: np.random.Generator, n_items: int, mean: float) -> np.ndarray:
    """Grades near 0 (Beta(1, 99), mean SPIKE_BACKGROUND) with a share of values uniform on SPIKE_VALUES, sized
    so that the mean is ``mean``."""
    low, high = SPIKE_VALUES
    share = (mean - SPIKE_BACKGROUND) / ((low + high) / 2 - SPIKE_BACKGROUND)
    labels = rng.beta(1.0, 1.0 / SPIKE_BACKGROUND - 1.0, n_items)
    spikes = rng.random(n_items) < share
    labels[spikes] = rng.uniform(low, high, spikes.sum())
    return labels


BIMODAL_MODES = ((2.0, 20.0), (20.0, 2.0))
"""The bimodal kind's two modes, Beta(2, 20) and Beta(20, 2): grades mostly low but spread (mean 0.09), and a
share near 1 (mean 0.91), sized for the mean."""


def _bimodal(rng: np.random.Generator, n_items: int, mean: float) -> np.ndarray:
    """Grades from the low mode of BIMODAL_MODES, and from the high one with the probability that makes the mean
    ``mean``."""
    (a0, b0), (a1, b1) = BIMODAL_MODES
    low, high = a0 / (a0 + b0), a1 / (a1 + b1)
    share = np.clip((mean - low) / (high - low), 0.0, 1.0)
    return np.where(rng.random(n_items) < share, rng.beta(a1, b1, n_items), rng.beta(a0, b0, n_items))


def make_pool(
    n_items: int,
    mean: float,
    *,
    kind: str = "binary",
    auroc: float = 0.7,
    seed: int = 0,
    concentration: float = 3.3,
    levels: int | None = None,
) -> pd.DataFrame:
    """An items table with `label`: binary grades with exactly round(mean N) ones, skewed
    continuous grades Beta(a, b) with mean `mean` and a + b = ``concentration`` (3.3: mean 0.09 is Beta(0.3, 3);
    the grades' variance is m (1 - m) / (a + b + 1)), or those rounded to a Likert scale (five values: 0, 1/4,
    ..., 1; a rare mean comes out a little lower), or spiked continuous grades, nearly binary: a background near 0
    (SPIKE_BACKGROUND) and a rare share of values near 1 (SPIKE_VALUES), sized for the mean, as a judge's
    probabilities of a mostly wrong model are, or bimodal ones (BIMODAL_MODES). ``levels``: continuous grades
    rounded to a scale of that many values (a Likert one's default: five)."""
    rng = np.random.default_rng(seed)
    if kind == "binary":
        labels = np.zeros(n_items)
        labels[rng.choice(n_items, int(round(mean * n_items)), replace=False)] = 1.0
        z = labels
    elif kind in ("skewed", "likert", "spiked", "bimodal"):
        if kind in ("spiked", "bimodal"):
            labels = (_spiked if kind == "spiked" else _bimodal)(rng, n_items, mean)
        else:
            labels = rng.beta(concentration * mean, concentration * (1 - mean), n_items)
        levels = levels or (5 if kind == "likert" else None)
        if levels:
            labels = np.round((levels - 1) * labels) / (levels - 1)
        z = stats.norm.ppf((stats.rankdata(labels) - 0.5) / n_items)
    else:
        raise ValueError(f"kind must be one of {KINDS}")
    delta = np.sqrt(2) * stats.norm.ppf(auroc)
    score = delta * z + rng.normal(size=n_items)
    agreement = rng.binomial(5, stats.norm.cdf(score - np.median(score))) / 5
    return surrogate_items(labels, agreement, rng)
