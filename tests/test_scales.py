"""core.scales: a scale in words, and a mean grade on [0, 1] read on the labels graded (a Likert project's
manager saw 0.110 with nothing saying what it is on 1-5)."""

from __future__ import annotations

from core.scales import BINARY, LIKERT, custom_scale
from core.services.criteria_reading import scale_words


def test_a_likert_mean_reads_on_its_own_labels():
    assert LIKERT.name == "Likert 1-5" and BINARY.name == "correct/incorrect"
    assert LIKERT.value_words() == "on [0, 1], 1 = 0, 2 = 0.25, 3 = 0.5, 4 = 0.75, 5 = 1"
    assert LIKERT.on_labels(0.110) == "1.44 on the 1-5 scale"
    assert scale_words({"scale": LIKERT.to_settings()}, 0.110).endswith("5 = 1: 1.44 on the 1-5 scale")


def test_a_binary_or_worded_scale_has_no_place_on_its_labels():
    assert BINARY.value_words() is None and BINARY.on_labels(0.4) is None
    assert scale_words({}, 0.4) == ""  # the share graded correct
    worded = custom_scale([("bad", 0.0), ("ok", 0.5), ("good", 1.0)])
    assert worded.value_words() == "on [0, 1], bad = 0, ok = 0.5, good = 1" and worded.on_labels(0.3) is None
    uneven = custom_scale([("1", 0.0), ("2", 0.9), ("3", 1.0)])  # numbers the values do not follow linearly
    assert uneven.on_labels(0.5) is None


def test_labels_given_with_a_named_scale_are_refused_not_stored_unseen():
    """{"kind": "likert", "labels": [["a", 0], ["b", 1]]} was stored, and the graders saw 1 to 5 (a new user's
    review)."""
    import pytest

    from core.errors import InputError
    from core.scales import scale_from_settings

    with pytest.raises(InputError, match='a likert scale has its own labels.*"kind": "custom"'):
        scale_from_settings({"scale": {"kind": "likert", "labels": [["a", 0], ["b", 1]]}})
    assert scale_from_settings({"scale": {"kind": "likert"}}).kind == "likert"
