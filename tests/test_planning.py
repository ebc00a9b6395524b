"""The planned saving as a range (core.stats.planning): before any grade, and from a pilot."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.allocation import design_from_items, make_design, planned_saving
from core.stats.planning import MIN_PILOT, planned_saving_range
from core.stats.queue import item_order
from core.stats.simulate import synthetic_items


def test_without_a_pilot_the_range_runs_from_no_signal_to_calibrated_agreement():
    design = design_from_items(synthetic_items(1000, seed=3))
    forecast = planned_saving_range(design, 100)
    assert forecast.pilot == 0
    assert forecast.low == pytest.approx(planned_saving(design, 100, np.full(design.H, design.proxy.mean())))
    assert abs(forecast.low) < 0.03  # a surrogate without signal saves nothing
    assert forecast.mid == pytest.approx(planned_saving(design, 100))  # the smoothed prediction at face value
    assert forecast.high > forecast.mid + 0.2


@pytest.mark.parametrize("signal", [0.0, 1.0])
def test_a_pilot_moves_the_range_to_what_the_surrogate_is_worth(signal):
    """30 random grades: with no signal the range still holds 0 and is narrower than before any
    grade; with a strong signal it excludes the savings of a useless surrogate."""
    items = synthetic_items(1000, signal=signal, seed=4)
    design = design_from_items(items)
    pilot = item_order(design.N, 1)[:30]
    forecast = planned_saving_range(design, 100, pilot, items["label"].to_numpy()[pilot])
    before = planned_saving_range(design, 100)
    assert forecast.pilot == 30 and forecast.low <= forecast.mid <= forecast.high
    if signal == 0:
        assert forecast.low <= 0.02 and forecast.high - forecast.low < before.high - before.low
    else:
        assert forecast.low > 0.2  # a useless surrogate saves about 0; the queue now also buys the anytime width


def test_a_pilot_of_equal_grades_is_not_taken_for_certainty():
    design = make_design(np.repeat([0, 1, 2], 200), np.repeat([0.2, 0.5, 0.8], 200))
    pilot = np.arange(0, 600, 600 // MIN_PILOT)[:MIN_PILOT]
    forecast = planned_saving_range(design, 60, pilot, np.zeros(MIN_PILOT))
    assert forecast.high > forecast.low
