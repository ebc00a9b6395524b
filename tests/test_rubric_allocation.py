"""Allocation for every criterion of a rubric together: the compromise spreads, the queue with the other
criteria's grades, the grading state that loads them, and the rubric simulation (core.stats.simulate_rubric)."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError
from core.rubric import ALL, PRIMARY
from core.services.grading import queue_state
from core.stats.allocation import compromise_spreads, make_design, relative_losses, stratum_moments
from core.stats.design import prepared_design
from core.stats.queue import QueueState, next_item, queue_stratum
from core.stats.simulate import replay_queue, replication_orders
from core.stats.simulate_rubric import CRITERIA as CRITERIA_GENERATED
from core.stats.simulate_rubric import mean_correlation, replay_rubric_queue, rubric_pool, rubric_runs
from core.stats.spreads import pooled_sums

RNG = np.random.default_rng(31)


def random_case(k: int, h: int = 5) -> tuple[np.ndarray, np.ndarray]:
    weights = RNG.random(h) + 0.1
    return weights / weights.sum(), RNG.random((k, h)) * 0.5 + 0.01


def neyman_share(weights: np.ndarray, spreads: np.ndarray) -> np.ndarray:
    return weights * spreads / np.sum(weights * spreads, axis=-1, keepdims=True)


def test_one_criterion_gives_its_own_spreads_exactly():
    weights, spreads = random_case(1)
    assert np.array_equal(compromise_spreads(weights, spreads), spreads[0])
    batch = RNG.random((7, 1, 5))
    batch[2] = 0.0  # a criterion with no spread at all stays at 0
    assert np.array_equal(compromise_spreads(weights, batch), batch[:, 0])


def test_two_identical_criteria_allocate_as_one():
    weights, spreads = random_case(1)
    assert np.array_equal(compromise_spreads(weights, np.concatenate([spreads, spreads])), spreads[0])


def test_the_compromise_lies_between_the_criteria_and_minimises_the_sum_of_relative_losses():
    for _ in range(50):
        weights, spreads = random_case(3)
        compromise = compromise_spreads(weights, spreads)
        # a weighted mean of the criteria's variances: between the smallest and the largest spread per stratum
        assert np.all(spreads.min(axis=0) <= compromise + 1e-15) and np.all(compromise <= spreads.max(axis=0) + 1e-15)
        share = neyman_share(weights, compromise)
        total = relative_losses(weights, spreads, share).sum()
        assert np.all(relative_losses(weights, spreads, share) >= 1 - 1e-12)  # no criterion beats its own Neyman
        assert np.allclose(relative_losses(weights, spreads, neyman_share(weights, spreads)).diagonal(), 1.0)
        for k in range(3):  # nor does any criterion's own allocation beat the compromise on the sum
            assert total <= relative_losses(weights, spreads, neyman_share(weights, spreads[k])).sum() + 1e-12
        others = RNG.dirichlet(np.ones(5), size=200)
        assert total <= relative_losses(weights, spreads, others).sum(axis=-1).min() + 1e-12


def test_with_two_strata_the_share_lies_between_the_criteria_own_shares():
    for _ in range(50):
        weights, spreads = random_case(2, h=2)
        own = neyman_share(weights, spreads)[:, 0]
        share = neyman_share(weights, compromise_spreads(weights, spreads))[0]
        assert own.min() - 1e-12 <= share <= own.max() + 1e-12


def test_scaling_one_criterion_leaves_the_allocation_alone():
    weights, spreads = random_case(3)
    scaled = spreads * np.array([[1.0], [0.1], [7.0]])
    assert np.allclose(
        neyman_share(weights, compromise_spreads(weights, scaled)),
        neyman_share(weights, compromise_spreads(weights, spreads)),
        rtol=1e-12,
    )


def test_a_criterion_without_spread_is_left_out():
    weights, spreads = random_case(1)
    with_flat = np.concatenate([spreads, np.zeros_like(spreads)])
    assert np.array_equal(compromise_spreads(weights, with_flat), spreads[0])
    assert np.array_equal(compromise_spreads(weights, np.zeros((2, 5))), np.zeros(5))


@pytest.fixture
def design():
    # Four strata of 30 items; the surrogate predicts the same grade in every stratum, and weighs as 2 grades.
    strata = np.repeat([0, 1, 2, 3], 30)
    return make_design(strata, np.full(strata.size, 0.5), kappa=0.0, prior_strength=2.0)


def drain_counts(design, n, primary, *others) -> np.ndarray:
    """Grades per stratum after n draws, every item graded at once with each criterion's grade function."""
    state = QueueState(criteria=tuple({} for _ in others))
    for _ in range(n):
        p = next_item(design, state, 5)
        criteria = tuple({**g, p: grade(p)} for g, grade in zip(state.criteria, others))
        state = QueueState({**state.graded, p: primary(p)}, criteria=criteria)
    return np.bincount(design.stratum[list(state.graded)], minlength=design.H)


def test_a_second_identical_criterion_changes_nothing(design):
    grade = lambda p: float((p * 7919) % 3 == 0) if design.stratum[p] < 2 else 0.5 * float(p % 2)  # noqa: E731
    assert np.array_equal(drain_counts(design, 60, grade), drain_counts(design, 60, grade, grade))


def test_the_queue_allocates_for_the_other_criteria_too(design):
    """The primary criterion varies only in stratum 0, the other only in stratum 3: alone, the queue follows the
    primary; with the other criterion it gives stratum 3 as many grades as stratum 0 (the symmetric compromise)."""
    primary = lambda p: float(p % 2) if design.stratum[p] == 0 else 1.0  # noqa: E731
    other = lambda p: float(p % 2) if design.stratum[p] == 3 else 0.0  # noqa: E731
    alone, together = drain_counts(design, 60, primary), drain_counts(design, 60, primary, other)
    assert alone[0] > 2 * alone[3]  # [27 11 11 11]
    assert together[3] > 1.5 * alone[3] and abs(int(together[0]) - int(together[3])) <= 2  # [20 10 10 20]


def test_the_batched_step_reads_every_criterion_as_the_single_one_does(design):
    reps, n = 6, 40
    positions = np.stack([RNG.permutation(design.N)[:n] for _ in range(reps)])
    first, second = RNG.random((reps, n)) < 0.3, RNG.random((reps, n)).round(1)
    taken = np.stack([np.bincount(design.stratum[row], minlength=design.H) for row in positions])

    def reading(grades):
        return stratum_moments(design, positions, grades), pooled_sums(design, positions, grades)

    batch = queue_stratum(design, taken, *reading(first), [reading(second)])
    for r in range(reps):
        state = QueueState(
            dict(zip(positions[r].tolist(), first[r].astype(float).tolist())),
            criteria=(dict(zip(positions[r].tolist(), second[r].tolist())),),
        )
        assert design.stratum[next_item(design, state, r)] == batch[r]


def test_a_grade_of_another_criterion_outside_the_pool_is_refused(design):
    with pytest.raises(InputError, match="outside the pool"):
        next_item(design, QueueState({0: 1.0}, criteria=({0: 1.0, design.N: 0.0},)), 0)


CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]


@pytest.mark.parametrize("allocate_for", [ALL, PRIMARY])
def test_queue_state_loads_the_other_criteria_when_the_project_allocates_for_all(prepared_project, allocate_for):
    store, pid = prepared_project
    store.update_settings(pid, {"criteria": CRITERIA, "primary_criterion": "helpful", "allocate_for": allocate_for})
    store.add_rubric_grades(pid, 0, [("correct", 1.0, "Correct"), ("helpful", 0.75, "4")], grader="ann")
    card = [("correct", 0.0, "Incorrect"), ("helpful", 0.25, "2"), ("tone", 1.0, "5")]
    store.add_rubric_grades(pid, 1, card, grader="ann")
    state = queue_state(store, pid, {1, 2})
    assert state.graded == {0: 0.75, 1: 0.25} and state.reserved == {2}
    assert state.criteria == (({0: 1.0, 1: 0.0}, {1: 1.0}) if allocate_for == ALL else ())


def test_queue_state_of_a_one_question_project_has_no_other_criteria(prepared_project):
    store, pid = prepared_project
    store.add_grade(pid, 0, value=1.0, label="Correct", grader="ann")
    assert queue_state(store, pid) == QueueState({0: 1.0})


@pytest.fixture(scope="module")
def pool():
    return rubric_pool(1500, 0.5, seed=2)


def test_a_generated_rubric_pool_has_the_asked_correlation_and_each_level_its_share(pool):
    assert mean_correlation(pool.labels) == pytest.approx(0.5, abs=0.005)
    assert np.array_equal(pool.items["label"].to_numpy(), pool.labels[0]) and pool.items["stratum"].nunique() == 5
    for criterion, grades in zip(CRITERIA_GENERATED, pool.labels):
        shares = [np.mean(grades == v) for v in criterion.values]
        assert np.allclose(shares, criterion.probabilities, atol=0.04)
    low = rubric_pool(1500, 0.2, seed=2)
    assert mean_correlation(low.labels) == pytest.approx(0.2, abs=0.005) and low.latent < pool.latent


def test_the_rubric_replay_is_the_queue_replay_for_one_criterion_and_for_identical_ones(pool):
    design = prepared_design(pool.items)
    orders = replication_orders(design.N, 4, 8)
    single = replay_queue(design, pool.labels[0], orders, 60)
    assert np.array_equal(replay_rubric_queue(design, pool.labels[0], orders, 60), single)
    assert np.array_equal(replay_rubric_queue(design, pool.labels[[0, 0]], orders, 60), single)
    assert not np.array_equal(replay_rubric_queue(design, pool.labels, orders, 60), single)


def test_rubric_runs_give_every_criterion_its_figures(pool):
    result = rubric_runs(pool, (20, 40), reps=10, seed=1)
    assert list(result) == list(pool.names) and all(list(by) == [20, 40] for by in result.values())
    first = result["correct"][40]
    assert first["primary_vs_alone"] == 1.0 and 0 <= first["coverage"] <= 1 and first["all_vs_alone_se"] > 0
