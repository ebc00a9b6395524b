"""Fixed-n confidence intervals for a stratified mean of grades in [0, 1] that hold at any pass rate.

For a budget decided in advance (docs/method.md, *Fixed-n intervals*). All functions are pure
and vectorised over leading (replication) axes.

Korn-Graubard interval (Korn & Graubard 1998, "Confidence intervals for
proportions with small expected number of positive counts estimated from
survey data", Survey Methodology 24(2); R survey's
``svyciprop(method = "beta")``): the Clopper-Pearson interval computed on an
effective sample size

    n* = mu_hat (1 - mu_hat) / V_hat,
    n*_df = n* (t_{n-1, 1-alpha/2} / t_{df, 1-alpha/2})^2,
    low  = Beta_{alpha/2}(n*_df mu_hat, n*_df (1 - mu_hat) + 1),
    high = Beta_{1-alpha/2}(n*_df mu_hat + 1, n*_df (1 - mu_hat)),

with low = 0 where mu_hat = 0 and high = 1 where mu_hat = 1. For binary
grades df = n - H, the design's degrees of freedom (survey's degf), as
svyciprop does: the stratum variances are functions of the stratum means,
whose uncertainty the Beta already carries. For other grades the stratum
variances are separate estimates with n_h - 1 df each, so df is
Satterthwaite's (`satterthwaite_df`): with 2 grades per stratum a skewed
pool of mean 0.09 covered 89% with df = n - H and 97% with Satterthwaite's
(benchmarks/intervals.md).

Where n* is undefined (mu_hat is 0 or 1, or V_hat = 0 before a census) the
rule is n* = n, the actual number of grades: the exact Clopper-Pearson interval
of a simple random sample of that size, never a zero-width interval. Only a
census (every stratum fully graded) has zero width.

The same interval serves grades in [0, 1] (Likert, 0/0.5/1, continuous): a
variable in [0, 1] with mean p is a mean-preserving contraction of a
Bernoulli(p) (Bernoulli(p) is the largest in convex order), so the Beta
interval at the effective size whose binomial has the observed variance is
the Clopper-Pearson interval for a binary pool of the same mean and
precision, and its skew follows the bound rather than a normal approximation.
Hoeffding (1956, "On the distribution of the number of successes in
independent trials", Ann. Math. Statist. 27) shows the binomial is the extreme
case for such sums. The small-sample t-interval the estimator used before
ignored that skew and covered 85% on a skewed pool of mean 0.09.
benchmarks/intervals.md measures both.

Per-stratum variance (`stratum_variance`): the textbook s_h^2, except that a
stratum whose grades are all equal (or which has one grade) carries
information on n_h grades, not certainty: it gets the variance of a Bernoulli
at Jeffreys' posterior mean p~_h = (n_h c_h + 1/2) / (n_h + 1), c_h the common
grade (half a pseudo-grade at each end of [0, 1]; Brown, Cai & DasGupta 2001,
Statist. Sci. 16, for Jeffreys' interval). Its term W_h^2 (1 - f_h) s~_h^2 / n_h
then falls like 1/(2 n_h^2) for c_h = 0 or 1, so the interval's width falls
like 1/n_h, as the exact Clopper-Pearson bound 1 - (alpha/2)^(1/n_h) ~ 3.7/n_h
does, and not faster; for 0 < c_h < 1 (every grade 1/2, say) it does not fall
below the Bernoulli variance at all.

The interval reads that floor with one Jeffreys prior for every stratum whose
grades all equal the same value, taken together (`equal_strata_floor`): p~ =
(c n_Z + 1/2) / (n_Z + 1), n_Z their grades together. Strata whose grades all
agree show no difference between them, and half a pseudo-grade at each end of
each of them made the prior's weight grow with the strata the pool was cut
into, as the share floor's smoothing did (`share_variance`). On a Likert pool of
mean 0.1 with a strong surrogate, two strata of no grade above 0 held three
quarters of the variance at the stop, and the stop came at 88 grades, where
Wilson's uniform size is 77. It came at 73 with it, and coverage at the stop is the
same, 0.99 (benchmarks/stopping.md). `stratum_variance` keeps the floor per
stratum for the F test of the strata's means and the saving, where a stratum's
own few equal grades must not read as certain.

On a scale finer than correct/incorrect that floor is a share rho of the
Bernoulli variance at p~, rho the share the strata whose grades differ show
(`grade_share`, 1 for 0/1 grades), and the share floor (`share_variance`) smooths those strata with
the same one prior: both then read the strata whose grades agree alike. With
the whole Bernoulli variance for them, V_hat held a Likert stratum of all-0
grades at the variance of a binary one, above the share floor's reading of the
same stratum, and on the Likert pool above a stratum's whose grades differ: its
stop at +-0.03 came at 73 grades where it now comes at 59 (Wilson's uniform
size 77), coverage at the stop 0.99 either way (benchmarks/stopping.md).
"""

from __future__ import annotations

import numpy as np
from scipy import special

LEVEL = 0.95


def sample_variance(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """s_h^2 = (sum y^2 - (sum y)^2 / n_h) / (n_h - 1), 0 where n_h < 2; arrays of shape (..., H)."""
    counts = np.asarray(counts, dtype=float)
    dev = np.maximum(np.asarray(sumsq, dtype=float) - np.asarray(sums, dtype=float) ** 2 / np.maximum(counts, 1.0), 0.0)
    return np.where(counts > 1, dev / np.maximum(counts - 1.0, 1.0), 0.0)


def jeffreys_mean(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """(sum y + 1/2) / (n + 1): the mean with Jeffreys' half a pseudo-grade at each end of [0, 1] (module
    docstring), elementwise."""
    return (sums + 0.5) / (counts + 1.0)


def _all_equal(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """Whether each group's grades are all equal (or it has one grade); False where it has none."""
    dev = np.maximum(sumsq - sums**2 / np.maximum(counts, 1.0), 0.0)
    return (counts > 0) & (dev <= 1e-9 * np.maximum(counts, 1.0))


def all_equal_floor(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """p~_h (1 - p~_h), p~_h = (sum y + 1/2) / (n_h + 1) (Jeffreys: half a pseudo-grade at each end), where a
    stratum's grades are all equal (or it has one grade); 0 elsewhere and where it has none (module docstring)."""
    counts = np.asarray(counts, dtype=float)
    sums, sumsq = np.asarray(sums, dtype=float), np.asarray(sumsq, dtype=float)
    centre = jeffreys_mean(counts, sums)
    return np.where(_all_equal(counts, sums, sumsq), centre * (1.0 - centre), 0.0)


def agreeing_strata(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> tuple[np.ndarray, ...]:
    """(equal, common, together), (..., H) each: whether a stratum's grades all equal one value (or it has one
    grade), that value, and the grades of every stratum whose grades all equal the same value, its own
    included: the strata that share one Jeffreys prior (module docstring)."""
    counts = np.asarray(counts, dtype=float)
    sums, sumsq = np.asarray(sums, dtype=float), np.asarray(sumsq, dtype=float)
    equal = _all_equal(counts, sums, sumsq)
    common = sums / np.maximum(counts, 1.0)
    same = equal[..., :, None] & equal[..., None, :] & np.isclose(common[..., :, None], common[..., None, :])
    return equal, common, (same * counts[..., None, :]).sum(axis=-1)


def equal_strata_floor(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """rho p~ (1 - p~) for each stratum whose grades all equal one value c, 0 elsewhere; (..., H). One Jeffreys
    prior for the strata whose grades all equal the same value: p~ = (c n_Z + 1/2) / (n_Z + 1), n_Z their
    grades together (`agreeing_strata`); rho the grades' share of the Bernoulli variance (`grade_share`; 1 for
    0/1 grades, where this is `all_equal_floor` with the prior shared) read from the strata whose grades differ,
    since those that agree show no spread (every grade 1/2 so far would read a share near 0, where the floor's
    task is the spread not yet seen): the floor `share_variance` reads for those strata (module docstring)."""
    agreeing = agreeing_strata(counts, sums, sumsq)
    centre = _agreeing_mean(counts, sums, agreeing)
    share = grade_share(counts, sums, sumsq, among=~agreeing[0])
    return np.where(agreeing[0], share[..., None] * centre * (1.0 - centre), 0.0)


def _agreeing_mean(counts: np.ndarray, sums: np.ndarray, agreeing: tuple[np.ndarray, ...]) -> np.ndarray:
    """(..., H) each stratum's Jeffreys-smoothed mean (`jeffreys_mean`), with one prior for the strata whose
    grades all equal the same value (``agreeing``: `agreeing_strata` of the same grades)."""
    equal, common, together = agreeing
    return np.where(equal, jeffreys_mean(together, common * together), jeffreys_mean(counts, sums))


def grade_share(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray, among: np.ndarray | bool = True) -> np.ndarray:
    """rho = (sum_h (n_h - 1) s_h^2 + p) / (sum_h n_h m_h (1 - m_h) + p), (...), p = m~ (1 - m~) at the whole
    sample's Jeffreys mean, over the strata with 2 grades or more (and ``among``, (..., H)): the grades' pooled
    share of the Bernoulli variance at their means (at most 1, since y^2 <= y; 1 for 0/1 grades), with
    Jeffreys' two half-grades, which are binary, counted as one pseudo-grade at the bound (`share_variance`)."""
    counts = np.asarray(counts, dtype=float)
    sums, sumsq = np.asarray(sums, dtype=float), np.asarray(sumsq, dtype=float)
    used = (counts > 1) & among
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        within = np.where(used, np.maximum(sumsq - counts * mean**2, 0.0), 0.0).sum(axis=-1)
        bernoulli = np.where(used, counts * mean * (1 - mean), 0.0).sum(axis=-1)
    whole = jeffreys_mean(counts.sum(axis=-1), sums.sum(axis=-1))
    pseudo = whole * (1 - whole)
    return np.minimum((within + pseudo) / (bernoulli + pseudo), 1.0)


def stratum_variance(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """s~_h^2 = max(s_h^2, `all_equal_floor`) of each stratum's grades; shape (..., H)."""
    return np.maximum(sample_variance(counts, sums, sumsq), all_equal_floor(counts, sums, sumsq))


def share_variance(
    weights: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    sums: np.ndarray,
    sumsq: np.ndarray,
    pooled: np.ndarray | bool = False,
):
    """V_rho = rho sum_h W_h^2 (1 - n_h/N_h) m~_h (1 - m~_h) / n_h, (...): the stratified variance with every
    stratum's spread read as a common share rho of the Bernoulli variance at its mean; per-stratum counts, sums
    and sums of squares (..., H).

    - m~_h = (sum + 1/2) / (n_h + 1), Jeffreys' posterior mean (half a pseudo-grade at each end), one prior
      for the strata whose grades all equal the same value, as `equal_strata_floor` reads them. Where the
      strata are read as one (``pooled``, (...): core.stats.collapse) m~_h is the whole sample's,
      m~ = (sum of all grades + 1/2) / (n + 1), as a one-stratum sample's: half a pseudo-grade at each end of
      every stratum made the floor H times a one-stratum sample's at a rare mean (skewed pools of mean 0.02
      without signal stopped at 2.0 times uniform's grades under the same rule, benchmarks/stopping.md before).
    - rho = `grade_share`, pooled over the strata: the grades' share of the Bernoulli bound, with Jeffreys'
      two half-grades, which are binary, counted as grades: one pseudo-grade at the bound. Without it a stop chosen
      when the share looked small covered 0.88-0.92 on skewed pools of mean 0.1 (with it 0.93-0.98), since a
      sample that missed the rare high grades reads a small share as well as a small mean.

    For grades in [0, 1] the variance is at most m (1 - m), and a skewed grade's sample variance falls with its
    sample mean: a sample that missed the rare high grades shows both a low mean and a low variance, so
    its V_hat is too small where it matters (fixed-n coverage 0.72 at n = 10 on a skewed pool of mean 0.02), and
    a stop chosen when V_hat looks small stops when the mean is low (coverage at the stop 0.83-0.89 on skewed
    pools of mean 0.1). The pooled share is a ratio of two quantities that fall together, so it moves far less,
    and the smoothed means keep a stratum's first grades from reading as no spread at all
    (`bounded_variance` takes the larger of the two)."""
    counts = np.asarray(counts, dtype=float)
    sums, sumsq = np.asarray(sums, dtype=float), np.asarray(sumsq, dtype=float)
    whole = jeffreys_mean(counts.sum(axis=-1), sums.sum(axis=-1))
    own = _agreeing_mean(counts, sums, agreeing_strata(counts, sums, sumsq))
    smooth = np.where(np.asarray(pooled)[..., None], whole[..., None], own)
    terms = weights**2 * (1 - counts / sizes) * smooth * (1 - smooth) / np.maximum(counts, 1.0)
    return grade_share(counts, sums, sumsq) * np.where(counts > 0, terms, 0.0).sum(axis=-1)


def bounded_variance(
    weights: np.ndarray,
    sizes: np.ndarray,
    moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    variance,
    binary,
    pooled: np.ndarray | bool = False,
) -> np.ndarray:
    """The variance a stratified mean of grades is read with: V_hat where every grade is 0 or 1 (``binary``,
    (...)), whose stratum variances are functions of the means already; else max(V_hat, `share_variance`),
    so that a sample which has not yet met a skewed grade's rare high values is not read as precise
    (fixed-n coverage at n = 10 on skewed pools of mean 0.02 and 0.1: 0.72 and 0.91 with V_hat, 0.99 and
    0.98 with this; benchmarks/stopping.md). ``moments``: the grades' counts, sums and sums of squares per
    stratum (..., H); ``pooled``: the strata are read as one (`share_variance`)."""
    return np.where(binary, variance, np.maximum(variance, share_variance(weights, sizes, *moments, pooled)))


def stratified_mean_variance(weights: np.ndarray, sizes: np.ndarray, counts: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """V = sum_h W_h^2 (1 - n_h/N_h) s_h^2 / n_h (Cochran 1977, eq. 5.7) over strata with grades; shape (...)."""
    counts = np.asarray(counts, dtype=float)
    terms = weights**2 * (1.0 - counts / sizes) * s2 / np.maximum(counts, 1.0)
    return np.where(counts > 0, terms, 0.0).sum(axis=-1)


def satterthwaite_df(weights: np.ndarray, sizes: np.ndarray, counts: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Satterthwaite's df = V^2 / sum_h (a_h s_h^2)^2 / nu_h, a_h = W_h^2 (1 - n_h/N_h) / n_h, nu_h = max(n_h - 1, 1)
    (Satterthwaite 1946; Cochran 1977, section 5A.11); inf where V = 0."""
    counts = np.asarray(counts, dtype=float)
    terms = np.where(counts > 0, weights**2 * (1.0 - counts / sizes) * s2 / np.maximum(counts, 1.0), 0.0)
    variance = terms.sum(axis=-1)
    denom = np.sum(terms**2 / np.maximum(counts - 1.0, 1.0), axis=-1)
    return np.where(denom > 0, variance**2 / np.where(denom > 0, denom, 1.0), np.inf)


def effective_size(value: np.ndarray, variance: np.ndarray, n: np.ndarray) -> np.ndarray:
    """n* = mu (1 - mu) / V, or n (the grades) where that is undefined: mu in {0, 1} or V = 0."""
    value, variance, n = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (value, variance, n)))
    spread = value * (1.0 - value)
    defined = (spread > 0) & (variance > 0)
    return np.where(defined, spread / np.where(defined, variance, 1.0), n)


def degrees_of_freedom_factor(n: np.ndarray, df: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Korn-Graubard's (t_{n-1} / t_{df})^2 at the level's upper quantile, with df at most n - 1: at most 1. A
    sample's design df is at most n - 1 (n - H for H strata, as R's survey package's degf gives it); Satterthwaite's
    counts a stratum of one grade as one df, which with several such strata passed n - 1 and made the factor
    above 1, the interval narrower than the effective size alone gives (after 2 graded items of a comparison, a
    95% interval 0.86 wide for a standard error of 0.6: an integrator's review). 1 where both are infinite."""
    q = 0.5 + level / 2
    n = np.maximum(np.asarray(n, dtype=float) - 1.0, 1.0)
    df = np.minimum(np.maximum(np.asarray(df, dtype=float), 1.0), n)
    return (special.stdtrit(n, q) / special.stdtrit(df, q)) ** 2  # stats.t.ppf's values, without its checks


def beta_interval(value: np.ndarray, size: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson interval for x = value * size successes in `size` (real) trials.

    low = Beta_{alpha/2}(x, size - x + 1) (0 where x = 0), high =
    Beta_{1-alpha/2}(x + 1, size - x) (1 where x = size) (Clopper & Pearson
    1934, in its Beta form). With size = inf the interval is the point `value`.
    """
    value = np.clip(np.asarray(value, dtype=float), 0.0, 1.0)
    size = np.asarray(size, dtype=float)
    value, size = np.broadcast_arrays(value, size)
    alpha = 1.0 - level
    finite = np.isfinite(size)
    m = np.where(finite, np.maximum(size, 1e-9), 1.0)
    x = value * m
    with np.errstate(invalid="ignore", divide="ignore"):
        # the Beta quantiles by scipy.special directly: stats.beta.ppf's values, without its ~40 us of checks a call
        low = np.where(x > 0, special.betaincinv(np.maximum(x, 1e-300), m - x + 1, alpha / 2), 0.0)
        high = np.where(x < m, special.betaincinv(x + 1, np.maximum(m - x, 1e-300), 1 - alpha / 2), 1.0)
    low = np.where(finite, np.minimum(low, value), value)
    high = np.where(finite, np.maximum(high, value), value)
    return low, high


def korn_graubard(
    value: np.ndarray, variance: np.ndarray, n: np.ndarray, df: np.ndarray, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """The Korn-Graubard interval (module docstring) from mu_hat, V_hat, the grades n and the df.

    V_hat = 0 means n* is undefined and n* = n is used; a census passes
    n = inf, which gives the zero-width interval at mu_hat.
    """
    size = effective_size(value, variance, n) * degrees_of_freedom_factor(n, df, level)
    return beta_interval(value, size, level)
