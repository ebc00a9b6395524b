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
