"""Labels saved against uniform random sampling, read from the grades so far (docs/method.md, *Savings*).

For a stratified sample with n_h grades in stratum h (sample means ybar_h,
sample variances s_h^2, v_h = (1 - n_h/N_h) s_h^2 / n_h the variance of ybar_h):

    V      = sum_h W_h^2 v_h                                  (the design's variance)
    B      = sum_h W_h (ybar_h - mu_hat)^2 - sum_h W_h (1 - W_h) v_h   (between strata)
    S^2    = sum_h W_h s_h^2 + B
    V_unif = (1 - n/N) S^2 / n                                (uniform sampling at the same n)
    deff   = V / V_unif,  m = S^2 / (V + S^2/N),  saving = 1 - n/m

The last term of B removes the sampling noise of the stratum means from the
between-strata part: E[sum_h W_h (ybar_h - mu_hat)^2] = sum_h W_h (Ybar_h - mu)^2
+ sum_h W_h (1 - W_h) v_h (expand and use Var(mu_hat) = sum_h W_h^2 v_h), so
without it a surrogate that knows nothing still shows a saving (+27% on
average at n = 10 in the audit of issue 13). s_h^2 is floored where a
stratum's grades are all equal (core.stats.intervals.stratum_variance), as in the
interval: a stratum that the adaptive queue left with 2 equal grades would
otherwise count as certain, and the saving would credit the allocation with
the noise it chased (+6% shown, -3% realised, at n = 20 on a pool of mean 0.1
without signal; benchmarks/intervals.md).
The app's saving (core.stats.estimate) reads the interval's own s_h^2, so that
V is the variance the interval reports: where the strata are read as one
(core.stats.collapse: the F test below does not reject), their pooled
within-stratum variance, floored as a whole; each stratum's own floor there
made S^2 of a rare mean several times the pool's, and uniform sampling look
dear.

The corrected B is unbiased but noisy with few grades per stratum: with no
signal and 4 grades in each of 5 strata about a quarter of samples would
show more than +15%. Its standard error, by the delta method for a quadratic
form in nearly normal stratum means (Var((x)^2) = 2 v^2 + 4 x^2 v),

    se(B)^2 = 2 sum_h W_h^2 (1 - W_h)^2 v_h^2 + 4 sum_h W_h^2 (ybar_h - mu_hat)^2 v_h,

gives the saving a range: the saving at max(B - z se, 0) and at B + z se
(z for SAVING_RANGE_LEVEL; B >= 0 in the population).

The saving shown counts B only once the grades show that the stratum means
differ, by the one-way analysis-of-variance F test of equal stratum means
(Fisher; e.g. Scheffe, The Analysis of Variance, 1959, section 2.1):

    F = [sum_h n_h (ybar_h - ybar)^2 / (H - 1)] / [sum_h (n_h - 1) s_h^2 / (n - H)],

ybar the plain mean of all n grades, s_h^2 floored as above, rejected where
P(F(H - 1, n - H) > F) < HETEROGENEITY_LEVEL; otherwise the saving at B = 0.
The allocation's own effect (V against sum_h W_h s_h^2) always counts. The
earlier rule, B - z se > 0 with the delta-method se, trusted a normal
approximation of a quadratic form in 3 or 4 grades per stratum: with a
surrogate that knows nothing, 12% of samples showed more than +15% at
n = 20 (benchmarks/estimation.md before this rule). Under equal stratum means
the F test claims a gain in about HETEROGENEITY_LEVEL of samples whatever
the allocation, since the allocation only chooses the n_h.
The saving is withheld (NaN, or None) until every stratum has 2 grades, when
s_h^2 first exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from core.stats.allocation import stratified_variance
from core.stats.intervals import stratum_variance

SAVING_RANGE_LEVEL = 0.8
"""Coverage of the saving's range; z = its normal quantile (1.28)."""
SAVING_RANGE_Z = stats.norm.ppf(0.5 + SAVING_RANGE_LEVEL / 2)
"""That z, computed once: the live replay of the stopping rule asks for the saving at every grade, and a scipy
quantile costs tens of microseconds."""

HETEROGENEITY_LEVEL = 0.05
"""Level of the F test of equal stratum means before the between-strata gain counts in the saving shown."""


@dataclass(frozen=True)
class LiveSaving:
    """The live saving shown (share = 1 - n/m, m = uniform_labels, deff) and its range low..high (shares);
    s2, the pool's variance S^2 it compares with (within + B); apart, whether the grades read the strata apart
    (the F test's verdict, core.stats.collapse): while they do not, the design reads its grades as one sample,
    as uniform sampling does."""

    share: float
    uniform_labels: float
    deff: float
    low: float
    high: float
    s2: float
    apart: bool = True


@dataclass(frozen=True)
class LiveSavingBatch:
    """`LiveSaving`'s fields as arrays of shape (...); NaN where the saving is withheld."""

    share: np.ndarray
    uniform_labels: np.ndarray
    deff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    s2: np.ndarray
    apart: np.ndarray

    def first(self) -> LiveSaving | None:
        """The first sample's `LiveSaving` (the batch of one sample the app reads); None where it is withheld."""
        values = {name: np.ravel(getattr(self, name))[0] for name in LiveSaving.__dataclass_fields__}
        if np.isnan(values["share"]):
            return None
        return LiveSaving(**{k: bool(v) if k == "apart" else float(v) for k, v in values.items()})


def heterogeneity_pvalue(counts: np.ndarray, sums: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """P-value of the one-way ANOVA F test of equal stratum means (module docstring), shape (...).

    counts, sums: per-stratum grade counts and sums (..., H); s2: the strata's
    (floored) sample variances. 1 where the test is undefined (n <= H).
    """
    counts = np.asarray(counts, dtype=float)
    n, groups = counts.sum(axis=-1), counts.shape[-1]
    means = sums / np.maximum(counts, 1.0)
    grand = np.sum(sums, axis=-1, keepdims=True) / np.maximum(n, 1.0)[..., None]
    between = np.sum(counts * (means - grand) ** 2, axis=-1) / max(groups - 1, 1)
    within = np.sum(np.maximum(counts - 1.0, 0.0) * s2, axis=-1) / np.maximum(n - groups, 1.0)
    ratio = np.divide(between, within, out=np.zeros_like(between), where=within > 0)
    p = special.fdtrc(max(groups - 1, 1), np.maximum(n - groups, 1.0), ratio)  # stats.f.sf, without its checks
    return np.where((n > groups) & (groups > 1), p, 1.0)


def live_saving_batch(
    weights: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    sums: np.ndarray,
    sumsq: np.ndarray,
    spreads: np.ndarray | None = None,
    differ: np.ndarray | None = None,
) -> LiveSavingBatch:
    """The saving of the module docstring for per-stratum grade counts, sums and sums of squares (..., H).

    ``spreads``: the s_h^2 it reads, (..., H); default each stratum's own, floored (stratum_variance).
    core.stats.estimate passes the interval's (core.stats.estimate.read_spreads: pooled while the strata are
    read as one). The F test always reads each stratum's own, as core.stats.collapse.strata_differ does;
    ``differ``, (...), is its verdict where the caller has it already (core.stats.estimate, from the same
    grades), else the test is run here.
    NaN where withheld: a stratum with fewer than 2 grades, or sum_h W_h s_h^2 + B <= 0.
    """
    counts = np.asarray(counts, dtype=float)
    sums, sumsq = np.asarray(sums, dtype=float), np.asarray(sumsq, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    n = counts.sum(axis=-1)
    big_n = sizes.sum()
    safe = np.maximum(counts, 1.0)
    own = stratum_variance(counts, sums, sumsq)
    s2 = own if spreads is None else np.asarray(spreads, dtype=float)
    v = (1.0 - counts / sizes) * s2 / safe
    dev = sums / safe - np.sum(weights * sums / safe, axis=-1, keepdims=True)
    between = np.sum(weights * dev**2, axis=-1) - np.sum(weights * (1 - weights) * v, axis=-1)
    se = np.sqrt(2 * np.sum((weights * (1 - weights) * v) ** 2, axis=-1) + 4 * np.sum(weights**2 * dev**2 * v, axis=-1))
    within = np.sum(weights * s2, axis=-1)
    variance = np.sum(weights**2 * v, axis=-1)
    shown = (counts >= 2).all(axis=-1) & (within + between > 0)
    evident = heterogeneity_pvalue(counts, sums, own) < HETEROGENEITY_LEVEL if differ is None else np.asarray(differ)

    def at(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        total = np.where(shown, np.maximum(within + b, 1e-300), 1.0)
        m = total / (variance + total / big_n)
        uniform = (1.0 - n / big_n) * total / np.maximum(n, 1.0)
        deff = variance / np.where(uniform > 0, uniform, np.nan)  # NaN at a census
        return np.where(shown, 1.0 - n / m, np.nan), np.where(shown, m, np.nan), np.where(shown, deff, np.nan)

    share, m, deff = at(np.where(evident, between, 0.0))
    return LiveSavingBatch(
        share=share,
        uniform_labels=m,
        deff=deff,
        low=at(np.maximum(between - SAVING_RANGE_Z * se, 0.0))[0],
        high=at(between + SAVING_RANGE_Z * se)[0],
        s2=np.where(shown, within + np.where(evident, between, 0.0), np.nan),
        apart=np.asarray(evident, dtype=bool),
    )


def live_saving(
    weights: np.ndarray, sizes: np.ndarray, counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray
) -> LiveSaving | None:
    """`live_saving_batch` for one sample ((H,) arrays); None where it is withheld."""
    return live_saving_batch(weights, sizes, counts, sums, sumsq).first()


def same_precision_grades(n: float, deff: float, size: int) -> float:
    """m, the grades of a uniform random sample as precise as a design of ``n`` grades with design effect
    ``deff`` = V / V_unif(n): (1/m - 1/N) S^2 = deff (1/n - 1/N) S^2 (Cochran 1977, eq. 2.8, with the
    finite-population correction on both sides), so m = 1 / (deff / n + (1 - deff) / N), and 1 - n / m =
    (1 - deff)(1 - n / N). n / deff, the same without the correction, overstated it: a budget of 150 of
    gsm8k's 1,319 items showed a uniform sample needing 445 grades where 364 match its variance (a manager's
    review)."""
    return 1.0 / (deff / n + (1.0 - deff) / size)


def planned_design_effect(
    weights: np.ndarray, sizes: np.ndarray, means: np.ndarray, sds: np.ndarray, alloc: np.ndarray
) -> tuple[float, float]:
    """(deff, V) of a budget allocated as ``alloc`` before any grade, from predicted stratum means and spreads:
    V = sum_h W_h^2 (1 - n_h/N_h) S_h^2 / n_h (Cochran 1977, eq. 5.7) and deff = V / V_unif, V_unif =
    (1 - n/N) S^2 / n the variance of a uniform sample of the same n, S^2 = sum_h W_h S_h^2 +
    sum_h W_h (m_h - m)^2 the pool's variance the predictions imply (the module docstring's S^2 without
    sampling noise). A uniform sample then needs `same_precision_grades` for the same precision."""
    n, big_n = float(np.sum(alloc)), sizes.sum()
    variance = stratified_variance(weights, sizes, sds, alloc)
    mean = float(weights @ means)
    s2 = float(weights @ sds**2 + weights @ (means - mean) ** 2)
    uniform = (1 - n / big_n) * s2 / max(n, 1.0)
    return (variance / uniform if uniform > 0 else float("nan")), variance
