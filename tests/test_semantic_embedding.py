"""The embedding backend on the real default model (all-MiniLM-L6-v2, shipped offline)."""

import pytest

from core.errors import InputError
from core.surrogate.semantic import ItemTexts, get_backend

pytestmark = pytest.mark.slow

GROUPS = [
    ItemTexts("Capital of France?", ["Paris", "paris.", "It's Paris, France", "Lyon"], "The Paris"),
    ItemTexts(
        "What does the vaccine study show?",
        ["The vaccine is effective", "the vaccine is effective!", "Nothing"],
        "Nothing at all",
    ),
]


def test_default_model_clusters_and_second_run_is_served_from_cache(tmp_path):
    backend = get_backend("embedding", cache_dir=tmp_path, device="cpu")
    progress = []
    paris, vaccine = backend.cluster(GROUPS, progress=lambda d, t: progress.append((d, t)))
    assert paris[0] == paris[1] == paris[4]  # "Paris", "paris." and the target "The Paris"
    assert paris[3] != paris[0]  # Lyon
    assert vaccine[0] == vaccine[1] != vaccine[2]
    # distinct normalised strings, each embedded once: paris, its paris france, lyon;
    # vaccine is effective, nothing, nothing at all
    assert backend.model_calls == 3 + 3
    assert progress[-1] == (2, 2)  # items

    again = get_backend("embedding", cache_dir=tmp_path, device="cpu")
    result = again.cluster(GROUPS)
    assert again.model_calls == 0
    assert again._model is None  # the model is not even loaded
    assert [r.tolist() for r in result] == [paris.tolist(), vaccine.tolist()]


def test_another_threshold_clusters_again_from_the_stored_embeddings(tmp_path):
    get_backend("embedding", cache_dir=tmp_path / "shared", device="cpu").cluster(GROUPS)
    lower = get_backend("embedding", threshold=0.3, cache_dir=tmp_path / "shared", device="cpu")
    result = lower.cluster(GROUPS)
    assert lower.model_calls == 0 and lower._model is None  # every string's embedding was stored
    fresh = get_backend("embedding", threshold=0.3, cache_dir=tmp_path / "fresh", device="cpu")
    assert [r.tolist() for r in result] == [r.tolist() for r in fresh.cluster(GROUPS)]


def test_lowest_threshold_puts_everything_in_one_class(tmp_path):
    (classes,) = get_backend("embedding", threshold=-1.0, cache_dir=tmp_path, device="cpu").cluster(GROUPS[:1])
    assert set(classes.tolist()) == {0}


def test_threshold_outside_cosine_range_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="threshold"):
        get_backend("embedding", threshold=1.5, cache_dir=tmp_path)


def test_missing_model_is_an_input_error(tmp_path):
    backend = get_backend("embedding", model=str(tmp_path / "no-such-model"), cache_dir=tmp_path, device="cpu")
    with pytest.raises(InputError, match="no-such-model"):
        backend.cluster(GROUPS[:1])
