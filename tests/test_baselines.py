"""LURE and active inference: unbiased, and exact in their degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.baselines import _capped_probabilities, active_inference, lure


@pytest.fixture
def pool():
    rng = np.random.default_rng(0)
    predicted = rng.random(500)
    labels = (rng.random(500) < predicted).astype(float)
    return labels, predicted


def test_lure_on_the_whole_pool_is_exact(pool):
    labels, predicted = pool
    # M = N makes every weight v_m = 1: the mean loss of all items, whatever the proposal.
    value, _, n = lure(labels, predicted, labels.size, np.random.default_rng(1), 3)
    assert value == pytest.approx([labels.mean()] * 3) and n.tolist() == [labels.size] * 3


@pytest.mark.parametrize("estimator", [lure, active_inference])
def test_unbiased(pool, estimator):
    labels, predicted = pool
    value, variance, _ = estimator(labels, predicted, 50, np.random.default_rng(2), 4000)
    assert abs(value.mean() - labels.mean()) < 3 * value.std() / np.sqrt(4000)
    # The variance estimate is about right on average.
    assert np.mean(variance) == pytest.approx(value.var(), rel=0.15)


def test_active_inference_with_a_perfect_predictor_is_exact(pool):
    labels, _ = pool
    value, variance, n = active_inference(labels, labels, 50, np.random.default_rng(3), 50)
    assert value == pytest.approx([labels.mean()] * 50) and (variance == 0).all()
    assert abs(n.mean() - 50) < 5


def test_capped_probabilities():
    pi = _capped_probabilities(np.array([100.0, 1, 1, 1, 1]), 3)
    assert pi.sum() == pytest.approx(3) and pi.max() == 1.0
    assert pi[1:] == pytest.approx([0.5] * 4)
