"""The anytime grading queue: which item an expert should grade next.

`next_item` is a pure function of the design, the project's grading state and
a seed, so any number of graders can draw at once: the caller records the
returned item as reserved (in one transaction) before the next draw. Every
prefix of the grading order is close to the optimal allocation for its own
size (see `core.stats.allocation.next_stratum`), and the spreads it allocates by are
re-estimated from the grades as they arrive (adaptive Neyman: `queue_spreads`). Within a stratum the item
is the first free one in a random order of the pool fixed by the seed, i.e.
uniform at random without replacement.

`queue_stratum` is the queue's one step, the stratum of the next grade from the grades' sums; it works on
one project's state and on R replications at once. `next_item` calls it for the app, and
`core.stats.simulate.replay_queue` calls it at every step of its batched replay.

A rubric project that allocates for all its criteria (core.rubric.ALL) gives the queue the other criteria's
grades too (`QueueState.criteria`): each criterion's spreads come from its own grades and calibration
(`queue_spreads`), and the queue allocates by their compromise (core.stats.allocation.compromise_spreads).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import InputError
from core.stats.allocation import FLOOR_KAPPA, Design, compromise_spreads, next_stratum, stratum_moments
from core.stats.collapse import spreads_differ, strata_differ
from core.stats.spreads import adaptive_sd, calibrated_prior_sd, pooled_sums


@dataclass(frozen=True)
class QueueState:
    """What the project has done so far, by item position (0..N-1, pool order).

    graded:   position -> grade in [0, 1].
    skipped:  positions a grader passed over; they go back to the queue (after
              the stratum's other free items) and count as not graded.
    reserved: positions handed to a grader and not yet graded or skipped.
    criteria: the other criteria's grades (position -> grade), one mapping per criterion, when the queue
              allocates for every criterion of a rubric; ``graded`` holds the design criterion's, which alone
              say whether an item is graded. Empty: the queue allocates for ``graded`` alone.
    """

    graded: Mapping[int, float] = field(default_factory=dict)
    skipped: frozenset[int] = frozenset()
    reserved: frozenset[int] = frozenset()
    criteria: tuple[Mapping[int, float], ...] = ()

    @classmethod
    def from_lists(
        cls,
        positions: Iterable[int] = (),
        grades: Iterable[float] = (),
        skipped: Iterable[int] = (),
        reserved: Iterable[int] = (),
    ) -> QueueState:
        positions, grades = list(positions), list(grades)
        if len(positions) != len(grades):
            raise ValueError(f"{len(positions)} graded positions but {len(grades)} grades")
        graded = dict(zip((int(p) for p in positions), (float(g) for g in grades)))
        return cls(
            graded,
            frozenset(int(p) for p in skipped) - graded.keys(),
            frozenset(int(p) for p in reserved) - graded.keys(),
        )


def item_order(n_items: int, seed: int) -> np.ndarray:
    """The seed's random order of positions 0..n_items-1 (numpy PCG64 permutation)."""
    return np.random.default_rng(seed).permutation(n_items)


def queue_spreads(
    design: Design,
    moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    pooled: tuple[np.ndarray, ...],
    differ: np.ndarray | None = None,
) -> np.ndarray:
    """The spreads the queue allocates by: the surrogate prior recalibrated by the grades
    (`calibrated_prior_sd` on the pooled sums, `core.stats.spreads.pooled_sums`), blended with each
    stratum's own grades (`adaptive_sd` on `core.stats.allocation.stratum_moments`), where the strata
    ``differ`` (default: the grades show it, core.stats.collapse.strata_differ); elsewhere one common spread,
    sqrt(sum_h W_h S_h^2) of those, i.e. proportional allocation (core.stats.collapse). Vectorised over a
    leading replication axis."""
    differ = strata_differ(*moments) if differ is None else differ
    spreads = adaptive_sd(calibrated_prior_sd(design, *pooled), design.prior_strength, *moments)
    common = np.sqrt(np.sum(design.weights * spreads**2, axis=-1, keepdims=True))
    return np.where(np.asarray(differ)[..., None], spreads, common)


def queue_kappa(design: Design, differ: np.ndarray) -> np.ndarray:
    """The small-n term the queue allocates with (core.stats.allocation.next_stratum), (1,) or (R, 1): the
    design's where the strata ``differ``. Where they are read as one, a design allocated for the fixed-n
    interval (its term FLOOR_KAPPA, the all-equal floor of a stratum) has none: the variance then pools the
    strata (core.stats.collapse), so its floor is the whole sample's, a multiple of sum_h W_h^2 / n_h like V
    itself, which proportional allocation minimises. Kept per stratum, the term gave every stratum of unequal
    sizes the same grades on pools whose grades vary little (skewed, without signal: MSE 1.11 times uniform's
    at n = 10, benchmarks/stopping.md before the change). The anytime interval's term (KAPPA) stays: its
    width is set by each stratum's own grades, whether or not the strata differ."""
    pooled = 0.0 if design.kappa == FLOOR_KAPPA else design.kappa
    return np.where(differ, design.kappa, pooled)[..., None]


Reading = tuple[tuple[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, ...]]
"""One criterion's grades as the queue reads them: (moments, pooled), as `queue_stratum` takes them."""


def queue_stratum(
    design: Design,
    taken: np.ndarray,
    moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    pooled: tuple[np.ndarray, ...],
    others: Sequence[Reading] = (),
) -> np.ndarray:
    """The queue's step: the stratum of the next grade (-1 when every stratum is taken), for one state or R at once.

    ``taken``: items graded or reserved per stratum, (H,) or (R, H); ``moments``: (count, sum, sum of squares)
    of the grades per stratum; ``pooled``: the pooled sums of `core.stats.spreads.pooled_sums`. The stratum is
    `next_stratum`'s with the spreads of `queue_spreads`, and a floor of one grade per stratum and the small-n
    term of `queue_kappa` until the strata differ (core.stats.collapse: the pooled variance needs no spread per
    stratum, and a floor of design.floor in every stratum of unequal sizes is no proportional allocation: MSE
    1.12 times uniform's at n = 10 without signal).

    ``others``: the other criteria's (moments, pooled) when the queue allocates for every criterion of a
    rubric. Each criterion then has its own spreads (`queue_spreads` on its own grades, common where its own
    strata do not differ), and the queue allocates by their compromise
    (core.stats.allocation.compromise_spreads). The strata differ, for the floor and the small-n term, when
    any criterion's grades say so: each criterion's estimate reads its own strata separately once its own
    grades differ (core.stats.collapse), and then needs design.floor grades and the all-equal floor's term in
    every stratum, whatever the other criteria show.
    """
    readings = [(moments, pooled), *others]
    differs = [queue_differ(design, m) for m, _ in readings]
    spreads = np.stack([queue_spreads(design, m, p, d) for (m, p), d in zip(readings, differs)], axis=-2)
    differ = functools.reduce(np.logical_or, differs)
    floor, kappa = queue_floor(design, differ), queue_kappa(design, differ)
    return next_stratum(design.weights, compromise_spreads(design.weights, spreads), taken, design.sizes, floor, kappa)


def queue_differ(design: Design, moments: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Whether the grades so far show that the strata differ, (...) bool: in their means
    (core.stats.collapse.strata_differ), or, for a design whose grades are not 0/1 by nature (its
    ``spread_share`` is set: a difference between two targets, whose strata of agreeing answers have mean 0 and
    little spread), in their spreads (core.stats.collapse.spreads_differ). A 0/1 grade's spread is a function
    of its mean, so the means' test is the test there."""
    differ = strata_differ(*moments)
    return differ | spreads_differ(*moments) if design.spread_share is not None else differ


def queue_floor(design: Design, differ: np.ndarray) -> np.ndarray:
    """The grades each stratum gets before Neyman's shares apply, (1,) or (R, 1): ``design.floor`` where the
    strata ``differ``, 1 elsewhere, a floor that fits the budget while the strata are read as one."""
    return np.where(differ, design.floor, 1)[..., None]


@functools.lru_cache(maxsize=16)
def stratum_orders(design: Design, seed: int) -> tuple[np.ndarray, ...]:
    """`item_order(N, seed)` split by stratum: for each h, the positions of stratum h in that order.

    Computed once per design and seed (O(N)); a draw then reads only the head of one stratum's order.
    """
    order = item_order(design.N, seed)
    strata = design.stratum[order]
    return tuple(order[strata == h] for h in range(design.H))


def handed_out_order(design: Design, seed: int) -> np.ndarray:
    """Every position in an order whose every prefix is a stratified random sample in proportion to the strata,
    for a tool that hands items out itself, in the order given (Label Studio's tasks): no grade steers it, so
    its allocation is fixed in advance, as the stratified estimator needs. The pool's own order, grouped by
    topic, made the first tasks graded a sample of a few topics: 60 of them gave 0.199 with an interval of
    0.086-0.329 on a pool of mean 0.382 (evaluation engineer's review).

    First one item of every stratum (largest first), then Webster's (Sainte-Lague) divisor method: the k-th
    item of stratum h (k = 1, 2, ...) comes at (k - 1/2) / N_h, so every prefix of n items holds about n W_h
    from each stratum (Webster's rule keeps within one of it; the first round, within two: Balinski and Young,
    Fair Representation, 1982). Within a stratum the items come in the seed's order, as the queue draws them
    (`stratum_orders`)."""
    orders = stratum_orders(design, seed)
    ranks = [np.arange(order.size) for order in orders]
    keys = np.concatenate([np.where(r == 0, -float(r.size), (r + 0.5) / r.size) for r in ranks])
    return np.concatenate(orders)[np.argsort(keys, kind="stable")]


def next_item(design: Design, state: QueueState, seed: int) -> int | None:
    """Position of the next item to grade, or None when every item is graded or reserved.

    The stratum comes from `next_stratum` with n_h = graded + reserved items of
    stratum h and the adaptive spreads of the graded ones; the item is the first
    position of `item_order(N, seed)` in that stratum that is neither graded nor
    reserved, preferring items nobody skipped. With ``state.criteria``, the stratum allocates for every
    criterion together (`queue_stratum`'s ``others``).

    Work per draw grows with the grades, never with N: the first free item
    lies among the first n_h + (skipped) + 1 of the stratum's order
    (`stratum_orders`), since at most n_h of them are taken.
    """
    return Draws(design, state, seed).next(state.reserved)


class Draws:
    """`next_item` on one state's grades and skips, for any reserved set: what the grades give the queue (their
    positions and counts per stratum, each criterion's moments and pooled sums) is read once. A batch of claims
    on one read of the grades (core.services.reservations) then draws each item in the time of its reserved set
    and one stratum's head, where `next_item` alone reads every grade again (2.3 ms a draw at 6,000 grades).
    InputError for a position outside the pool: the grades', the skips' and the other criteria's here, the
    reserved ones' at each draw."""

    def __init__(self, design: Design, state: QueueState, seed: int) -> None:
        positions, grades = _arrays(state.graded)
        self._skipped = np.fromiter(state.skipped, dtype=np.int64, count=len(state.skipped))
        other_grades = [_arrays(grades_k) for grades_k in state.criteria]
        _check_inside(design.N, positions, self._skipped, *(p for p, _ in other_grades))
        self._design, self._seed, self._graded = design, seed, positions
        self._graded_counts = np.bincount(design.stratum[positions], minlength=design.H)
        self._reading = _reading(design, positions, grades)
        self._others = [_reading(design, *arrays) for arrays in other_grades]

    def next(self, reserved: frozenset[int]) -> int | None:
        """The next item with ``reserved`` taken too (`next_item` of the state with that reserved set)."""
        design = self._design
        held = np.fromiter(reserved, dtype=np.int64, count=len(reserved))
        _check_inside(design.N, held)
        held = np.unique(held[~np.isin(held, self._graded)])
        counts = self._graded_counts + np.bincount(design.stratum[held], minlength=design.H)
        h = int(queue_stratum(design, counts, *self._reading, self._others))
        if h < 0:
            return None
        head = stratum_orders(design, self._seed)[h][: counts[h] + self._skipped.size + 1]
        free = head[~(np.isin(head, self._graded) | np.isin(head, held))]
        fresh = free[~np.isin(free, self._skipped)]
        return int(fresh[0] if fresh.size else free[0])


def _check_inside(n_items: int, *groups: np.ndarray) -> None:
    """InputError naming the first position of ``groups`` outside the pool (`_first_outside`)."""
    outside = _first_outside(n_items, *groups)
    if outside is not None:
        raise InputError(
            f"position {outside} is outside the pool of {n_items} items", fix="use the items' row numbers, 0 to N-1"
        )


def _first_outside(n_items: int, *groups: np.ndarray) -> int | None:
    """The first position of ``groups``, in their order, outside 0..n_items-1; None when all are inside. On the
    arrays ``Draws`` builds anyway: a check position by position cost about 1 ms a card at 5,000 grades."""
    for group in groups:
        bad = np.flatnonzero((group < 0) | (group >= n_items))
        if bad.size:
            return int(group[bad[0]])
    return None


def _arrays(grades: Mapping[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """A criterion's grades as (positions, grades) arrays."""
    return (
        np.fromiter(grades.keys(), dtype=np.int64, count=len(grades)),
        np.fromiter(grades.values(), dtype=float, count=len(grades)),
    )


def _reading(design: Design, positions: np.ndarray, grades: np.ndarray) -> Reading:
    """One criterion's (moments, pooled) for `queue_stratum`."""
    return stratum_moments(design, positions, grades), pooled_sums(design, positions, grades)
