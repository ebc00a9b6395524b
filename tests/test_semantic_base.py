import pytest
import torch

from core.errors import InputError
from core.surrogate.semantic import get_backend
from core.surrogate.semantic.base import Query, cluster_by_representatives, dedupe, resolve_device, short_error


def test_dedupe_keeps_first_appearance_order():
    strings, inverse = dedupe(["The Paris", "Lyon", "paris.", "$18", "18.0"])
    assert strings == ["paris", "lyon", "18"]
    assert inverse.tolist() == [0, 1, 0, 2, 2]


def test_a_backend_normalises_each_text_once_across_its_calls_within_its_bound(monkeypatch, tmp_path):
    import core.surrogate.semantic.base as base
    from core.surrogate.semantic import ItemTexts

    normalised: list[str] = []
    monkeypatch.setattr(base, "normalize", lambda text: normalised.append(text) or text.lower())
    backend = get_backend("exact", cache_dir=tmp_path)
    groups = [ItemTexts("q", [f"A{i % 7}", f"B{i % 5}", f"A{i % 7}"], f"B{i % 3}") for i in range(50)]
    first = backend.cluster(groups[:25])
    assert [c.tolist() for c in backend.cluster(groups[:25])] == [c.tolist() for c in first]
    backend.cluster(groups[25:])
    assert sorted(normalised) == sorted({t for g in groups for t in [*g.samples, g.target]})
    monkeypatch.setattr(base, "NORMAL_FORM_CHARS", 10)  # past the bound, the next call starts afresh
    normalised.clear()
    backend.cluster(groups[:1])
    assert sorted(normalised) == ["A0", "B0"]


def test_device_resolution():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="unknown device"):
        resolve_device("tpu")


def test_models_take_the_cpu_threads_the_configuration_gives(monkeypatch):
    from core import config

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv(config.TORCH_THREADS, "1")
        resolve_device("cpu")
        assert torch.get_num_threads() == 1
        monkeypatch.setenv(config.TORCH_THREADS, "3")
        resolve_device("auto")
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_without_a_device_is_an_input_error():
    with pytest.raises(InputError, match="no CUDA device"):
        resolve_device("cuda")
    with pytest.raises(InputError, match="no CUDA device"):  # a numbered device, as the worker's --device takes
        resolve_device("cuda:1")


def test_the_sampler_places_its_model_through_the_one_resolve_device():
    """One name, one meaning: the local sampler takes its device (and the CPU threads) from semantic.base."""
    from core.surrogate import sample

    assert sample.resolve_device is resolve_device


def test_representative_clustering_batches_across_items_and_reports_progress():
    seen: list[list[Query]] = []
    progress = []

    def decide(queries):
        seen.append(queries)
        # string j joins representative 0 when j is even
        return [q.representatives[0] if q.string % 2 == 0 else None for q in queries]

    classes = cluster_by_representatives([4, 1, 3], decide, lambda d, t: progress.append((d, t)))
    assert [c.tolist() for c in classes] == [[0, 1, 0, 2], [0], [0, 1, 0]]
    # one call per round (string 1, 2, 3), each with the items still having a string
    assert [[q.item for q in step] for step in seen] == [[0, 2], [0, 2], [0]]
    assert seen[2][0].representatives == [0, 1]
    assert progress[-1] == (8, 8)


@pytest.mark.parametrize("backend", ["embedding", "nli"])
def test_a_batch_size_below_one_is_an_input_error(backend, tmp_path):
    with pytest.raises(InputError, match="batch size must be at least 1, got 0"):
        get_backend(backend, batch_size=0, device="cpu", cache_dir=tmp_path)


def test_one_line_error_text():
    assert short_error(ValueError("a\n  b")) == "a b"
    assert len(short_error(ValueError("x" * 500))) == 200


def test_a_folder_that_is_not_a_model_fails_at_once_without_walking_it(tmp_path, monkeypatch):
    import os

    from core.surrogate.semantic.base import model_fingerprint

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "big.bin").write_bytes(b"x")
    walked = []
    monkeypatch.setattr(os, "walk", lambda *a, **k: walked.append(a) or iter(()))
    with pytest.raises(InputError, match="is not a model"):
        model_fingerprint(str(tmp_path))
    assert walked == []
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.undo()
    assert model_fingerprint(str(tmp_path)) == model_fingerprint(str(tmp_path))  # a model folder: fingerprinted
