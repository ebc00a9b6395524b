"""The stopping regimes (core.stats.stopping) and the one forecast (core.stats.forecast)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from core.errors import InputError
from core.stats.allocation import design_from_items, make_design, stratum_moments
from core.stats.confseq import anytime_interval
from core.stats.design import planned_budget, prepared_design
from core.stats.estimate import estimate_batch, from_moments
from core.stats.forecast import (
    EXPECTED_PRIOR_GRADES,
    Forecast,
    _excess_kurtosis,
    _passage,
    _strata_prior,
    exact_size,
    expected_saving,
    first_stop,
    forecast,
    forecast_batch,
    grades_excess_kurtosis,
    known_spread_grades,
    lattice_floor,
    stop_saving,
    tuned_n0,
    uniform_grades,
)
from core.stats.intervals import beta_interval, share_variance
from core.stats.looks import look_plan
from core.stats.simulate import labels_of, replay_queue, replication_orders, surrogate_items, synthetic_items
from core.stats.simulate_stopping import ideal_grades, median_se, scale_levels
from core.stats.stopping import (
    FLOOR_KAPPA,
    allocation_kappa,
    check_regime,
    held_stop,
    run_looks,
    uniform_fixed_n,
    uniform_fixed_n_wilson,
)


@pytest.fixture(scope="module")
def pool():
    items = synthetic_items(2000, signal=1.0, seed=3)
    labels = labels_of(items)
    design = design_from_items(items, stratify_by=None, kappa=FLOOR_KAPPA)
    orders = replication_orders(labels.size, 0, 200)
    positions = replay_queue(design, labels, orders, 900)
    return design, labels, positions


def test_the_looks_stop_cheaper_than_uniform_and_cover(pool):
    design, labels, positions = pool
    target = 0.05
    stop = run_looks(design, positions, labels[positions], target)
    assert stop.stopped.all()
    assert ((stop.high - stop.low) / 2 <= target + 1e-12).all()
    mu = labels.mean()
    covered = ((stop.low <= mu) & (mu <= stop.high)).mean()
    assert covered >= 0.93  # 200 replications: 2 s.e. below 0.95 is about 0.92
    assert np.median(stop.n) < 0.8 * uniform_fixed_n(labels.var(ddof=1), labels.size, target)
    assert (stop.taken[:, -1] == stop.n).all() | (stop.look < len(look_plan().fractions) - 1).any()


def test_a_look_is_taken_once_and_in_order(pool):
    design, labels, positions = pool
    stop = run_looks(design, positions, labels[positions], 0.05)
    first, last = stop.taken[:, 0], stop.taken[:, -1]
    assert ((first == 0) | (first < last)).all()  # the half-information look comes first, or was passed over


def test_no_look_before_every_stratum_has_its_first_grades(pool):
    design, labels, positions = pool
    stop = run_looks(design, positions[:, :8], labels[positions[:, :8]], 0.5)
    assert not stop.stopped.any() and (stop.taken == 0).all()  # MIN_LOOK_GRADES


def test_an_unreachable_target_does_not_stop(pool):
    design, labels, positions = pool
    stop = run_looks(design, positions[:, :100], labels[positions[:, :100]], 0.005)
    assert not stop.stopped.any() and (stop.n == 100).all()


def test_regimes_are_checked():
    assert check_regime("looks") == "looks" and allocation_kappa("looks") == FLOOR_KAPPA
    with pytest.raises(InputError, match="stopping regime"):
        check_regime("whenever")
    with pytest.raises(InputError):
        run_looks(make_design(np.zeros(10, dtype=int), np.full(10, 0.5)), np.zeros((1, 0)), np.zeros((1, 0)), 0.0)


def test_the_forecast_narrows_with_grades_and_holds_the_stop(pool):
    design, labels, positions = pool
    stop = run_looks(design, positions, labels[positions], 0.05)
    before = forecast(design, [], [], 0.05, "looks")
    assert before.low <= before.n <= before.high and before.graded == 0
    k = int(np.median(stop.n) * 0.5)
    later = forecast_batch(design, positions[:, :k], labels[positions[:, :k]], 0.05, "looks")
    assert np.median(later[:, 2] / later[:, 0]) < before.spread
    assert ((stop.n >= later[:, 0]) & (stop.n <= later[:, 2])).mean() >= 0.6


def test_the_exact_size_is_the_least_at_which_clopper_pearson_is_narrow_enough():
    level = 0.95
    means = np.array([0.005, 0.02, 0.1, 0.5])
    sizes = exact_size(means, 0.05, level)
    low, high = beta_interval(means, sizes * 1.001, level)
    assert ((high - low) / 2 <= 0.05).all()
    low, high = beta_interval(means, sizes * 0.98, level)
    assert ((high - low) / 2 > 0.05).all()
    normal = 1.96**2 * means * (1 - means) / 0.05**2
    assert sizes[1] > 1.3 * normal[1]  # few expected successes: the exact interval is the wider
    assert sizes[3] == pytest.approx(normal[3], rel=0.06)  # many: about the normal one, plus its continuity term


def test_an_anytime_projects_own_width_ratio_sets_its_forecast(pool):
    """The anytime regime's forecast reads each replication's own fixed-n over anytime width ratio r: the same
    grades with a narrower ratio (a wider sequence to bring under the target) need more grades."""
    design, labels, positions = pool
    same = positions[[0, 0], :60]
    both = forecast_batch(design, same, labels[same], 0.05, "anytime", width_ratio=np.array([0.55, 0.75]))
    assert both[0, 1] > 1.5 * both[1, 1]  # about (0.75 / 0.55)^2 = 1.9 times


def test_the_projection_holds_its_share_of_stops_late_in_grading(pool):
    """At 60% of the median stop, read with the grades given as part of the stop's estimate, the 80% range
    holds about 80% of the stops still to come: draws of the means as if the stop read them afresh held all
    of them (0.99, a range too wide to plan with), the noise of the grades still to come alone about half."""
    design, labels, positions = pool
    stop = run_looks(design, positions, labels[positions], 0.05)
    k = int(0.6 * np.median(stop.n))
    late = forecast_batch(design, positions[:, :k], labels[positions[:, :k]], 0.05, "looks")
    still = stop.n > k
    held = ((stop.n >= late[:, 0]) & (stop.n <= late[:, 2]))[still].mean()
    assert 0.7 <= held <= 0.95  # 200 replications: 2 s.e. about 0.06


def test_the_setup_forecast_draws_pools_whose_mean_is_the_score_the_manager_expects():
    """The strata's shape was added to the level's logit, which moved the draws' pool mean away from it: for an
    expected 0.1, a median of 0.165, and uniform's size beside the forecast 52% too high, a saving planned that
    became a loss (a manager's review). Each draw's strata now average to its level."""
    rng = np.random.default_rng(3)
    agreement = rng.choice([0.0, 0.2, 0.4], 2000)
    labels = (rng.random(2000) < 0.02 + 0.3 * agreement).astype(float)
    design = prepared_design(surrogate_items(labels, agreement, rng))
    none = np.zeros((1, design.H))  # no grade in any stratum
    centres, _, _ = _strata_prior(design, none, none, 0.1, np.random.default_rng(0))
    level = (EXPECTED_PRIOR_GRADES * 0.1 + 0.5) / (EXPECTED_PRIOR_GRADES + 1)  # the expected score, smoothed
    assert np.median(centres @ design.weights) == pytest.approx(level, rel=0.02)
    planned = forecast(design, [], [], 0.05, "looks", expected=0.1)
    assert planned.uniform == pytest.approx(uniform_fixed_n(level * (1 - level), design.N, 0.05), rel=0.1)


def test_a_fixed_budget_forecasts_its_budget(pool):
    assert forecast(pool[0], [], [], 0.05, "fixed", n0=123).n == 123


def test_the_anytime_interval_is_tuned_where_the_setup_forecast_says_grading_stops(pool):
    """Unset, n0 is the setup forecast's median (no grade read, so fixed before the first); a planned budget,
    or a budget fixed in advance, is n0 itself. Tuned there, the sequence is narrower at the forecast stop
    than tuned at the default of 10% of the pool."""
    design, labels, positions = pool
    tuned = tuned_n0(design, 0.05, "anytime")
    assert tuned == forecast(design, [], [], 0.05, "anytime").n > planned_budget(None, design.N)
    assert tuned_n0(design, 0.05, "anytime", planned=80) == 80
    assert tuned_n0(design, 0.05, "fixed") == planned_budget(None, design.N)
    first = positions[0, :tuned]
    at = {n0: anytime_interval(design, first, labels[first], n0).half_width for n0 in (tuned, design.N // 10)}
    assert at[tuned] < at[design.N // 10]


def test_0_1_grades_read_as_one_sample_stop_at_the_first_passage_of_their_count():
    """Read as one sample, 0/1 grades stop at the first n at which the mean their count shows allows it: with no
    success to come, at the size whose Clopper-Pearson interval of zero successes is narrow enough (about 36
    grades for +-0.05); at a mean of 0.02 there most often too, and later by some 20 grades with each early
    success; at a mean of 0.5, within a few grades of the size that mean needs."""
    z, rng = stats.norm.ppf(0.975), np.random.default_rng(0)
    k, none = np.array([[20.0]]), np.array([[0.0]])

    def needs(m: float) -> float:  # read with n - 1 and the finite-population correction; all 0: n* = n
        star = float(exact_size(np.array(m), 0.05, 0.95))
        return np.ceil(star if m < 1e-3 else (star + 1) / (1 + star / 2000))

    assert (_passage(2000, np.zeros((1, 50)), k, none, 0.05, z, rng) == needs(1e-4)).all()
    rare = np.percentile(_passage(2000, np.full((1, 4000), 0.02), k, none, 0.05, z, rng), [50, 75, 90])
    assert rare[0] == needs(1e-4) and rare[1] >= needs(1e-4) + 10 and rare[2] >= needs(1e-4) + 25
    even = _passage(2000, np.full((1, 2000), 0.5), k, np.array([[10.0]]), 0.05, z, rng)
    assert np.abs(np.percentile(even, [10, 90]) - needs(0.5)).max() <= 3


def test_uniform_grades_match_the_textbook_size_and_the_saving_compares_with_both():
    assert uniform_grades(0.25, 0.5, 4000, 0.05, "fixed") == uniform_fixed_n(0.25, 4000, 0.05) == 351
    looks = float(uniform_grades(0.25, 0.5, 4000, 0.05, "looks"))
    assert 351 < looks < 1.1 * 351  # the last look's level and the exact interval cost a few grades
    saving = stop_saving(200, 0.25, 0.5, 4000, 0.05, "looks")
    assert saving.fixed_n == pytest.approx(1 - 200 / 351) and saving.same_regime > saving.fixed_n
    assert np.isnan(stop_saving(200, float("nan"), 0.5, 4000, 0.05, "looks").fixed_n)


def test_the_expected_saving_where_the_strata_are_read_as_one_now_takes_uniforms_size_from_the_forecast():
    """Before the stop, with the strata read as one so far, the same rule's uniform size was the forecast stop
    itself: +0% under the same rule beside +28% against fixed-n, uniform's same-rule size (221) below its fixed-n
    one (306) (a manager's review, 11 grades of mean 0.58 in a pool whose strata came apart later). The forecast's
    own uniform size (its draws say whether the stop reads the strata apart) is read instead."""
    expected = stop_saving(221, 0.2436, 0.58, 1500, 0.05, "looks", apart=False, planned_same=318)
    assert expected.uniform_same == 318 > expected.uniform_fixed == uniform_fixed_n(0.2436, 1500, 0.05)
    assert expected.same_regime == pytest.approx(1 - 221 / 318) and expected.same_regime > expected.fixed_n > 0
    at_stop = stop_saving(221, 0.2436, 0.58, 1500, 0.05, "looks", apart=False)  # the stop read them as one
    assert at_stop.same_regime == 0 and at_stop.uniform_same == 221


def test_the_expected_savings_range_counts_the_uniform_sizes_own_uncertainty():
    """Uniform's size is in proportion to S^2, read at the stop from the grades given and those to come: its
    relative variance (kappa - 1)(1/k - 1/n) widens the range the stop's range gives alone (on finer scales that
    range held the saving shown at the stop in 0.40-0.61 of runs: benchmarks/expected_saving.md); none once the
    grades given are all the stop's, and kappa - 1 is the Bernoulli formula for 0/1 grades."""
    at = Forecast(n=120, low=100, high=150, regime="looks", graded=30)
    plain = expected_saving(at, 0.09, 0.1, 2000, 0.05, "looks")
    noisy = expected_saving(at, 0.09, 0.1, 2000, 0.05, "looks", excess=6.0)
    assert plain.fixed_n_low == pytest.approx(1 - 150 / plain.uniform_fixed, abs=1e-9)  # the stop's range alone
    assert noisy.fixed_n_low < plain.fixed_n_low < plain.fixed_n < plain.fixed_n_high < noisy.fixed_n_high
    z = stats.norm.ppf(0.9)
    sigma = np.sqrt((np.log(150 / 120) / z) ** 2 + np.log1p(6.0 * (1 / 30 - 1 / 120)))
    assert noisy.fixed_n_low == pytest.approx(1 - 120 * np.exp(z * sigma) / plain.uniform_fixed)
    done = expected_saving(replace(at, graded=120), 0.09, 0.1, 2000, 0.05, "looks", excess=6.0)
    assert done.fixed_n_high == pytest.approx(plain.fixed_n_high)
    items = synthetic_items(600, signal=1.0, seed=3)
    design = prepared_design(items)
    zero_one = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # 0/1 grades: the Bernoulli formula
    m = (1 + 0.5) / (10 + 1)
    assert grades_excess_kurtosis(design, range(10), zero_one) == pytest.approx((1 - 2 * m) ** 2 / (m * (1 - m)))


def test_a_pool_of_equal_grades_is_compared_with_wilsons_uniform_size():
    """Every grade 1 (or 0): the usual interval has no width there, and the floor's S^2 said uniform needed 20
    grades, a saving of -80% for a stop at 36 (a manager's review); Wilson's size, 32 of a pool of 400 at +-0.05,
    is what a uniform sample of equal grades needs."""
    for mean in (0.0, 1.0):
        saving = stop_saving(36, 0.0005, mean, 400, 0.05, "looks", apart=False)
        assert saving.uniform_fixed == uniform_fixed_n_wilson(0.0, mean, 400, 0.05) == 32
        assert saving.fixed_n == pytest.approx(1 - 36 / 32)


def test_ideal_grades_are_neyman_at_the_true_spreads_and_one_stratum_is_uniforms():
    """Cochran 1977, eq. 5.25: two strata of W = 1/2, S = (0.5, 0): n = A / (h^2 / z^2 + B / N), A = 1/16, B = 1/8."""
    z = stats.norm.ppf(0.975)
    textbook = np.ceil((1 / 16) / (0.05**2 / z**2 + (1 / 8) / 4000))
    assert known_spread_grades(np.array([0.5, 0.5]), np.array([0.5, 0.0]), 0.25, 4000, 0.05, "fixed") == textbook
    assert textbook < uniform_grades(0.25 * 0.75, 0.25, 4000, 0.05, "fixed")  # the spread-free stratum needs none
    items = synthetic_items(600, signal=1.0, seed=3)
    labels = labels_of(items)
    design = design_from_items(items)
    one = make_design(np.zeros(labels.size, dtype=np.int64), np.full(labels.size, 0.5))
    for regime in ("looks", "fixed"):
        assert ideal_grades(one, labels, 0.05, regime) == uniform_grades(labels.var(), labels.mean(), 600, 0.05, regime)
        assert ideal_grades(design, labels, 0.05, regime) < ideal_grades(one, labels, 0.05, regime)
    assert ideal_grades(design, labels, 0.05, "anytime") is None  # its stop reads no fixed-n interval


def test_uniform_wilson_size_is_the_issues_table_and_exceeds_wald_at_rare_means():
    """Issue 27's table (N = 4,000): Wald / Wilson 30 / 51 at mean 0.02 and h = 0.05, 843 / 841 at 0.5 and 0.03."""
    assert uniform_fixed_n_wilson(0.02 * 0.98, 0.02, 4000, 0.05) == 51
    assert uniform_fixed_n(0.02 * 0.98, 4000, 0.05) == 30
    assert uniform_fixed_n_wilson(0.25, 0.5, 4000, 0.03) == 841
    assert uniform_fixed_n_wilson(0.0, 0.0, 4000, 0.05) == 35 > uniform_fixed_n(0.0, 4000, 0.05)  # Wilson's at 0
    skewed = uniform_fixed_n_wilson(0.005, 0.02, 4000, 0.05)  # a finer scale: Wilson on the effective size
    assert uniform_fixed_n(0.005, 4000, 0.05) < skewed < uniform_fixed_n_wilson(0.0196, 0.02, 4000, 0.05)


def test_a_held_stop_counts_a_skip_from_the_grade_after_it_until_its_item_is_graded(pool):
    """held_stop: None when no skip stands at the start; a skip made after b grades stands from grade b + 1
    until its item's own grade; with a target nothing reaches, the stop is the last grade."""
    design, labels, positions = pool
    order, grades = positions[0, :60], labels[positions[0, :60]]
    late = int(order[43])  # graded as the 44th
    assert held_stop(design, order, grades, 40, 0.95, 0.5, {late: 40}) is None  # skipped at the 41st: not yet
    wide = held_stop(design, order, grades, 40, 0.95, 0.5, {late: 10})
    assert (wide.n, wide.standing) == (40, 1)  # within a wide target at once, the skip standing
    never = held_stop(design, order, grades, 40, 0.95, 1e-4, {late: 10})
    assert (never.n, never.standing) == (60, 0)  # graded by then
    assert never.value == pytest.approx(estimate_batch(design, order[None], grades[None]).value[0])


def test_the_median_se_is_about_that_of_a_normal_median():
    draws = np.random.default_rng(0).normal(size=4000)
    assert median_se(draws) == pytest.approx(np.sqrt(np.pi / 2) / np.sqrt(4000), rel=0.15)


def test_before_any_grade_of_a_finer_scale_the_forecast_does_not_assume_bernoulli_variance(pool):
    design = pool[0]
    binary = forecast(design, [], [], 0.05, "looks")
    finer = forecast(design, [], [], 0.05, "looks", levels=None)
    assert finer.low < 0.5 * binary.low and finer.high <= binary.high and finer.spread > binary.spread
    design, labels, positions = pool
    after = [
        forecast(design, positions[0, :40], labels[positions[0, :40]], 0.05, "looks", levels=scale)
        for scale in (None, (0.0, 1.0))
    ]
    assert after[0] == after[1]  # once the grades show the spread, they decide


def test_the_lattice_floor_is_the_least_variance_on_the_scales_values():
    three = (0.0, 0.5, 1.0)
    means = np.array([0.0, 0.2, 0.5, 0.8, 1.0])
    assert lattice_floor(means, three) == pytest.approx([0.0, 0.2 * 0.3, 0.0, 0.3 * 0.2, 0.0])
    assert lattice_floor(means, (0.0, 1.0)) == pytest.approx(means * (1 - means))  # binary: Bernoulli's own
    assert lattice_floor(means, None) == pytest.approx(np.zeros(5))
    # the two-point distribution on the values either side attains it, and nothing on the scale goes below
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.dirichlet(np.ones(3))
        mean = p @ np.array(three)
        assert p @ (np.array(three) - mean) ** 2 >= lattice_floor(np.array([mean]), three)[0] - 1e-12


def test_a_scale_of_few_values_keeps_the_setup_range_off_a_tiny_spread(pool):
    """Before any grade, rho of a finer scale is unknown; on a scale of 0, 1/2 and 1 a stratum of mean 0.2
    cannot vary less than 0.2 * 0.3, so its range's low end stays far above a continuous score's."""
    design = pool[0]
    continuous = forecast(design, [], [], 0.05, "looks", levels=None)
    three = forecast(design, [], [], 0.05, "looks", levels=(0.0, 0.5, 1.0))
    binary = forecast(design, [], [], 0.05, "looks")
    assert continuous.low < three.low <= binary.low and three.spread < continuous.spread
    assert scale_levels(np.array([0.0, 1.0, 0.5, 1.0])) == (0.0, 0.5, 1.0)
    assert scale_levels(np.linspace(0, 1, 50)) is None


def test_a_finer_scales_projection_widens_with_the_kurtosis_of_its_grades(pool):
    """Two sets of 40 grades on a finer scale with the same stratum means and variances, one with light tails
    (each stratum's grades at mean +- d) and one with heavy ones (mostly at the mean, a few far out): the
    variance the stop will read is the less certain the heavier the tails, so its range is wider; the
    median about the same."""
    design, _, positions = pool
    taken = positions[0, :40]
    strata = design.stratum[taken]
    sign = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    light = 0.5 + 0.1 * sign
    heavy = np.where(np.arange(40) % 10 < 2, 0.5 + 0.3162 * sign, 0.5)  # the same variance, 0.01
    ranges = {}
    for name, grades in (("light", light), ("heavy", heavy)):
        assert np.bincount(strata, minlength=design.H).min() >= 2
        ranges[name] = forecast(design, taken, grades, 0.05, "looks", levels=None)
    assert ranges["heavy"].spread > 1.2 * ranges["light"].spread
    assert ranges["heavy"].n == pytest.approx(ranges["light"].n, rel=0.25)  # the strata's variances differ a little


def test_the_kurtosis_of_four_grades_a_stratum_is_read_without_the_small_sample_bias(pool):
    """Grades uniform on a 5-point scale (kappa = 1.7) in 4 grades a stratum: about their own strata's means
    the plain ratio m4 / s^4 reads kappa - 1 as about 0.26 on average; corrected for the means read from the
    same grades, 0.7."""
    design, _, _ = pool
    taken = np.concatenate([np.flatnonzero(design.stratum == h)[:4] for h in range(design.H)])
    positions = np.tile(taken, (4000, 1))
    grades = np.random.default_rng(0).choice([0.0, 0.25, 0.5, 0.75, 1.0], size=positions.shape)
    counts, sums, _ = stratum_moments(design, positions, grades)
    excess = _excess_kurtosis(design, positions, grades, counts, sums)
    assert np.mean(excess) == pytest.approx(0.7, abs=0.07)


def _projection_after_20_grades(mean: float, kind: str, replay: int) -> tuple[float, np.ndarray]:
    """A pool of our own making (N 2000, no signal) replayed 200 times to ``replay`` grades and stopped at ±0.05:
    the share of the stops still to come that the projection after 20 grades holds, and that projection."""
    from benchmarks.pools import make_pool

    items = make_pool(2000, mean, kind=kind, auroc=0.5, seed=7)
    labels = labels_of(items)
    design = design_from_items(items, kappa=FLOOR_KAPPA)
    positions = replay_queue(design, labels, replication_orders(labels.size, 0, 200), replay)
    stop = run_looks(design, positions, labels[positions], 0.05)
    first = positions[:, :20]
    projection = forecast_batch(design, first, labels[first], 0.05, "looks", levels=scale_levels(labels))
    still = stop.n > 20
    return float(((stop.n >= projection[:, 0]) & (stop.n <= projection[:, 2]))[still].mean()), projection


def test_a_finer_scales_projection_after_20_grades_holds_its_share_of_stops():
    """Likert grades of mean 0.5 without signal: after 20 grades the projection's 80% range holds about 80% of
    the stops. It held 0.56-0.64 (seeds 7-9) when the kurtosis of 4 grades a stratum was read without the
    small-sample correction and the drawn means moved the variance the grades had already shown."""
    held, _ = _projection_after_20_grades(0.5, "likert", 200)
    assert 0.68 <= held <= 0.92  # 200 replications: 2 s.e. about 0.06


def test_a_rare_skewed_means_projection_waits_for_the_floor_its_stop_reads():
    """Skewed grades of mean 0.02: the stop reads the share floor (core.stats.intervals.share_variance), which
    the grades' own small spread hides. Without it the projection after 20 grades said the stop was now and
    held 0.08 of the stops; with it about half, its range around them. With the mean of the grades to come
    fixed at the draw's pool mean, and the floor's stop read after three swinging rounds, 0.375 of those
    ranges were a single grade count (0.19 now) and they held 0.59 of the stops (0.65 now)."""
    held, projection = _projection_after_20_grades(0.02, "skewed", 150)
    assert held >= 0.62
    assert np.median(projection[:, 2]) > 25  # not "now": 20 grades
    assert np.mean(projection[:, 0] == projection[:, 2]) <= 0.25
    assert (projection[:, 0] >= 21).all()  # the 20 grades given have not stopped it


def test_first_stop_is_the_least_grade_count_whose_floor_allows_the_stop():
    """A floor read at n grades that asks for 47 below 28 grades and 13 from 28 on: the stop comes at 28.
    Iterating n <- needed(n) from 20 swings 47, 13, 47 and never says 28."""
    needed = lambda n: np.where(n < 28, 47.0, 13.0)  # noqa: E731
    assert first_stop(needed, np.array([20.0, 30.0, 50.0]), 5000).tolist() == [28.0, 13.0, 13.0]
    assert first_stop(lambda n: np.full_like(n, 5000.0), np.array([1.0]), 5000).tolist() == [5000.0]


def test_skewed_grades_are_not_stopped_by_a_lucky_small_variance():
    """Skewed grades (mean 0.1): a stop chosen by the sample variance stopped when the mean was low (coverage
    at the stop 0.86-0.89 with 300 replications); the pooled variance share holds it at the level."""
    from benchmarks.pools import make_pool

    items = make_pool(2000, 0.1, kind="skewed", auroc=0.5, seed=7)
    labels = labels_of(items)
    design = design_from_items(items, stratify_by=None, kappa=FLOOR_KAPPA)
    positions = replay_queue(design, labels, replication_orders(labels.size, 0, 300), 400)
    stop = run_looks(design, positions, labels[positions], 0.03)
    mu = labels.mean()
    assert stop.stopped.all()
    assert ((stop.low <= mu) & (mu <= stop.high)).mean() >= 0.925  # 2.5 s.e. below 0.95


def test_a_skewed_sample_that_met_no_high_grade_is_not_read_as_precise():
    """Ten grades of a skewed pool that all came out small: V_hat alone reads them as tight, and the
    Korn-Graubard interval misses a mean of 0.02; the bounded variance keeps it inside. 0/1 grades are read
    with V_hat as before."""
    design = make_design(np.repeat([0, 1], 1000), np.full(2000, 0.5))
    positions = np.arange(0, 2000, 200)[None, :]
    small = np.array([[0.001, 0.002, 0.0, 0.003, 0.001, 0.0005, 0.002, 0.001, 0.0, 0.004]])
    for grades, wider in ((small, True), ((small > 0.002).astype(float), False)):
        moments = stratum_moments(design, positions, grades)
        binary = ((grades == 0) | (grades == 1)).all(axis=1)
        plain = from_moments(design, moments, moments, binary, bounded=False)
        read = estimate_batch(design, positions, grades)
        assert bool(read.variance[0] > 10 * plain.variance[0]) == wider
        assert read.variance[0] >= plain.variance[0]
    assert estimate_batch(design, positions, small).interval()[1][0] > 0.02 > plain_high(design, positions, small)


def plain_high(design, positions, grades) -> float:
    moments = stratum_moments(design, positions, grades)
    return float(from_moments(design, moments, moments, np.array([False]), bounded=False).interval()[1][0])


def test_the_share_variance_of_binary_grades_is_the_smoothed_binomial():
    design = make_design(np.repeat([0, 1], 50), np.full(100, 0.5))
    counts, sums = np.array([[10.0, 20.0]]), np.array([[3.0, 10.0]])
    smooth = (sums + 0.5) / (counts + 1)
    expected = (design.weights**2 * (1 - counts / design.sizes) * smooth * (1 - smooth) / counts).sum()
    assert share_variance(design.weights, design.sizes, counts, sums, sums)[0] == pytest.approx(expected)


def test_strata_read_as_one_smooth_their_mean_as_one_sample():
    """Five strata of all-zero grades read as one (core.stats.collapse): the share floor is the one-stratum
    sample's of the same 20 grades, not five half-grades' worth (which made it about four times larger). Read
    apart it is the same, since strata whose grades all agree share one prior; strata read apart whose grades
    differ keep their own half-grades."""
    design = make_design(np.repeat(np.arange(5), 10_000), np.full(50_000, 0.5))
    one = make_design(np.zeros(50_000, dtype=int), np.full(50_000, 0.5))
    counts, zeros = np.full((1, 5), 4.0), np.zeros((1, 5))
    whole = share_variance(one.weights, one.sizes, counts.sum(axis=1, keepdims=True), zeros[:, :1], zeros[:, :1])
    pooled = share_variance(design.weights, design.sizes, counts, zeros, zeros, pooled=np.array([True]))
    apart = share_variance(design.weights, design.sizes, counts, zeros, zeros, pooled=np.array([False]))
    assert pooled[0] == pytest.approx(whole[0], rel=1e-3)
    assert apart[0] == pytest.approx(pooled[0])
    ones = np.ones((1, 5))  # one grade of 1 in each stratum's four: a share of 1, each stratum smoothed alone
    smooth = 1.5 / 5
    expected = (design.weights**2 * (1 - 4 / design.sizes) * smooth * (1 - smooth) / 4).sum()
    assert share_variance(design.weights, design.sizes, counts, ones, ones)[0] == pytest.approx(expected)


def test_a_small_share_of_the_bound_is_not_taken_at_its_word():
    """Thirty equal grades of 0.01 use no share of the Bernoulli bound (rho = 0 read plainly); Jeffreys'
    half-grades, which are binary, keep a share of one pseudo-grade at the bound."""
    design = make_design(np.zeros(1000, dtype=int), np.full(1000, 0.5))
    counts, sums = np.array([[30.0]]), np.array([[0.3]])
    read = share_variance(design.weights, design.sizes, counts, sums, np.array([[0.003]]))[0]
    whole = 0.8 / 31
    pseudo = whole * (1 - whole)
    rho = pseudo / (30 * 0.01 * 0.99 + pseudo)
    assert read == pytest.approx(rho * (1 - 30 / 1000) * pseudo / 30)


def test_a_rare_skewed_mean_without_signal_stops_as_soon_as_one_stratum_would():
    """Skewed grades of mean 0.02, a surrogate without signal: the five strata, read as one, stop within a
    few grades of a one-stratum sample under the same rule (2.0 times its grades with a floor per stratum)."""
    from benchmarks.pools import make_pool

    items = make_pool(2000, 0.02, kind="skewed", auroc=0.5, seed=7)
    labels = labels_of(items)
    design = design_from_items(items, stratify_by=None, kappa=FLOOR_KAPPA)
    one = design_from_items(items.assign(stratum=0), stratify_by=None, kappa=FLOOR_KAPPA)
    orders = replication_orders(labels.size, 0, 200)
    stops = {}
    for name, d, positions in (("strata", design, replay_queue(design, labels, orders, 200)), ("one", one, orders)):
        stop = run_looks(d, positions[:, :200], labels[positions[:, :200]], 0.05)
        stops[name] = np.median(stop.n)
        assert ((stop.low <= labels.mean()) & (labels.mean() <= stop.high)).mean() >= 0.925
    assert stops["strata"] <= 1.25 * stops["one"]


def test_a_finer_scales_grades_all_at_0_are_not_forecast_as_correct_incorrect_ones():
    """Twenty Likert grades of 0 show none of the scale's spread: its share is drawn as before any grade. Read
    as 1 (0 / 0 taken for 0/1 grades), the forecast was the correct/incorrect one, 56 to 379 grades where a
    Likert pool of mean 0.02 stopped at 28 to 42."""
    from benchmarks.pools import make_pool

    items = make_pool(2000, 0.02, kind="likert", auroc=0.5, seed=7)
    design = design_from_items(items, kappa=FLOOR_KAPPA)
    first = replay_queue(design, np.zeros(2000), replication_orders(2000, 0, 1), 20)
    zeros = np.zeros(first.shape)
    likert = forecast_batch(design, first, zeros, 0.05, "looks", levels=(0.0, 0.25, 0.5, 0.75, 1.0))[0]
    binary = forecast_batch(design, first, zeros, 0.05, "looks", levels=(0.0, 1.0))[0]
    assert likert[1] < 0.9 * binary[1]  # read as 0/1 grades, the two forecasts are one
    assert likert[0] < binary[0]


def test_the_fewest_grades_around_those_given_are_neymans_where_none_are_given():
    """core.stats.forecast.least_grades against a search over the Lagrange multiplier: n_h = max(k_h, c_h / r)
    with sum_h c_h^2 / n_h at the bound; without grades given, Neyman's A / bound."""
    from core.stats.forecast import least_grades

    rng = np.random.default_rng(3)
    for _ in range(300):
        h = int(rng.integers(1, 7))
        c = rng.uniform(0, 1, h) * (rng.uniform(size=h) > 0.1)
        k = (rng.integers(0, 30, h) * (rng.uniform(size=h) > 0.3)).astype(float)
        bound = float(rng.uniform(0.0005, 0.05))
        low, high = 1e-12, 1e6  # r: the larger, the fewer grades
        for _ in range(200):
            r = np.sqrt(low * high)
            n_h = np.maximum(k, c / r)
            variance = np.sum(np.where(n_h > 0, c**2 / np.maximum(n_h, 1e-300), 0.0))
            low, high = (r, high) if variance <= bound else (low, r)
        assert least_grades(c, k, np.array(bound)) == pytest.approx(np.maximum(k, c / low).sum(), rel=1e-6, abs=1e-6)
    c = np.array([0.3, 0.2, 0.1])
    assert least_grades(c, np.zeros(3), np.array(0.01)) == pytest.approx(c.sum() ** 2 / 0.01)


def test_wilsons_uniform_size_for_a_pool_of_equal_grades_is_wilsons_not_zero():
    """A pool whose every grade is 0 said uniform sampling needs 0 grades (an outside audit): Wilson's interval at
    p-hat = 0 has half-width z^2 / (2 (n + z^2)), so +-0.05 takes 35 grades, 32 of a pool of 300."""
    from core.stats.simulate import figure_cell
    from core.stats.stopping import uniform_fixed_n_wilson

    assert uniform_fixed_n_wilson(0.0, 0.0, 10**6, 0.05) == 35
    assert uniform_fixed_n_wilson(0.0, 1.0, 300, 0.05) == 32
    assert figure_cell(float("nan"), float("nan"), ".3f") == "-"  # its MSE ratio: none, not "nan±nan"
