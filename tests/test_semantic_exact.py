import numpy as np
import pytest

from core.errors import InputError
from core.surrogate.semantic import ItemTexts, get_backend


def test_exact_paris_classes_with_target_last():
    (classes,) = get_backend("exact").cluster(
        [ItemTexts("Capital of France?", ["Paris", "paris.", "Lyon"], "The Paris")]
    )
    assert classes.tolist() == [0, 0, 1, 0]


def test_target_outside_every_sample_class_gets_a_new_class():
    (classes,) = get_backend("exact").cluster([ItemTexts("q", ["$18", "18.0", "20"], "17")])
    assert classes.tolist() == [0, 0, 1, 2]


def test_classes_numbered_by_first_appearance_per_item_and_progress_reported():
    calls = []
    groups = [ItemTexts("q", ["b", "a", "b"], "a"), ItemTexts("q", ["1,000", "1000"], "x")]
    result = get_backend("exact").cluster(groups, progress=lambda done, total: calls.append((done, total)))
    assert [r.tolist() for r in result] == [[0, 1, 0, 1], [0, 0, 1]]
    assert calls[-1] == (2, 2)


def test_exact_backend_takes_no_model():
    with pytest.raises(InputError, match="no model"):
        get_backend("exact", model="x")


def test_empty_input_gives_empty_output():
    assert get_backend("exact").cluster([]) == []
    assert isinstance(get_backend("exact").cluster([ItemTexts("q", [], "t")])[0], np.ndarray)
