import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.surrogate.entropy import agreement, semantic_entropy, weighted_semantic_entropy


def test_hand_computed_two_classes():
    # "Paris", "paris.", "Lyon": classes [0, 0, 1]
    assert semantic_entropy([0, 0, 1]) == pytest.approx(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)))
    assert semantic_entropy([0, 0, 1]) == pytest.approx(0.6365, abs=1e-4)
    assert agreement([0, 0, 1], 0) == pytest.approx(2 / 3)


def test_one_class_has_zero_entropy_and_all_distinct_has_log_k():
    assert semantic_entropy([3, 3, 3]) == 0.0
    assert semantic_entropy(list(range(10))) == pytest.approx(math.log(10))


def test_no_samples_give_nan():
    assert math.isnan(semantic_entropy([]))
    assert math.isnan(agreement([], 0))
    assert math.isnan(weighted_semantic_entropy([], [], []))


def test_target_in_no_sample_class_has_zero_agreement():
    assert agreement([0, 1, 1], 2) == 0.0


def test_weighted_equal_likelihoods_match_discrete():
    classes = [0, 0, 1, 2]
    assert weighted_semantic_entropy(classes, [-2.0] * 4, [1] * 4) == pytest.approx(semantic_entropy(classes))


def test_weighted_hand_computed_with_length_normalisation():
    # weights exp(-2/2) = e^-1 for class 0 and exp(-3/1) = e^-3 for class 1
    w0, w1 = math.exp(-1), math.exp(-3)
    p0, p1 = w0 / (w0 + w1), w1 / (w0 + w1)
    expected = -(p0 * math.log(p0) + p1 * math.log(p1))
    assert weighted_semantic_entropy([0, 1], [-2.0, -3.0], [2, 1]) == pytest.approx(expected)


def test_weighted_does_not_underflow():
    value = weighted_semantic_entropy([0, 1], [-5000.0, -5000.0], [1, 1])
    assert value == pytest.approx(math.log(2))


def test_weighted_is_nan_when_a_logprob_is_missing():
    assert math.isnan(weighted_semantic_entropy([0, 1], [-1.0, np.nan], [1, 1]))


class_lists = st.lists(st.integers(0, 5), min_size=1, max_size=30)


@given(class_lists)
def test_entropy_lies_between_zero_and_log_of_class_count(classes):
    value = semantic_entropy(classes)
    assert -1e-12 <= value <= math.log(len(set(classes))) + 1e-12


@given(class_lists, st.floats(-50, 0))
def test_equal_weights_reduce_to_discrete_entropy(classes, logprob):
    n = len(classes)
    assert weighted_semantic_entropy(classes, [logprob] * n, [3] * n) == pytest.approx(
        semantic_entropy(classes), abs=1e-9
    )
