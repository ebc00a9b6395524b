"""Preparation progress: the stages a backend reports and what the project row says of them."""

from __future__ import annotations

import numpy as np

from core.jobs import preparation_job
from core.surrogate.semantic.base import EMBEDDING, LOADING_MODEL
from core.surrogate.semantic.embedding import EmbeddingBackend


class StubModel:
    """Stands in for a SentenceTransformer: one fixed unit vector per string."""

    def encode(self, strings, **_options):
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(strings), 1))


def test_embedding_reports_every_call_of_the_model(tmp_path):
    backend = EmbeddingBackend(model="stub", cache_dir=tmp_path, batch_size=4)
    backend._model = StubModel()
    stages = []
    backend.on_stage = lambda what, done, total: stages.append((what, done, total))
    vectors = backend.embed([f"text {k}" for k in range(10)])
    assert vectors.shape == (10, 2)
    assert stages[0] == (EMBEDDING, 0, 10) and stages[-1] == (EMBEDDING, 10, 10)
    done = [d for _, d, _ in stages]
    assert done == sorted(done) and len(stages) >= 2


def test_loading_the_model_is_a_stage(tmp_path, monkeypatch):
    import sentence_transformers

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", lambda *a, **k: StubModel())
    backend = EmbeddingBackend(model="stub", cache_dir=tmp_path, device="cpu")
    stages = []
    backend.on_stage = lambda what, done, total: stages.append(what)
    backend.embed(["a", "b"])
    assert stages[0] == LOADING_MODEL and stages[1:] == [EMBEDDING, EMBEDDING]


class Recorder:
    def __init__(self) -> None:
        self.messages: list[tuple[int, int, str]] = []

    def set_progress(self, project_id, done, total, message=""):
        self.messages.append((done, total, message))

    def heartbeat(self, project_id):
        self.messages.append((None, None, "heartbeat"))


def test_the_report_writes_each_new_stage_at_once_and_counts_at_most_twice_a_second(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(preparation_job.time, "monotonic", lambda: clock[0])
    store = Recorder()
    report = preparation_job.PreparationReport(store, 1)
    report.stage(LOADING_MODEL, 0, 0)
    report.stage(EMBEDDING, 0, 500)
    report.stage(EMBEDDING, 100, 500)  # the same instant: not written again
    clock[0] += preparation_job.PROGRESS_EVERY_S
    report.stage(EMBEDDING, 200, 500)
    report.stage(EMBEDDING, 500, 500)  # the last count always
    report.clustering(0, 40)
    report.clustering(40, 40)
    assert [m for _, _, m in store.messages] == [
        "loading the model",
        "embedding the texts: 0 of 500 texts",
        "embedding the texts: 200 of 500 texts",
        "embedding the texts: 500 of 500 texts",
        "clustering surrogate answers: 0 of 40 items",
        "clustering surrogate answers: 40 of 40 items",
    ]


def test_ticks_say_how_long_a_stage_without_counts_runs_and_keep_the_heartbeat(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(preparation_job.time, "monotonic", lambda: clock[0])
    store = Recorder()
    report = preparation_job.PreparationReport(store, 1)
    report.stage(LOADING_MODEL, 0, 0)
    clock[0] += 3
    report.tick()
    report.clustering(10, 40)
    clock[0] += 1
    report.tick()  # counts were written a second ago: nothing to add
    clock[0] += preparation_job.HEARTBEAT_S
    report.tick()
    assert [m for _, _, m in store.messages] == [
        "loading the model",
        "loading the model: 3 s",
        "clustering surrogate answers: 10 of 40 items",
        "heartbeat",
    ]
