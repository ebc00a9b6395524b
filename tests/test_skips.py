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
