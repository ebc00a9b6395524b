"""The semantic backend a pool's answers call for (core.surrogate.semantic.choice)."""

from __future__ import annotations

from core.surrogate.semantic import BACKENDS
from core.surrogate.semantic.choice import SHORT_WORDS, choose_backend


def test_short_answers_get_exact_matching_and_sentences_an_embedding_model():
    short = choose_backend(["42", "41", "Paris", "(B)", "12 km"] * 10)
    assert short.backend == "exact" and "at most 4 words" in short.reason
    sentences = choose_backend(["The capital of France is Paris, on the Seine."] * 8 + ["Paris"] * 2)
    assert sentences.backend == "embedding" and "median 9" in sentences.reason
    assert {short.backend, sentences.backend} <= set(BACKENDS)


def test_the_rule_at_its_edge_and_without_answers():
    words = " ".join(["w"] * SHORT_WORDS)
    assert choose_backend([words] * 8 + [words + " more"] * 2).backend == "exact"  # 80% short
    assert choose_backend([words] * 7 + [words + " more"] * 3).backend == "embedding"
    assert choose_backend([]).backend == "exact"


def test_a_project_created_without_a_backend_gets_the_one_its_answers_call_for(tmp_path):
    """The API and the CLI create projects through core.services.project.create_project: without a backend they
    took exact matching for any pool, and a pool of free-text answers made one stratum (a manager's review)."""
    import json

    from core.services.project import create_project
    from core.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 'choice.db'}")

    def project(answer: str, settings: dict) -> str:
        pool = "".join(json.dumps({"id": f"q{k}", "prompt": "p", "response": answer}) + "\n" for k in range(10))
        samples = "".join(json.dumps({"id": f"q{k}", "sample": answer}) + "\n" for k in range(10) for _ in range(3))
        files = ("pool.jsonl", pool.encode()), ("samples.jsonl", samples.encode())
        pid = create_project(store, f"P{len(store.projects())}", *files, settings, start=False)
        return store.project(pid).settings.backend

    sentence = "The capital of France is Paris, on the Seine."
    assert project(sentence, {}) == "embedding" and project("Paris", {}) == "exact"
    assert project(sentence, {"backend": "exact"}) == "exact"  # a choice given is kept
