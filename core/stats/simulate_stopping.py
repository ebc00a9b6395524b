"""The simulator's stopping mode: grade until the project's stopping rule says done, as a manager would.

For each replication (the same random orders as core.stats.simulate) and each
of ``activegrade`` (the project's design, queue and regime) and ``uniform``
(simple random sampling under the same regime), grading goes on until the
regime's rule stops it (core.stats.stopping); figures, each with its Monte
Carlo standard error where it has one:

- n0: the planned budget, or where none is given the n0 a project tunes its anytime interval for (the
  setup forecast's median: core.stats.forecast.tuned_n0);
- stop_n_ideal: the grades the method's strata would need with Neyman allocation at the pool's true stratum
  spreads, read with the same interval (`ideal_grades`): a reference, not a goal (None for ``anytime``);
- stop_n_median (stop_n_median_se: `median_se`), stop_n_mean: grades at the stop; stop_n_ratio: the median over
  ``uniform_fixed_n``, the grades a uniform sample read with the usual fixed-n
  interval needs for the same half-width (Cochran 1977, eq. 4.1-4.2, with the
  pool's true S^2); stop_n_ratio_wilson: the median over ``uniform_fixed_n_wilson``,
  uniform's size with Wilson's score interval, valid where the Wald size is not
  (a rare mean: core.stats.stopping.uniform_fixed_n_wilson);
- stop_coverage: the share of stops whose interval (the one shown then) holds
  the pool's mean; stop_bias: the mean error of the estimate at the stop;
- saving_shown_at_stop: the saving the dashboard shows at the stop against
  uniform's fixed-n size (core.stats.forecast.stop_saving, from the grades), and
  saving_shown_same_regime against uniform under the same regime, each a mean over the replications (at a rare
  mean a few samples whose grades show almost no spread read uniform's size as a few grades, and pull it far
  below the saving had); saving_realised: the saving had (`realised_saving`), against Wilson's size where every
  grade of the pool is equal (the usual interval's size is 0 there: a saving of -3,500%, a manager's review);
- forecast_n, forecast_low, forecast_high: the setup's forecast before any grade
  (core.stats.forecast), and forecast_hit (forecast_hit_se), the share of stops inside its range;
- projection_low, projection_high (means), projection_hit (projection_hit_se): the dashboard's
  forecast after max(20, 2H) grades, per replication, scored on the replications still grading then
  (projection_shown: their share): one stopped sooner has its queue closed at the stop
  (core.services.live.rule_says_done) and its dashboard shows the stop, not a projection;
- projection_late_at, projection_late_spread, projection_late_within: the same projection read again at
  LATE_SHARE of the median stop (at least max(20, 2H) grades), over the replications still grading then: the
  median of its high / low, and the share at most LATE_SPREAD;
- what it leaves out: under ``anytime`` the sequence is read at about 48 grade counts per factor of ten
  (about 5% apart; at every grade it costs a sequence per grade), so a stop there is the first such count at
  or after the grade at which the product stops, up to about 5% late, and its median's s.e. can read 0; and
  the forecasts do not model skips, so with ``skip_wrong`` or ``skip_right`` they miss the later stops that
  second graders' skips cause (the stops and coverages do count them);
- with a score the manager expects (the project's expected_score, core.settings), the setup forecast and
  the dashboard's projection are made from it, as the project's reading makes them, and
  forecast_surrogate_low, _high and _hit give the surrogate's own setup forecast beside it.
"""

from __future__ import annotations

import numpy as np

from core.stats.allocation import Design, stratum_sd
from core.stats.confseq import checkpoints, sequence_batch
from core.stats.estimate import estimate_batch
from core.stats.forecast import forecast_batch, known_spread_grades, measured_width_ratio, stop_saving, tuned_n0
from core.stats.savings import same_precision_grades
from core.stats.stopping import ANYTIME, FIXED, LOOKS, run_looks, uniform_fixed_n, uniform_fixed_n_wilson

LATE_SHARE = 0.3
"""The projection's range is read again at this share of the median stop (`stopping_figures`)."""

LATE_SPREAD = 1.8
"""The widest high / low the projection's range should have from LATE_SHARE of the stop on (issue 27's goal)."""

STOP_CAP = 4.0
"""Replays run to at most this many times uniform's fixed-n size (or the pool): a stop later than that counts
as a stop there (the figures say how often: stopped)."""


def _stops(design: Design, positions: np.ndarray, labels: np.ndarray, target: float, regime: str, n0: int, skipped):
    """(n, value, low, high, stopped) at each replication's stop under ``regime`` (``skipped``: the skips met,
    for ``looks``: core.stats.stopping.run_looks)."""
    y = labels[positions]
    if regime == LOOKS:
        b = run_looks(design, positions, y, target, skipped=skipped)
        n = b.n
        value = np.where(b.stopped, b.value, np.nan)
        low, high, stopped = b.low, b.high, b.stopped
        if not b.stopped.all():  # read where the replay ends: the last look's interval (held by skips), else 95%
            end = estimate_batch(design, positions, y)
            low_end, high_end = end.interval(0.95)
            looked = b.last >= 0
            low_end = np.where(looked, b.last_low, low_end)
            high_end = np.where(looked, b.last_high, high_end)
            value = np.where(b.stopped, value, end.value)
            low, high = np.where(b.stopped, low, low_end), np.where(b.stopped, high, high_end)
        return n, value, low, high, stopped
    if regime == FIXED:
        batch = estimate_batch(design, positions[:, :n0], y[:, :n0])
        low, high = batch.interval(0.95)
        return np.full(positions.shape[0], n0), batch.value, low, high, np.ones(positions.shape[0], dtype=bool)
    steps = checkpoints(positions.shape[1], per_decade=48)
    cs = sequence_batch(design, positions, y, n0, 0.05, steps=steps)
    low_run, high_run = cs.low_run, cs.high_run
    narrow = (high_run - low_run) / 2 <= target
    j = np.where(narrow.any(axis=1), narrow.argmax(axis=1), steps.size - 1)
    rows = np.arange(positions.shape[0])
    n = steps[j]
    value = np.array(
        [estimate_batch(design, positions[r : r + 1, : n[r]], y[r : r + 1, : n[r]]).value[0] for r in rows]
    )
    return n, value, low_run[rows, j], high_run[rows, j], narrow.any(axis=1)


def stopping_figures(
    designs: dict[str, Design],
    positions: dict[str, np.ndarray],
    labels: np.ndarray,
    target: float,
    regime: str,
    n0: int | None,
    expected: float | None = None,
    skipped: dict[str, np.ndarray] | None = None,
) -> dict:
    """The ``stopping`` object (module docstring) for the methods in ``designs`` (their replays in
    ``positions``, (R, cap) each; ``skipped``: per method, the skips each grade met, core.stats.simulate.
    skips_met, None without skips). ``n0``: the planned budget, None where the manager set none; each method's
    anytime interval is then tuned, and its fixed budget set, as a project's (core.stats.forecast.tuned_n0)."""
    N, mu = labels.size, float(labels.mean())  # noqa: N806
    s2 = float(labels.var(ddof=1))
    reference = uniform_fixed_n(s2, N, target)
    wilson = uniform_fixed_n_wilson(s2, mu, N, target)
    out: dict = {
        "target_half_width": target,
        "regime": regime,
        "uniform_fixed_n": reference,
        "uniform_fixed_n_wilson": wilson,
    }
    levels = scale_levels(labels)
    for method, design in designs.items():
        pos = positions[method]
        tuned = tuned_n0(design, target, regime, planned=n0, expected=expected, levels=levels)
        setup = forecast_batch(
            design, pos[:1, :0], labels[pos[:1, :0]], target, regime, n0=tuned, expected=expected, levels=levels
        )[0]
        met = None if skipped is None else skipped[method]
        n, value, low, high, stopped = _stops(design, pos, labels, target, regime, tuned, met)
        k = max(20, 2 * design.H)
        projection = _projection(design, pos, labels, k, target, regime, tuned, expected, levels)
        still = n > k  # still grading when the projection is shown
        inside = ((n >= projection[:, 0]) & (n <= projection[:, 2]))[still].astype(float)
        late_at = max(k, int(np.ceil(LATE_SHARE * np.median(n))))
        late = _projection(design, pos, labels, late_at, target, regime, tuned, expected, levels)
        late_spread = (late[:, 2] / np.maximum(late[:, 0], 1.0))[n > late_at]
        shown = _shown_savings(design, pos, labels, n, target, regime, (low, high), tuned)
        reps = n.size
        cover = ((low <= mu) & (mu <= high)).astype(float)
        out[method] = {
            "n0": tuned,
            "stop_n_ideal": ideal_grades(design, labels, target, regime),
            "stop_n_median": float(np.median(n)),
            "stop_n_median_se": median_se(n),
            "stop_n_mean": float(n.mean()),
            "stop_n_mean_se": float(n.std(ddof=1) / np.sqrt(reps)),
            "stop_n_ratio": float(np.median(n) / max(reference, 1)),
            "stop_n_ratio_wilson": float(np.median(n) / max(wilson, 1)),
            "stopped": float(stopped.mean()),
            "stop_coverage": float(cover.mean()),
            "stop_coverage_se": float(cover.std(ddof=1) / np.sqrt(reps)),
            "stop_bias": float(np.nanmean(value - mu)),
            "stop_bias_se": float(np.nanstd(value - mu, ddof=1) / np.sqrt(reps)),
            "saving_shown_at_stop": float(np.nanmean(shown[:, 1])),
            "saving_shown_same_regime": float(np.nanmean(shown[:, 0])),
            "saving_realised": realised_saving(n, value, mu, s2, N, reference if s2 > 0 else wilson, regime),
            "forecast_n": float(setup[1]),
            "forecast_low": float(setup[0]),
            "forecast_high": float(setup[2]),
            **_share("forecast_hit", (n >= setup[0]) & (n <= setup[2])),
            "projection_at": k,
            "projection_shown": float(still.mean()),
            "projection_low": float(projection[still, 0].mean()) if still.any() else float("nan"),
            "projection_high": float(projection[still, 2].mean()) if still.any() else float("nan"),
            "projection_hit": float(inside.mean()) if still.any() else float("nan"),
            "projection_hit_se": float(inside.std(ddof=1) / np.sqrt(inside.size)) if inside.size > 1 else float("nan"),
            "projection_late_at": late_at,
            "projection_late_spread": float(np.median(late_spread)) if late_spread.size else float("nan"),
            "projection_late_within": float((late_spread <= LATE_SPREAD).mean()) if late_spread.size else float("nan"),
        }
        if expected is not None:  # the surrogate's own forecast beside the one from the manager's score
            own = forecast_batch(design, pos[:1, :0], labels[pos[:1, :0]], target, regime, n0=tuned, levels=levels)[0]
            out[method] |= {
                "forecast_surrogate_low": float(own[0]),
                "forecast_surrogate_high": float(own[2]),
                "forecast_surrogate_hit": float(((n >= own[0]) & (n <= own[2])).mean()),
            }
    return out


def _share(name: str, inside: np.ndarray) -> dict[str, float]:
    """``name``: the share of replications ``inside``, and ``name``_se its Monte Carlo s.e., sqrt(p (1 - p) / R)."""
    share = float(np.mean(inside))
    return {name: share, f"{name}_se": float(np.sqrt(share * (1 - share) / max(inside.size, 1)))}


def realised_saving(
    n: np.ndarray, value: np.ndarray, mu: float, s2: float, size: int, reference: int, regime: str
) -> float:
    """The saving had: 1 - (median grades at the stop) / ``reference`` (uniform's fixed-n size for the target);
    for ``fixed``, whose budget is no target's, the saving at the same precision, 1 - n / m, m the grades of a
    uniform sample whose variance is the estimate's mean squared error over the replications
    (core.stats.savings.same_precision_grades at MSE / MSE_unif, MSE_unif = (1 - n/N) S^2 / n a uniform
    sample's of the budget, Cochran 1977, eq. 2.8), as the app shows it; NaN where no replication has an
    estimate (a budget below the strata)."""
    if regime != FIXED:
        return float(1 - np.median(n) / max(reference, 1))
    errors = (np.asarray(value, dtype=float) - mu) ** 2
    budget = float(np.median(n))
    uniform = (1 - budget / size) * s2 / max(budget, 1.0)
    if not np.isfinite(errors).any() or uniform <= 0:
        return float("nan")
    return float(1 - budget / same_precision_grades(budget, np.nanmean(errors) / uniform, size))


def ideal_grades(design: Design, labels: np.ndarray, target: float, regime: str) -> int | None:
    """The grades the design's strata need under ``regime`` with Neyman allocation at the pool's true stratum
    spreads, read with the interval the stop reads at those spreads (core.stats.forecast.known_spread_grades):
    the design's aim, which it knows each stratum's spread before any grade to reach, and reads without the
    floors that a few equal grades get (core.stats.intervals). A reference, not a bound: a stop reads the
    grades' own spread, which comes out low in some samples, and then comes sooner. None for ``anytime``,
    whose stop reads the confidence sequence, not a fixed-n interval at known spreads."""
    if regime == ANYTIME:
        return None
    sds = stratum_sd(design, labels, ddof=0)  # each stratum's spread over its items, a finite population's
    return int(known_spread_grades(design.weights, sds, float(labels.mean()), design.N, target, regime))


def _projection(
    design: Design,
    positions: np.ndarray,
    labels: np.ndarray,
    at: int,
    target: float,
    regime: str,
    n0: int,
    expected: float | None,
    levels: tuple[float, ...] | None,
) -> np.ndarray:
    """The dashboard's forecast (core.stats.forecast.forecast_batch) after the first ``at`` grades of each
    replication, with the manager's ``expected`` score as the project's reading passes it."""
    first = positions[:, :at]
    return forecast_batch(design, first, labels[first], target, regime, n0=n0, expected=expected, levels=levels)


SCALE_VALUES = 9
"""The most grade values a project's scale has (core.scales.MAX_LABELS: one digit key each)."""


def scale_levels(labels: np.ndarray) -> tuple[float, ...] | None:
    """The grading scale a pool's labels were given on, as the forecast takes it (core.stats.forecast.
    forecast_batch's ``levels``): their distinct values where there are at most SCALE_VALUES, else None (a
    continuous score)."""
    values = np.unique(np.asarray(labels, dtype=float))
    return tuple(float(v) for v in values) if values.size <= SCALE_VALUES else None


def median_se(values: np.ndarray) -> float:
    """Monte Carlo s.e. of a median of R draws: half the distance between the order statistics of ranks
    R/2 -+ sqrt(R)/2, the distribution-free interval for the median at +-1 s.e. (the ranks of the median are
    Binomial(R, 1/2); e.g. Conover, Practical Nonparametric Statistics, 1999, section 3.2)."""
    x = np.sort(np.asarray(values, dtype=float))
    half = np.sqrt(x.size) / 2
    low = int(np.clip(np.floor(x.size / 2 - half), 0, x.size - 1))
    high = int(np.clip(np.ceil(x.size / 2 + half), 0, x.size - 1))
    return float((x[high] - x[low]) / 2)


def _shown_savings(
    design: Design,
    positions: np.ndarray,
    labels: np.ndarray,
    n: np.ndarray,
    target: float,
    regime: str,
    shown: tuple[np.ndarray, np.ndarray],
    n0: int,
) -> np.ndarray:
    """(R, 2): the savings the dashboard shows at each stop, against uniform under the regime and fixed-n; with a
    budget fixed in advance, against a uniform sample of the same precision for both (core.services.reading,
    core.stats.savings.same_precision_grades); under ``anytime``, uniform's at the width ratio the intervals at
    the stop show (``shown``, the interval read there, low and high; core.stats.forecast.measured_width_ratio),
    as the dashboard reads it."""
    rows = []
    for r in range(positions.shape[0]):
        p = positions[r : r + 1, : n[r]]
        batch = estimate_batch(design, p, labels[p])
        if regime == FIXED:
            share = 1 - n[r] / same_precision_grades(float(n[r]), float(batch.saving.deff[0]), design.N)
            rows.append((share, share))
            continue
        ratio = None
        if regime == ANYTIME:
            fixed = tuple(float(end[0]) for end in batch.interval(0.95))
            ratio = measured_width_ratio(fixed, (float(shown[0][r]), float(shown[1][r])), int(n[r]), n0)
        live = batch.saving
        saving = stop_saving(
            int(n[r]), float(live.s2[0]), float(batch.value[0]), design.N, target, regime, ratio, bool(live.apart[0])
        )
        rows.append((saving.same_regime, saving.fixed_n))
    return np.array(rows)


def replay_cap(labels: np.ndarray, target: float) -> int:
    """Grades a stopping replay runs to: STOP_CAP times uniform's fixed-n size, at most the pool, at least 50."""
    n = uniform_fixed_n(float(labels.var(ddof=1)), labels.size, target)
    return int(min(labels.size, max(50, STOP_CAP * n)))
