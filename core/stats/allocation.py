"""Sampling design: strata, surrogate spreads and how a grading budget is spread.

A `Design` is built once from the prepared items (`design_from_items`) and
never changes while experts grade. Everything here is a pure function of the
design, a budget and (for the adaptive spreads) the grades seen so far.

Notation (docs/method.md, *Allocation*): N items in H strata of
sizes N_h, weights W_h = N_h / N, spreads S_h (standard deviation of the grade
inside stratum h), allocation n_h with sum_h n_h = n.
"""

from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import InputError
from core.stats.proxy import PROXY_COLUMN, SURROGATE, proxy_strata
from core.stats.strata import DEFAULT_MIN_STRATUM_SIZE, DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, stratify

DEFAULT_FLOOR = 2
"""Minimum grades per stratum (docs/method.md, *Allocation*, the floor): two give a spread estimate."""

DEFAULT_PRIOR_STRENGTH = 100.0
"""Pseudo-grades behind a stratum's prior spread against its own grades (core.stats.spreads.adaptive_sd)."""

DEFAULT_CALIBRATION_STRENGTH = 40.0
"""Pseudo-grades behind the surrogate's own scale when all grades recalibrate it (core.stats.spreads.calibrated_prior_sd)."""

DEFAULT_SHRINK = 0.5
"""Weight of the surrogate's signal in a stratum's predicted mean grade; the
rest goes to the neutral 1/2, so an uncalibrated surrogate cannot starve a
stratum (the predicted spread m(1-m) is flat near m = 1/2)."""

KAPPA = float(np.log(2 / 0.05) / 2)
"""Half the log-wealth threshold L = log(2/alpha) of the anytime interval at 95% (core.stats.confseq).

The confidence sequence cannot pin a stratum's mean closer than about
L / n_h after n_h grades, even when they all agree: its betting wealth
against a mean theta below n_h grades of 1 is at most theta^-n_h (every
factor 1 + lambda (x - m) <= 1/m), which reaches e^L only for
theta <= e^(-L/n_h) ~ 1 - L/n_h. A stratum of spread S_h and deviation d costs
the sequence about n_h d^2 / (2 S_h^2) of log-wealth, so at d = L / n_h it
acts as a spread of at least S_h^2 = L / (2 n_h) = KAPPA / n_h: the queue
allocates by S_h^2 + KAPPA / n_h (`allocation_objective`), Neyman allocation
for the width of the interval the dashboard shows. Without it, strata whose
grades nearly all agree get so few grades under plain Neyman that they alone
set the anytime interval's width (gsm8k, n0 = 200: 2.35 times the fixed-n
width; benchmarks/efficiency.md). The term fades as n_h grows, so the
allocation tends to Neyman's.

Only the anytime regime reads the sequence; the others read fixed-n intervals
and allocate with FLOOR_KAPPA, the term of their floor for a stratum whose
grades all agree: core.stats.stopping.allocation_kappa decides.
"""

FLOOR_KAPPA = 0.5
"""The small-n term of the fixed-n interval: a stratum whose n_h grades all agree has the variance floor
p~ (1 - p~) ~ 1 / (2 n_h) (core.stats.intervals.all_equal_floor), which adds W_h^2 / (2 n_h^2) to V, the
form of KAPPA's term with kappa = 1/2 (core.stats.stopping.allocation_kappa: the regimes that read the
fixed-n interval)."""


COVARIATES = ("agreement", "semantic_entropy")
"""Surrogate signals used as covariates by the model-assisted estimator."""


@dataclass(frozen=True, eq=False)
class Design:
    """A stratified sampling design over a pool of N items (positions 0..N-1, pool order).

    stratum:     (N,) int, stratum of each item, 0..H-1, every stratum non-empty.
    proxy:       (N,) float in [0, 1], the surrogate's smoothed predicted grade of each
                 item, 1/2 + shrink (a_i - 1/2), a_i the agreement of the target with
                 the surrogate samples (1/2 where unknown).
    covariates:  (N, p) float, standardised surrogate signals (see COVARIATES).
    prior_mean:  (H,) smoothed predicted mean grade per stratum.
    prior_sd:    (H,) predicted spread S_h = sqrt(m_h (1 - m_h)) from prior_mean.
    floor:       minimum grades per stratum before Neyman takes over.
    prior_strength: pseudo-grades behind a stratum's prior spread against its own grades.
    calibration_strength: pseudo-grades behind the surrogate's scale against all grades.
    ids:         item ids in pool order (for the app; may be empty).
    shrink:      the weight of the surrogate's signal in `proxy` (DEFAULT_SHRINK).
    kappa:       the allocation's small-n term (KAPPA for the anytime regime, else 0:
                 core.stats.stopping.allocation_kappa).
    spread_share: (H,) or None: each stratum's expected share of the bound m_h (1 - m_h) its grades use,
                 for designs whose grades are not 0/1 by nature (a difference between two targets,
                 core.stats.compare_design); it replaces the pooled share rho of
                 core.stats.spreads.calibrated_prior_sd. None (every one-target design): rho as measured.
    """

    stratum: np.ndarray
    proxy: np.ndarray
    covariates: np.ndarray
    prior_mean: np.ndarray
    prior_sd: np.ndarray
    floor: int = DEFAULT_FLOOR
    prior_strength: float = DEFAULT_PRIOR_STRENGTH
    calibration_strength: float = DEFAULT_CALIBRATION_STRENGTH
    ids: tuple[str, ...] = field(default=())
    shrink: float = DEFAULT_SHRINK
    kappa: float = KAPPA
    spread_share: np.ndarray | None = None

    @property
    def N(self) -> int:  # noqa: N802 - survey notation
        return int(self.stratum.size)

    @property
    def H(self) -> int:  # noqa: N802 - survey notation
        return int(self.prior_sd.size)

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        """N_h, the number of items in each stratum (counted once: O(N), and the queue asks on every draw)."""
        sizes = np.bincount(self.stratum, minlength=self.H)
        sizes.flags.writeable = False
        return sizes

    @functools.cached_property
    def weights(self) -> np.ndarray:
        """W_h = N_h / N."""
        weights = self.sizes / self.N
        weights.flags.writeable = False
        return weights

    @property
    def covariate_means(self) -> np.ndarray:
        """(H, p) population mean of each covariate inside each stratum (known: no grade needed)."""
        sums = np.zeros((self.H, self.covariates.shape[1]))
        np.add.at(sums, self.stratum, self.covariates)
        return sums / self.sizes[:, None]


def make_design(
    stratum: np.ndarray,
    proxy: np.ndarray,
    covariates: np.ndarray | None = None,
    *,
    floor: int = DEFAULT_FLOOR,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    calibration_strength: float = DEFAULT_CALIBRATION_STRENGTH,
    shrink: float = DEFAULT_SHRINK,
    kappa: float = KAPPA,
    ids: tuple[str, ...] = (),
) -> Design:
    """Design from arrays: strata are relabelled 0..H-1 in sorted order of the given labels.

    The smoothed predicted grade of item i is p_i = 1/2 + shrink (proxy_i - 1/2),
    that of stratum h m_h = mean_h(p_i), and its predicted spread S_h = sqrt(m_h (1 - m_h)): for a 0/1 grade with
    predicted probability p_i, the law of total variance gives
    S_h^2 = E_h[p(1-p)] + Var_h(p) = mean_h(p) (1 - mean_h(p)) (docs/method.md, *Allocation*).
    """
    stratum = np.asarray(stratum)
    proxy = np.asarray(proxy, dtype=float)
    if stratum.ndim != 1 or stratum.size == 0:
        raise InputError("the design needs at least one item")
    if proxy.shape != stratum.shape:
        raise InputError(f"proxy has {proxy.size} values for {stratum.size} items")
    if floor < 1:
        raise InputError(f"floor must be at least 1, got {floor}")
    if not 0.0 <= shrink <= 1.0:
        raise InputError(f"shrink must be in [0, 1], got {shrink}")
    if not kappa >= 0.0:
        raise InputError(f"kappa must be at least 0, got {kappa}")
    _, codes = np.unique(stratum, return_inverse=True)
    codes = codes.astype(np.int64)
    proxy = 0.5 + shrink * (np.where(np.isfinite(proxy), np.clip(proxy, 0.0, 1.0), 0.5) - 0.5)
    if covariates is None:
        covariates = np.zeros((stratum.size, 0))
    covariates = _standardise(np.asarray(covariates, dtype=float).reshape(stratum.size, -1))
    sizes = np.bincount(codes)
    prior_mean = np.clip(np.bincount(codes, weights=proxy) / sizes, 0.0, 1.0)  # rounding could leave [0, 1]
    return Design(
        stratum=codes,
        proxy=proxy,
        covariates=covariates,
        prior_mean=prior_mean,
        prior_sd=np.sqrt(prior_mean * (1.0 - prior_mean)),
        floor=int(floor),
        prior_strength=float(prior_strength),
        calibration_strength=float(calibration_strength),
        ids=tuple(ids),
        shrink=float(shrink),
        kappa=float(kappa),
    )


def design_from_items(
    items: pd.DataFrame,
    *,
    stratify_by: str | None = DEFAULT_STRATIFY_BY,
    n_strata: int = DEFAULT_N_STRATA,
    min_stratum_size: int = DEFAULT_MIN_STRATUM_SIZE,
    proxy_column: str | None = None,
    covariates: tuple[str, ...] = COVARIATES,
    floor: int = DEFAULT_FLOOR,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    calibration_strength: float = DEFAULT_CALIBRATION_STRENGTH,
    shrink: float = DEFAULT_SHRINK,
    kappa: float = KAPPA,
) -> Design:
    """The design the app grades with, from `core.surrogate.prepare.prepare_items`'s DataFrame.

    Strata: with `stratify_by` (default DEFAULT_STRATIFY_BY) the items are
    re-stratified by `core.stats.strata.stratify(semantic_entropy, agreement, by=stratify_by,
    n_strata=n_strata, min_size=min_stratum_size)`; with `stratify_by=None`
    the prepared `stratum` column is used as it is. The surrogate's
    predicted grade is `proxy_column` (agreement; 1/2 where an item has no
    samples); covariates missing from the frame are skipped, NaN covariate
    values are replaced by the column mean.

    Items prepared with a proxy (a PROXY_COLUMN, core.stats.proxy) use it by default (`proxy_column=None`):
    its strata replace the surrogate's `stratify_by`, it is the predicted grade and the first
    covariate (core.stats.proxy states the rule). `proxy_column="agreement"` keeps the surrogate's design.
    """
    if proxy_column is None and PROXY_COLUMN in items.columns:
        if stratify_by is not None:
            stratum = proxy_strata(items[PROXY_COLUMN].to_numpy(dtype=float), n_strata, min_stratum_size)
            items = items.assign(stratum=stratum)
            stratify_by = None
        proxy_column, covariates = PROXY_COLUMN, (PROXY_COLUMN, *covariates)
    proxy_column = proxy_column or SURROGATE
    needed = ["stratum" if stratify_by is None else "semantic_entropy", proxy_column]
    missing = [c for c in needed if c not in items.columns]
    if missing:
        raise InputError(
            f"the items have no column {', '.join(repr(c) for c in missing)}",
            fix="prepare the items with core.surrogate.prepare.prepare_items first",
        )
    if stratify_by is None:
        stratum = items["stratum"].to_numpy()
    else:
        entropy = items["semantic_entropy"].to_numpy(dtype=float)
        stratum = stratify(
            entropy,
            items[proxy_column].to_numpy(dtype=float),
            n_strata=n_strata,
            by=stratify_by,
            min_size=min_stratum_size,
        )
    if pd.isna(stratum).any():
        row = int(np.flatnonzero(pd.isna(stratum))[0])
        raise InputError("the item has no stratum", row=row + 1, column="stratum")
    columns = [c for c in covariates if c in items.columns]
    values = items[columns].to_numpy(dtype=float) if columns else None
    if values is not None:
        finite = np.isfinite(values)
        column_means = np.where(finite, values, 0.0).sum(axis=0) / np.maximum(
            finite.sum(axis=0), 1
        )  # 0 for an all-NaN column
        values = np.where(finite, values, column_means)
    ids = tuple(items["id"].astype(str)) if "id" in items.columns else ()
    return make_design(
        stratum,
        items[proxy_column].to_numpy(dtype=float),
        values,
        floor=floor,
        prior_strength=prior_strength,
        calibration_strength=calibration_strength,
        shrink=shrink,
        kappa=kappa,
        ids=ids,
    )


def _standardise(x: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation; constant columns dropped."""
    sd = x.std(axis=0)
    keep = sd > 1e-12
    return (x[:, keep] - x[:, keep].mean(axis=0)) / sd[keep]


# --- allocations -----------------------------------------------------------------


def largest_remainder(quota: np.ndarray, n: int, caps: np.ndarray, floors: np.ndarray | None = None) -> np.ndarray:
    """Integer allocation closest to real quotas: floor(quota), then +1 to the largest remainders.

    Hamilton's largest-remainder method, with lower bounds `floors` and upper
    bounds `caps` honoured: returns integers n_h with floors_h <= n_h <= caps_h
    and sum n_h = n (requires sum floors <= n <= sum caps).
    """
    caps = np.asarray(caps, dtype=np.int64)
    floors = np.zeros_like(caps) if floors is None else np.minimum(np.asarray(floors, dtype=np.int64), caps)
    if not floors.sum() <= n <= caps.sum():
        raise InputError(
            f"cannot allocate {n} grades to strata holding {int(caps.sum())} items with floors summing to {int(floors.sum())}"
        )
    quota = np.clip(np.asarray(quota, dtype=float), floors, caps)
    alloc = np.clip(np.floor(quota).astype(np.int64), floors, caps)
    remainder = quota - alloc
    while alloc.sum() != n:
        if alloc.sum() < n:
            open_ = alloc < caps
            h = np.flatnonzero(open_)[np.argmax(remainder[open_])]
            alloc[h] += 1
        else:
            open_ = alloc > floors
            h = np.flatnonzero(open_)[np.argmin(remainder[open_])]
            alloc[h] -= 1
        remainder[h] = -np.inf if alloc.sum() < n else np.inf
    return alloc


def neyman_allocation(sizes: np.ndarray, sds: np.ndarray, n: int, floor: int = DEFAULT_FLOOR) -> np.ndarray:
    """Neyman allocation n_h = n N_h S_h / sum_j N_j S_j, with floors and caps, rounded.

    Source: Neyman (1934); Cochran, Sampling Techniques (1977), section 5.5.
    Every stratum first gets min(floor, N_h); if n cannot cover the floors,
    they go to the strata with the largest N_h S_h. A stratum whose quota
    exceeds N_h is fully sampled and the rest re-allocated among the others
    (Cochran 5.8); then largest-remainder rounding.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(min(n, sizes.sum()))
    floors = np.minimum(floor, sizes)
    if floors.sum() >= n:
        return _round_robin(floors, sizes * np.asarray(sds, dtype=float), n)
    weight = sizes * np.maximum(np.asarray(sds, dtype=float), 0.0)
    if weight.sum() <= 0:
        weight = sizes.astype(float)
    fixed = np.zeros(sizes.size, dtype=bool)
    quota = floors.astype(float)
    for _ in range(sizes.size + 1):
        free = ~fixed
        left = n - quota[fixed].sum()
        share = weight[free] / weight[free].sum() if weight[free].sum() > 0 else sizes[free] / sizes[free].sum()
        quota[free] = left * share
        over = free & ((quota > sizes) | (quota < floors))
        if not over.any():
            break
        quota[over] = np.clip(quota[over], floors[over], sizes[over])
        fixed |= over
    return largest_remainder(quota, n, sizes, floors)


def _round_robin(floors: np.ndarray, priority: np.ndarray, n: int) -> np.ndarray:
    """n grades (n <= sum floors) one per stratum per round, largest priority first, up to the floors."""
    alloc = np.zeros(floors.size, dtype=np.int64)
    order = np.argsort(-priority, kind="stable")
    for _ in range(int(floors.max(initial=0))):
        for h in order:
            if alloc.sum() < n and alloc[h] < floors[h]:
                alloc[h] += 1
    return alloc


def proportional_allocation(sizes: np.ndarray, n: int, floor: int = DEFAULT_FLOOR) -> np.ndarray:
    """Proportional allocation n_h = n N_h / N (Neyman with equal spreads), floors, caps, rounded."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return neyman_allocation(sizes, np.ones(sizes.size), n, floor)


def next_stratum(
    weights: np.ndarray, sds: np.ndarray, counts: np.ndarray, sizes: np.ndarray, floor: int, kappa: float = KAPPA
) -> np.ndarray:
    """Stratum that should get the next grade, for one state or a batch (leading axes).

    Floors first, before anything else: while a stratum has fewer than
    min(floor, N_h) grades, the next grade goes to the stratum with the fewest
    grades among those, ties to the largest W_h S_h (round robin), so after
    H grades every stratum has one and no estimate leans on a stratum without
    grades (docs/method.md, *Allocation*, the floor). Then the stratum, among those with
    n_h < N_h, whose next grade lowers `allocation_objective` the most:
    W_h^2 S_h^2 / (n_h (n_h + 1)) + W_h^2 kappa (2 n_h + 1) / (n_h^2 (n_h + 1)^2).
    Repeating the greedy step gives at every prefix size the integer
    allocation that minimises the objective given the floors (marginal
    analysis for a separable convex objective, Gross 1966; docs/method.md,
    *Allocation*, the queue order). Returns -1 where every stratum is exhausted.
    """
    counts = np.asarray(counts)
    sds = np.broadcast_to(np.asarray(sds, dtype=float), counts.shape)
    open_ = counts < sizes
    due = counts < np.minimum(floor, sizes)
    ws = weights * sds
    tie = ws / (ws.max(axis=-1, keepdims=True) + 1e-300) * 0.5
    first = np.where(due, -counts + tie, -np.inf)
    k = np.maximum(counts, 1.0)
    drop = (ws**2 + weights**2 * kappa * (2 * k + 1) / (k * (k + 1))) / (k * (k + 1))
    gain = np.where(open_, drop, -np.inf)
    score = np.where(due.any(axis=-1, keepdims=True), first, gain)
    choice = np.argmax(score, axis=-1)
    return np.where(open_.any(axis=-1), choice, -1)


def compromise_spreads(weights: np.ndarray, spreads: np.ndarray) -> np.ndarray:
    """The spreads (..., H) that allocate for K criteria together, from each criterion's spreads (..., K, H).

    The allocation minimises the sum of the criteria's relative losses, sum_k V_k / V_k^opt, each criterion's
    stratified variance V_k = sum_h W_h^2 S_hk^2 / n_h (less its finite-population term, which no allocation
    changes) over its own Neyman minimum V_k^opt = (sum_h W_h S_hk)^2 / n. That is a weighted sum of the
    variances, sum_k lambda_k V_k with lambda_k = 1 / (sum_h W_h S_hk)^2, i.e. one variance whose spreads are
    S_h^2 = sum_k w_k S_hk^2, w_k = lambda_k / sum_j lambda_j; Neyman's allocation for it,
    n_h proportional to W_h sqrt(sum_k lambda_k S_hk^2), is the multivariate form of Kokan & Khan (1967,
    JRSS B 29, 115-125), which Bethel (1989, Survey Methodology 15, 47-57) shows is also the least-cost
    allocation meeting a variance bound per criterion for some multipliers lambda_k (Chromy 1987,
    Proc. ASA Survey Research Methods, computes them). Normalised so, the result is a weighted mean of the
    criteria's variances on the grades' own scale: with one criterion it is that criterion's spreads, and
    the queue's small-n term kappa (core.stats.allocation.allocation_objective, in grade units like the
    variances) keeps its weight, sum_k w_k J_k being the one-criterion J with these spreads. The shape does
    not change when one criterion's spreads are multiplied by a constant (lambda_k absorbs it). A criterion
    with no spread in any stratum (sum_h W_h S_hk = 0) has variance 0 under every allocation and is left
    out; with none left, the spreads are 0. Vectorised over leading axes.
    """
    spreads = np.asarray(spreads, dtype=float)
    total = np.sum(weights * spreads, axis=-1)
    lam = np.divide(1.0, total**2, out=np.zeros_like(total), where=total > 0)
    share = np.divide(lam, lam.sum(axis=-1, keepdims=True), out=np.zeros_like(lam), where=lam > 0)
    return np.sqrt(np.sum(share[..., None] * spreads**2, axis=-2))


def relative_losses(weights: np.ndarray, spreads: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Each criterion's variance over its Neyman minimum, V_k / V_k^opt, when stratum h gets the share
    ``share_h`` = n_h / n of the grades: sum_h W_h^2 S_hk^2 / share_h over (sum_h W_h S_hk)^2 (the stratified
    variance and Neyman's minimum without their finite-population terms, Cochran 1977, section 5.5: 1 at
    Neyman's allocation for criterion k, more elsewhere). spreads (..., K, H), share (..., H) -> (..., K)."""
    spreads = np.asarray(spreads, dtype=float)
    share = np.asarray(share, dtype=float)[..., None, :]
    return np.sum(weights**2 * spreads**2 / share, axis=-1) / np.sum(weights * spreads, axis=-1) ** 2


def allocation_objective(
    weights: np.ndarray, sizes: np.ndarray, sds: np.ndarray, alloc: np.ndarray, kappa: float = KAPPA
) -> float:
    """J = V + sum_h W_h^2 kappa / n_h^2, V the stratified variance (`stratified_variance`): what the queue minimises.

    V alone is the fixed-n interval's variance; the second term is the
    anytime interval's price for a stratum with few grades (see KAPPA).
    """
    alloc = np.asarray(alloc, dtype=float)
    return stratified_variance(weights, sizes, sds, alloc) + float(
        np.sum(weights**2 * kappa / np.maximum(alloc, 1) ** 2)
    )


def greedy_prefixes(sizes: np.ndarray, sds: np.ndarray, floor: int, kappa: float = KAPPA) -> Iterator[np.ndarray]:
    """Counts per stratum after 1, 2, ..., N steps of `next_stratum` with fixed spreads ``sds``: the anytime
    queue's prefixes (the one greedy loop; each yielded array is a fresh copy)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    weights = sizes / sizes.sum()
    counts = np.zeros(sizes.size, dtype=np.int64)
    for _ in range(int(sizes.sum())):
        counts[next_stratum(weights, sds, counts, sizes, floor, kappa)] += 1
        yield counts.copy()


def greedy_counts(sizes: np.ndarray, sds: np.ndarray, n: int, floor: int, kappa: float = KAPPA) -> np.ndarray:
    """Counts per stratum after n steps of `next_stratum` (the anytime queue's prefix of size n)."""
    last = collections.deque(itertools.islice(greedy_prefixes(sizes, sds, floor, kappa), max(int(n), 0)), maxlen=1)
    return last[0] if last else np.zeros(np.asarray(sizes).size, dtype=np.int64)


def stratum_moments(design: Design, positions, grades) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stratum h: the count n_h, the sum sum_i y_i and the sum of squares sum_i y_i^2 of the grades y at
    ``positions`` (the sufficient statistics of every per-stratum mean and variance). positions and grades are
    (n,) or (R, n) for R replications; each result is (H,) or (R, H), floats."""
    onehot = (design.stratum[np.asarray(positions, dtype=np.int64)][..., None] == np.arange(design.H)).astype(float)
    y = np.asarray(grades, dtype=float)
    return (
        onehot.sum(axis=-2),
        np.einsum("...nh,...n->...h", onehot, y),
        np.einsum("...nh,...n->...h", onehot, y * y),
    )


def stratum_sd(design: Design, values: np.ndarray, ddof: int = 1) -> np.ndarray:
    """(H,) the standard deviation of ``values`` (one per item of the pool) in each stratum, with divisor
    N_h - ddof (Cochran's S_h at ddof = 1); 0 in a stratum of at most ddof items."""
    values = np.asarray(values, dtype=float)
    return np.array(
        [values[design.stratum == h].std(ddof=ddof) if design.sizes[h] > ddof else 0.0 for h in range(design.H)]
    )


def planned_allocation(design: Design, n: int) -> np.ndarray:
    """Grades per stratum the queue plans for a budget of n, before any grade (surrogate spreads)."""
    return greedy_counts(design.sizes, design.prior_sd, n, design.floor, design.kappa)


def stratified_variance(weights: np.ndarray, sizes: np.ndarray, sds: np.ndarray, alloc: np.ndarray) -> float:
    """V = sum_h W_h^2 (1 - n_h/N_h) S_h^2 / n_h (Cochran 1977, eq. 5.7).

    A stratum with n_h = 0 (only while the queue is still giving the strata
    their first grades) counts W_h^2 S_h^2, as if it had one grade.
    """
    alloc = np.asarray(alloc, dtype=float)
    return float(np.sum(weights**2 * (1 - alloc / sizes) * sds**2 / np.maximum(alloc, 1)))
