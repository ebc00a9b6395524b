import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from core.stats.strata import merge_small_strata, stratify, zero_and_quantile_strata


def test_zero_entropy_gets_stratum_zero_and_positives_split_at_quantiles():
    entropy = np.array([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8], dtype=float)
    strata = stratify(entropy, np.ones_like(entropy), n_strata=3, by="entropy", min_size=1)
    assert strata.tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]


def test_strata_increase_with_entropy():
    rng = np.random.default_rng(0)
    entropy = np.where(rng.random(500) < 0.3, 0.0, rng.random(500) * 2)
    strata = stratify(entropy, np.full(500, 0.5), n_strata=5, by="entropy", min_size=1)
    assert sorted(set(strata.tolist())) == [0, 1, 2, 3, 4]
    order = np.argsort(entropy, kind="stable")
    assert np.all(np.diff(strata[order]) >= 0)
    assert np.all(strata[entropy == 0] == 0)


def test_without_zeros_all_strata_go_to_quantiles():
    assert len(set(zero_and_quantile_strata(np.arange(1, 101, dtype=float), 4).tolist())) == 4


def test_ties_leave_no_empty_strata():
    entropy = np.array([0.0] * 5 + [0.5] * 20 + [1.0] * 2)
    strata = stratify(entropy, np.ones(27), n_strata=5, by="entropy", min_size=1)
    assert sorted(set(strata.tolist())) == list(range(strata.max() + 1))


def test_small_strata_are_merged_into_smaller_neighbour():
    strata = np.array([0] * 10 + [1] * 2 + [2] * 5 + [3] * 20)
    merged = merge_small_strata(strata, 6)
    # stratum 1 (2 items) joins stratum 2 (5, smaller than 10): 7 items
    assert np.bincount(merged).tolist() == [10, 7, 20]


def test_missing_scores_form_their_own_last_stratum_never_merged():
    entropy = np.array([0.0, 0.0, 0.3, 0.7, np.nan])
    strata = stratify(entropy, np.array([1, 1, 0.5, 0.2, np.nan]), n_strata=3, by="entropy", min_size=2)
    assert strata[-1] == strata.max()
    assert np.sum(strata == strata[-1]) == 1


def test_by_agreement_orders_by_disagreement():
    agreement = np.array([1.0, 1.0, 0.9, 0.5, 0.1, 0.0])
    strata = stratify(np.zeros(6), agreement, n_strata=3, by="agreement", min_size=1)
    assert strata[0] == strata[1] == 0
    assert np.all(np.diff(strata) >= 0)
    assert strata[-1] == 2


def test_by_both_splits_entropy_strata_by_majority_agreement():
    entropy = np.array([0.0, 0.0, 1.0, 1.0])
    agreement = np.array([1.0, 0.0, 0.8, 0.2])
    assert stratify(entropy, agreement, n_strata=2, by="both", min_size=1).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("options", [{"by": "size"}, {"n_strata": 0}, {"min_size": 0}, {"n_strata": 2.5}])
def test_bad_options_are_input_errors(options):
    with pytest.raises(InputError):
        stratify(np.zeros(3), np.ones(3), **options)


@given(
    st.lists(st.one_of(st.just(0.0), st.floats(0.01, 3.0)), min_size=1, max_size=200),
    st.integers(1, 8),
    st.integers(1, 30),
)
def test_strata_are_contiguous_monotone_and_large_enough(entropies, n_strata, min_size):
    entropy = np.array(entropies)
    strata = stratify(entropy, np.ones_like(entropy), n_strata=n_strata, by="entropy", min_size=min_size)
    counts = np.bincount(strata)
    assert counts.min() >= 1 and len(counts) <= n_strata
    assert len(counts) == 1 or counts.min() >= min_size
    order = np.argsort(entropy, kind="stable")
    assert np.all(np.diff(strata[order]) >= 0)
