import numpy as np
import pytest

from core.errors import InputError
from core.surrogate.semantic import ItemTexts
from core.surrogate.semantic.base import Backend, UniqueTexts
from core.surrogate.semantic.cache import ResultCache


class CountingBackend(Backend):
    """Every distinct normalised string its own class; counts the strings it is asked about."""

    name = "counting"
    uses_question = True

    def __init__(self, cache_dir, version="m1"):
        super().__init__(cache_dir=cache_dir)
        self.version = version

    def identity(self):
        return (*super().identity(), self.version)

    def _classes(self, items: list[UniqueTexts], progress):
        self.model_calls += sum(len(item.strings) for item in items)
        return [np.arange(len(item.strings)) for item in items]


GROUPS = [ItemTexts("q1", ["Paris", "paris.", "Lyon"], "Paris"), ItemTexts("q2", ["1", "2"], "3")]


def test_second_run_makes_zero_calls_and_gives_the_same_result(tmp_path):
    first = CountingBackend(tmp_path)
    expected = first.cluster(GROUPS)
    assert first.model_calls == 2 + 3  # deduplicated before the "model" sees them
    again = CountingBackend(tmp_path)
    progress = []
    result = again.cluster(GROUPS, progress=lambda d, t: progress.append((d, t)))
    assert again.model_calls == 0
    assert [r.tolist() for r in result] == [e.tolist() for e in expected]
    assert progress == [(2, 2)]


def test_only_uncached_items_are_computed(tmp_path):
    CountingBackend(tmp_path).cluster(GROUPS[:1])
    backend = CountingBackend(tmp_path)
    backend.cluster(GROUPS)
    assert backend.model_calls == 3


def test_cache_key_includes_model_and_question(tmp_path):
    CountingBackend(tmp_path).cluster(GROUPS)
    other_model = CountingBackend(tmp_path, version="m2")
    other_model.cluster(GROUPS)
    assert other_model.model_calls == 5
    other_question = CountingBackend(tmp_path)
    other_question.cluster([ItemTexts("another question", ["1", "2"], "3")])
    assert other_question.model_calls == 3


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_CACHE_DIR", str(tmp_path / "env"))
    CountingBackend(None).cluster(GROUPS)
    assert (tmp_path / "env" / "semantic.sqlite").exists()


def test_unusable_cache_dir_is_an_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(InputError, match="cache"):
        ResultCache(blocker / "sub")


def test_cache_round_trip(tmp_path):
    cache = ResultCache(tmp_path)
    cache.put_many({"k": np.array([0, 1, 1])})
    assert cache.get_many(["k", "missing"])["k"].tolist() == [0, 1, 1]
    assert "missing" not in cache.get_many(["missing"])


def test_identical_items_in_one_run_are_computed_once(tmp_path):
    backend = CountingBackend(tmp_path)
    result = backend.cluster([GROUPS[0], GROUPS[1], GROUPS[0]])
    assert backend.model_calls == 5
    assert result[0].tolist() == result[2].tolist()


class Interrupted(Exception):
    pass


class FlakyBackend(CountingBackend):
    """Saves every item at once and fails on its third part, like a run stopped midway."""

    items_per_save = 1

    def __init__(self, cache_dir, fail_at=None):
        super().__init__(cache_dir)
        self.parts, self.fail_at = 0, fail_at

    def _classes(self, items, progress):
        self.parts += 1
        if self.parts == self.fail_at:
            raise Interrupted
        result = super()._classes(items, progress)
        if progress:
            progress(1, 1)
        return result


def test_an_interrupted_run_keeps_finished_parts_and_progress_counts_items(tmp_path):
    groups = [ItemTexts(f"q{i}", ["a", "b"], "a") for i in range(4)]
    with pytest.raises(Interrupted):
        FlakyBackend(tmp_path, fail_at=3).cluster(groups)
    resumed = FlakyBackend(tmp_path)
    progress = []
    resumed.cluster(groups, progress=lambda d, t: progress.append((d, t)))
    assert resumed.parts == 2  # the two items finished before the failure come from the cache
    assert progress == [(1, 2), (2, 2)]


def test_a_read_only_cache_warns_and_the_work_goes_on(tmp_path, monkeypatch):
    import sqlite3

    import core.surrogate.semantic.cache as cache_module
    from core.surrogate.semantic.cache import CacheNotWritten

    CountingBackend(tmp_path).cluster(GROUPS[:1])  # an existing cache
    connect = sqlite3.connect
    monkeypatch.setattr(  # the file as a read-only mount or another user's file gives it (root ignores chmod)
        cache_module.sqlite3, "connect", lambda path, **kw: connect(f"file:{path}?mode=ro", uri=True, **kw)
    )
    backend = CountingBackend(tmp_path)
    with pytest.warns(CacheNotWritten, match="going on without caching"):
        result = backend.cluster(GROUPS)
    assert backend.model_calls == 3  # only the uncached item (3 strings) was computed; all results come back
    assert [r.tolist() for r in result] == [[0, 0, 1, 0], [0, 1, 2]]


class StubEncoder:
    """Stands in for a SentenceTransformer: a unit vector per string, fixed by the string; counts strings."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, strings, **_options):
        self.encoded += strings
        angles = np.array([sum(map(ord, s)) % 360 for s in strings], dtype=np.float32) * np.pi / 180
        return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def stub_embedding(cache_dir, threshold: float):
    from core.surrogate.semantic.embedding import EmbeddingBackend

    backend = EmbeddingBackend(model="stub", threshold=threshold, cache_dir=cache_dir, device="cpu")
    backend._model = StubEncoder()
    return backend


def test_embeddings_are_stored_once_per_cache_directory_and_reused_at_another_threshold(tmp_path):
    first = stub_embedding(tmp_path / "shared", 0.9)
    first.cluster(GROUPS)
    assert first.model_calls == 5 and sorted(first._model.encoded) == ["1", "2", "3", "lyon", "paris"]
    other = stub_embedding(tmp_path / "shared", 0.2)  # a new run (a fresh memo), another threshold
    result = other.cluster(GROUPS)
    assert other.model_calls == 0 and other._model.encoded == []  # clustered again, nothing embedded
    fresh = stub_embedding(tmp_path / "fresh", 0.2)
    assert [r.tolist() for r in result] == [r.tolist() for r in fresh.cluster(GROUPS)]
    assert fresh.model_calls == 5


def test_embedding_cache_round_trip_keeps_float32_exactly(tmp_path):
    from core.surrogate.semantic.cache import EmbeddingCache, content_key

    vector = np.array([0.1, 1 / 3, -2.5e-8], dtype=np.float32)
    EmbeddingCache(tmp_path, ("model a",)).store({"paris": vector})
    back = EmbeddingCache(tmp_path, ("model a",)).vectors(["paris", "lyon"])
    assert list(back) == ["paris"] and back["paris"].dtype == np.float32
    assert back["paris"].tobytes() == vector.tobytes()
    assert EmbeddingCache(tmp_path, ("model b",)).vectors(["paris"]) == {}  # another model's are its own
    assert ResultCache(tmp_path).get_many([content_key(("model a",), "paris")]) == {}  # a table of its own


class Crash(Exception):
    pass


def test_a_run_killed_mid_way_keeps_the_embeddings_of_its_finished_calls(tmp_path, monkeypatch):
    from core.surrogate.semantic import embedding

    strings = [f"answer {k}" for k in range(40)]
    first = stub_embedding(tmp_path, 0.9)
    encode = first._model.encode

    def once(part, **options):  # the first call of the model succeeds, the second dies
        if first._model.encoded:
            raise Crash
        return encode(part, **options)

    first._model.encode = once
    monkeypatch.setattr(embedding, "REPORT_EVERY_S", 0.0)  # every call one string after the first
    with pytest.raises(Crash):
        first._vectors(strings)
    assert len(first._model.encoded) == embedding.FIRST_CALL
    second = stub_embedding(tmp_path, 0.9)
    vectors = second._vectors(strings)
    assert second.model_calls == 40 - embedding.FIRST_CALL and second._model.encoded == strings[embedding.FIRST_CALL :]
    fresh = stub_embedding(tmp_path / "fresh", 0.9)
    assert vectors.tobytes() == fresh._vectors(strings).tobytes()
