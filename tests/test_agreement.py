"""core.stats.rater_agreement: Cohen's kappa, Krippendorff's alpha (against published values) and the mean rule."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.scales import scale_from_settings
from core.stats.rater_agreement import agreement, cohen_kappa, final_grades, krippendorff_alpha, summary

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers, 12 units.
K2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]
)


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_matches_krippendorffs_worked_example(level, published):
    assert krippendorff_alpha(K2011, level) == pytest.approx(published, abs=5e-4)


def test_alpha_is_undefined_without_pairs_or_variation():
    assert math.isnan(krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 0.0]])))
    assert math.isnan(krippendorff_alpha(np.ones((2, 3))))


def test_kappa_by_hand():
    # p_o = 2/3; rater 1 says 1 twice in 3, rater 2 once: p_e = 4/9; kappa = (2/3 - 4/9) / (5/9) = 0.4
    assert cohen_kappa([1, 0, 1], [1, 0, 0]) == pytest.approx(0.4)
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    with pytest.raises(ValueError, match="3 grades from the first rater but 2"):
        cohen_kappa([1, 0, 1], [1, 0])


def test_weighted_kappa_counts_near_misses_on_ordered_scales():
    first, second = [0, 0.25, 0.5, 0.75, 1.0], [0.25, 0.25, 0.5, 0.75, 0.75]
    assert cohen_kappa(first, second, "ordinal") > cohen_kappa(first, second, "nominal")


def test_agreement_pairs_first_and_second_grade_of_each_item():
    # items 1 and 0 are double-graded in interleaved order; item 2 once; item 3 by two other graders
    grades = pd.DataFrame(
        {
            "position": [0, 1, 1, 0, 2, 3, 3],
            "grader": ["a", "a", "b", "b", "a", "c", "a"],
            "value": [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
        }
    )
    result = agreement(grades)
    assert (result.items, result.graders) == (3, 3)
    assert result.observed == pytest.approx(2 / 3)
    assert result.kappa == pytest.approx(0.4)
    matrix = np.array([[1, 0, 0], [1, 0, np.nan], [np.nan, np.nan, 1]])  # graders a, b, c x items 0, 1, 3
    assert result.alpha == pytest.approx(krippendorff_alpha(matrix))


def test_agreement_without_double_grades_is_empty():
    result = agreement(pd.DataFrame({"position": [0, 1], "grader": ["a", "b"], "value": [1.0, 0.0]}))
    assert result.items == 0 and math.isnan(result.kappa) and math.isnan(result.alpha)


def test_several_grades_enter_the_estimate_as_their_mean():
    assert final_grades([0, 1, 0], [1.0, 0.75, 0.0], {}) == {0: 0.5, 1: 0.75}
    assert final_grades([], [], {}) == {}  # no grade: no item enters the estimate
    with pytest.raises(ValueError, match="2 positions but 1 grades"):
        final_grades([0, 1], [1.0], {})


def test_scale_levels_and_the_one_line_summary():
    assert (
        scale_from_settings({"scale": {"kind": "binary"}}).level == "nominal"
        and scale_from_settings({}).level == "nominal"
    )
    assert scale_from_settings({"scale": {"kind": "likert"}}).level == "ordinal"
    grades = pd.DataFrame(
        {"position": [0, 0, 1, 1, 2, 2], "grader": ["a", "b"] * 3, "value": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]}
    )
    assert summary(agreement(grades)).startswith("3 items graded twice: same grade 67%, Cohen's kappa 0.40")
    assert summary(agreement(grades.iloc[:1])) == "No item graded twice yet."
