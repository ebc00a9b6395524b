"""Group-sequential critical values (core.stats.looks) against textbook constants."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.looks import crossing_probabilities, look_plan, obrien_fleming_spending, spending_constants


@pytest.mark.parametrize(("looks", "constant"), [(2, 2.178), (3, 2.289), (5, 2.413)])
def test_pocock_constants_spend_five_percent(looks, constant):
    """Pocock's constant boundaries at 5% (Jennison and Turnbull 2000, table 2.1)."""
    fractions = np.arange(1, looks + 1) / looks
    assert crossing_probabilities([constant] * looks, fractions).sum() == pytest.approx(0.05, abs=3e-4)


def test_obrien_fleming_constants_spend_five_percent():
    """O'Brien and Fleming's boundaries c_k = 2.040 sqrt(5 / k) for five looks (ibid., table 2.3)."""
    k = np.arange(1, 6)
    assert crossing_probabilities(2.040 * np.sqrt(5 / k), k / 5).sum() == pytest.approx(0.05, abs=3e-4)


def test_spending_constants_spend_what_the_function_says():
    fractions = (0.3, 0.6, 1.0)
    constants = spending_constants(fractions, 0.05)
    spent = np.cumsum(crossing_probabilities(constants, fractions))
    assert spent == pytest.approx(obrien_fleming_spending(np.array(fractions), 0.05), abs=1e-5)
    assert spent[-1] == pytest.approx(0.05, abs=1e-5)
    assert constants[0] > constants[1] > constants[2] > 1.96  # strict early, near the single look at the end


def test_the_default_plan_costs_little_at_its_last_look():
    plan = look_plan()
    assert plan.fractions[-1] == 1.0
    assert 1.96 < plan.constants[-1] < 2.0  # under 4% more grades than one look: (c_K / 1.96)^2
    assert plan.levels[0] > plan.final_level > 0.95


def test_bad_fractions_are_refused():
    with pytest.raises(ValueError):
        spending_constants((0.5, 0.4, 1.0))
