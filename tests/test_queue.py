"""The anytime queue: pure, deterministic, never hands out a taken item, honours skips."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError
from core.stats.allocation import make_design
from core.stats.queue import Draws, QueueState, handed_out_order, item_order, next_item, stratum_orders


@pytest.fixture
def design():
    # Three strata of 6, 10 and 20 items; the surrogate says stratum 2 is the most uncertain.
    strata = np.repeat([0, 1, 2], [6, 10, 20])
    proxy = np.repeat([0.95, 0.8, 0.5], [6, 10, 20])
    return make_design(strata, proxy, shrink=1.0)


def drain(design, seed, grade=lambda p: 1.0):
    state, order = QueueState(), []
    while (p := next_item(design, state, seed)) is not None:
        order.append(p)
        state = QueueState({**state.graded, p: grade(p)})
    return order


def test_same_state_and_seed_give_the_same_item(design):
    state = QueueState.from_lists([0, 10], [1.0, 0.0], skipped=[11], reserved=[20])
    assert next_item(design, state, 7) == next_item(design, state, 7)
    assert len({next_item(design, QueueState(), s) for s in range(20)}) > 1


def test_every_stratum_gets_its_floor_before_anything_else(design):
    """No estimate leans on an ungraded stratum: the first H grades visit every stratum, whatever the weights
    (stratum 0 holds 6 of 36 items); until the grades show the strata differ the floor is that one grade and
    the next go proportionally (core.stats.collapse), not design.floor to each."""
    order = drain(design, 3)
    strata = design.stratum[np.array(order)]
    assert sorted(strata[:3]) == [0, 1, 2]
    assert np.bincount(strata[: 3 * design.floor], minlength=3).tolist() == [1, 2, 3]  # sizes 6, 10, 20: proportional
    assert strata[0] == 2  # the largest W_h S_h goes first


def test_the_queue_hands_out_every_item_once(design):
    order = drain(design, 1)
    assert sorted(order) == list(range(design.N))


def test_reserved_and_graded_items_are_never_handed_out(design):
    reserved = set(range(16, 36))  # all of stratum 2
    state = QueueState.from_lists([0, 1], [1.0, 1.0], reserved=reserved)
    seen = set()
    for _ in range(design.N):
        p = next_item(design, state, 0)
        if p is None:
            break
        assert p not in reserved and p not in state.graded
        seen.add(p)
        state = QueueState(state.graded, state.skipped, state.reserved | {p})
    assert seen == set(range(2, 16))


def test_concurrent_draws_differ_once_the_first_is_reserved(design):
    first = next_item(design, QueueState(), 5)
    second = next_item(design, QueueState(reserved=frozenset({first})), 5)
    assert second != first


def test_a_skipped_item_waits_behind_its_stratum(design):
    first = next_item(design, QueueState(), 0)
    stratum = design.stratum[first]
    state = QueueState(skipped=frozenset({first}))
    assert next_item(design, state, 0) != first
    # When every other item of that stratum is graded, the skipped one comes back.
    others = [p for p in np.flatnonzero(design.stratum == stratum) if p != first]
    rest = [p for p in range(design.N) if design.stratum[p] != stratum]
    state = QueueState.from_lists(others + rest[:-1], [1.0] * (len(others) + len(rest) - 1), skipped=[first])
    assert {next_item(design, state, 0)} <= {first, rest[-1]}
    state = QueueState.from_lists(others + rest, [1.0] * (len(others) + len(rest)), skipped=[first])
    assert next_item(design, state, 0) == first


def test_items_within_a_stratum_are_uniform(design):
    # The first item drawn from stratum 2 (20 items) over 2,000 seeds: chi-square test.
    draws = [next(p for p in item_order(design.N, s) if design.stratum[p] == 2) for s in range(2000)]
    counts = np.bincount(draws, minlength=design.N)[16:]
    chi2 = ((counts - 100) ** 2 / 100).sum()
    assert chi2 < 43.8  # 99.9% quantile of chi-square with 19 df


def test_grades_move_the_allocation(design):
    """Adaptive Neyman: a stratum whose grades all agree gets fewer of the next grades."""
    strongly = make_design(design.stratum, np.full(design.N, 0.5), shrink=1.0, prior_strength=1.0)
    all_equal = drain(strongly, 0, grade=lambda p: 1.0 if strongly.stratum[p] == 2 else float(p % 2))
    mixed = drain(strongly, 0, grade=lambda p: float(p % 2))
    first20 = lambda order: np.bincount(strongly.stratum[order[:20]], minlength=3)  # noqa: E731
    assert first20(all_equal)[2] < first20(mixed)[2]


@pytest.mark.parametrize("seed", [0, 7])
def test_draws_on_one_read_of_the_grades_hand_out_what_next_item_would(design, seed):
    """A batch's draws (Draws.next with the items drawn before reserved too) against next_item on the whole state,
    from grades with two criteria, skips and a reserved set that holds a graded item, until the pool runs out."""
    rng = np.random.default_rng(seed)
    graded = {int(p): float(rng.integers(0, 2)) for p in rng.choice(design.N, 12, replace=False)}
    other = {p: float(rng.random()) for p in graded}
    skipped = frozenset(int(p) for p in rng.choice(design.N, 4, replace=False)) - graded.keys()
    state = QueueState(graded, skipped, frozenset(), (other,))
    draws = Draws(design, state, seed)
    reserved = {next(iter(graded))}
    while True:
        expected = next_item(design, QueueState(graded, skipped, frozenset(reserved), (other,)), seed)
        assert draws.next(frozenset(reserved)) == expected
        if expected is None:
            break
        reserved.add(expected)
    assert len(reserved - graded.keys()) == design.N - len(graded)


@pytest.mark.parametrize(
    ("state", "outside"),
    [
        (QueueState(reserved=frozenset({36})), 36),
        (QueueState({0: 1.0, -1: 0.0}), -1),
        (QueueState({0: 1.0}, skipped=frozenset({2, 40})), 40),
        (QueueState({37: 1.0}, reserved=frozenset({38})), 37),  # the first of graded, skipped, reserved
    ],
)
def test_positions_outside_the_pool_are_input_errors(design, state, outside):
    with pytest.raises(InputError, match=f"position {outside} is outside the pool of 36 items"):
        next_item(design, state, 0)


def test_state_validation():
    with pytest.raises(ValueError, match="2 graded positions but 1 grades"):
        QueueState.from_lists([1, 2], [1.0])
    state = QueueState.from_lists([1], [1.0], skipped=[1, 2], reserved=[1, 3])
    assert state.skipped == {2} and state.reserved == {3}


def test_the_app_and_the_simulator_take_the_same_step(design, monkeypatch):
    """next_item and the simulator's batched replay both choose the stratum with core.stats.queue.queue_stratum."""
    import core.stats.queue as queue
    import core.stats.simulate as simulate

    calls = []

    def counting(*args):
        calls.append(np.shape(args[1]))
        return queue_stratum(*args)

    queue_stratum = queue.queue_stratum
    monkeypatch.setattr(queue, "queue_stratum", counting)
    monkeypatch.setattr(simulate, "queue_stratum", counting)
    next_item(design, QueueState(), seed=1)
    simulate.replay_queue(design, np.zeros(design.N), simulate.replication_orders(design.N, 1, 3), 4)
    assert calls == [(design.H,)] + [(3, design.H)] * 4


def _first_free_by_scanning(design, state: QueueState, seed: int, h: int) -> int:
    """The rule as stated, over the whole pool: the first position of the seed's order in stratum h that is
    neither graded nor reserved, preferring those nobody skipped."""
    order = item_order(design.N, seed)
    taken = set(state.graded) | set(state.reserved)
    free = [int(p) for p in order if design.stratum[p] == h and p not in taken]
    fresh = [p for p in free if p not in state.skipped]
    return (fresh or free)[0]


@pytest.mark.parametrize("seed", range(6))
def test_the_draw_reads_only_a_strata_head_yet_picks_what_a_full_scan_picks(design, seed):
    rng = np.random.default_rng(seed)
    picks = rng.permutation(design.N)
    graded = {int(p): float(rng.random() < 0.5) for p in picks[: rng.integers(0, design.N // 2)]}
    rest = picks[len(graded) :]
    reserved = rest[: rng.integers(0, 5)]
    skipped = rest[len(reserved) : len(reserved) + rng.integers(0, 8)]
    state = QueueState.from_lists(graded, graded.values(), skipped, reserved)
    position = next_item(design, state, seed)
    assert position is not None
    assert position == _first_free_by_scanning(design, state, seed, int(design.stratum[position]))


def test_the_handed_out_order_is_a_proportional_stratified_sample_at_every_prefix():
    """For a tool that hands items out in file order (Label Studio): every stratum first, then within two items
    of n W_h from each stratum at every prefix n, each stratum's items in the seed's order."""
    rng = np.random.default_rng(0)
    for _ in range(10):
        sizes = rng.integers(1, 200, size=rng.integers(1, 8))
        design = make_design(np.repeat(np.arange(sizes.size), sizes), np.full(int(sizes.sum()), 0.5))
        order = handed_out_order(design, seed=3)
        assert sorted(order) == list(range(design.N))
        assert sorted(design.stratum[order[: design.H]]) == list(range(design.H))  # one of each first
        counts = np.cumsum(np.eye(design.H)[design.stratum[order]], axis=0)
        assert np.abs(counts - np.arange(1, design.N + 1)[:, None] * design.weights).max() < 2
        for h, drawn in enumerate(stratum_orders(design, 3)):
            assert list(order[design.stratum[order] == h]) == list(drawn)
