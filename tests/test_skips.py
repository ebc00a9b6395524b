"""Skips per stratum and their worst-case bound (core.stats.skips)."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.allocation import make_design
from core.stats.skips import skip_bound


def test_skip_bound_by_hand():
    """Strata of 10 and 30 items (W = 1/4, 3/4). Stratum 0: grades 1, 0 and 2 skips; stratum 1: grades 1, 1, 0, none skipped.

    low = 1/4 * 1/4 + 3/4 * 2/3, high = 1/4 * 3/4 + 3/4 * 2/3."""
    design = make_design(np.repeat([0, 1], [10, 30]), np.full(40, 0.5))
    bound = skip_bound(design, [0, 1, 10, 11, 12], [1.0, 0.0, 1.0, 1.0, 0.0], {2, 3, 0})
    assert bound.skipped == 2  # position 0 is graded, so not a skip
    assert bound.table["skipped"].tolist() == [2, 0]
    assert bound.table["skip_share"].tolist() == pytest.approx([0.5, 0.0])
    assert bound.low == pytest.approx(1 / 16 + 0.5)
    assert bound.high == pytest.approx(3 / 16 + 0.5)


def test_no_skip_means_no_spread():
    design = make_design(np.repeat([0, 1], [10, 30]), np.full(40, 0.5))
    bound = skip_bound(design, [0, 10], [0.25, 1.0], [])
    assert bound.skipped == 0 and bound.low == bound.high == pytest.approx(0.25 / 4 + 0.75)


def test_a_stratum_seen_only_through_skips_spans_its_weight():
    design = make_design(np.repeat([0, 1], [10, 30]), np.full(40, 0.5))
    bound = skip_bound(design, [10], [1.0], [0])
    assert (bound.low, bound.high) == pytest.approx((0.75, 1.0))


def test_the_widening_is_the_bound_around_the_estimate():
    from core.stats.skips import skip_widening

    design = make_design(np.repeat([0, 1], [10, 30]), np.full(40, 0.5))
    value = 0.25 * 0.5 + 0.75 * 2 / 3  # stratum means 1/2 and 2/3
    down, up = skip_widening(design.weights, np.array([value]), [[2, 3]], [[1.0, 2.0]], [[2, 0]])
    assert down[0] == pytest.approx(value - (1 / 16 + 0.5)) and up[0] == pytest.approx(3 / 16 + 0.5 - value)
    assert skip_widening(design.weights, np.array([value]), [[2, 3]], [[1.0, 2.0]], [[0, 0]]) == (0.0, 0.0)


def test_skips_that_stay_skipped_keep_the_looks_from_stopping_and_are_counted_as_met():
    """Stratum 0's first two items in the order stay skipped: the queue meets them before its third item, and
    comes back to them only after the stratum's other items; the looks then cannot stop within a target the
    skips' worst case exceeds."""
    from core.stats.simulate import skips_met
    from core.stats.stopping import run_looks

    design = make_design(np.repeat([0, 1], [50, 50]), np.full(100, 0.5))
    order = np.arange(100)[None]
    lost = np.zeros((1, 100), dtype=bool)
    lost[0, [0, 1]] = True
    positions = np.concatenate([np.arange(2, 50), [0, 1], np.arange(50, 100)])[None]
    met = skips_met(design, order, lost, positions)
    assert met[0, 0] == 2 and met[0, 47] == 2 and met[0, 48] == 1 and met[0, 49] == 0 and met[0, 50] == 0
    grades = (np.arange(100)[positions] % 2).astype(float)
    free = run_looks(design, positions[:, :60], grades[:, :60], 0.2)
    held = run_looks(design, positions[:, :60], grades[:, :60], 0.2, skipped=np.full((1, 60), 20))
    assert free.stopped[0] and not held.stopped[0]
    assert held.last_high[0] - held.last_low[0] > free.high[0] - free.low[0]
