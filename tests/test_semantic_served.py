"""The embedding backend with its embeddings from a real OpenAI-compatible server on 127.0.0.1
(core.testing.embedding_server: FastAPI serving all-MiniLM-L6-v2): the same classes as the local backend,
batched requests, retries, the same cache, clear errors; `prepare --backend embedding --api-base URL`; a
project whose settings name the server (`embedding_server`, chosen on the Projects page) prepares as the local backend does."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.surrogate.semantic import get_backend
from core.surrogate.semantic.served import ServedEmbeddingBackend
from core.testing.embedding_server import MODEL_NAME, fail_next, served, stats
from core.testing.local_server import free_port
from tests.test_semantic_embedding import GROUPS  # the same texts the local backend is tested on

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data" / "app"


@pytest.fixture(scope="module")
def url():
    pytest.importorskip("fastapi")
    with served() as base:
        yield base


def test_served_embeddings_cluster_as_the_local_model_batched_and_cached(url, tmp_path):
    before = stats(url)
    backend = get_backend("embedding", api_base=url, model=MODEL_NAME, cache_dir=tmp_path, batch_size=2)
    result = backend.cluster(GROUPS)
    local = get_backend("embedding", cache_dir=tmp_path / "local", device="cpu").cluster(GROUPS)
    assert [r.tolist() for r in result] == [r.tolist() for r in local]
    after = stats(url)
    assert after["texts"] - before["texts"] == backend.model_calls == 6  # each distinct string once
    assert after["requests"] - before["requests"] == 3  # in batches of 2
    again = get_backend("embedding", api_base=url, model=MODEL_NAME, cache_dir=tmp_path)
    assert [r.tolist() for r in again.cluster(GROUPS)] == [r.tolist() for r in result]
    assert again.model_calls == 0 and stats(url)["requests"] == after["requests"]  # read from the cache


def test_a_failing_server_is_retried(url, tmp_path):
    fail_next(url, 2)
    backend = ServedEmbeddingBackend(api_base=url, model=MODEL_NAME, cache_dir=tmp_path, max_retries=3)
    backend.cluster(GROUPS[:1])
    assert stats(url)["failed"] >= 2 and backend.model_calls == 3  # paris, its paris france, lyon


def test_a_rate_limit_after_the_retries_says_what_to_change(url, tmp_path):
    fail_next(url, 1, status=429)
    backend = ServedEmbeddingBackend(api_base=url, model=MODEL_NAME, cache_dir=tmp_path, max_retries=0)
    with pytest.raises(InputError, match="limits the request rate") as error:
        backend.cluster(GROUPS[:1])
    assert "--batch-size" in str(error.value)


def test_a_wrong_model_name_or_no_server_is_a_clear_error(url, tmp_path):
    with pytest.raises(InputError, match="answered HTTP 404") as error:
        ServedEmbeddingBackend(api_base=url, model="nope", cache_dir=tmp_path, max_retries=0).cluster(GROUPS[:1])
    assert "/v1/models" in str(error.value)
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(InputError, match="no answer from the server"):
        ServedEmbeddingBackend(api_base=nowhere, model=MODEL_NAME, cache_dir=tmp_path, max_retries=0).cluster(GROUPS)
    with pytest.raises(InputError, match="needs the name of the model"):
        get_backend("embedding", api_base=url)
    with pytest.raises(InputError, match="runs no server"):
        get_backend("nli", api_base=url)


def test_prepare_with_an_embedding_server_gives_the_local_backends_items(url, tmp_path):
    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    common = ["prepare", "--pool", pool, "--samples", samples, "--backend", "embedding", "-q"]
    server = [
        "--api-base",
        url,
        "--model",
        MODEL_NAME,
        "--cache-dir",
        str(tmp_path / "a"),
        "--out",
        str(tmp_path / "a.csv"),
    ]
    assert main([*common, *server]) == 0
    assert main([*common, "--device", "cpu", "--cache-dir", str(tmp_path / "b"), "--out", str(tmp_path / "b.csv")]) == 0
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_series_equal(a["n_clusters"], b["n_clusters"])
    pd.testing.assert_series_equal(a["stratum"], b["stratum"])


def test_a_project_takes_its_embeddings_from_an_allowed_server_as_the_local_backend(url, tmp_path, monkeypatch):
    from core.jobs.preparation_job import worker_backend
    from core.services.project import create_project, start_preparation
    from core.store import Store

    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", url)
    store = Store.open(f"sqlite:///{tmp_path / 'served.db'}")
    uploads = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    items = {}
    for name, settings in {
        "served": {"backend": "embedding", "model": MODEL_NAME, "embedding_server": url},
        "local": {"backend": "embedding"},
    }.items():
        monkeypatch.setenv("ACTIVEGRADE_CACHE_DIR", str(tmp_path / name))
        worker_backend.cache_clear()
        before = stats(url)["requests"]
        pid = create_project(store, name, *uploads, settings, start=False)
        start_preparation(store, pid, wait=True)
        assert store.project(pid).status == "ready", store.project(pid).error
        assert (stats(url)["requests"] > before) == (name == "served")
        items[name] = store.load_items(pid)
    worker_backend.cache_clear()
    pd.testing.assert_series_equal(items["served"]["n_clusters"], items["local"]["n_clusters"])
    pd.testing.assert_series_equal(items["served"]["stratum"], items["local"]["stratum"])
