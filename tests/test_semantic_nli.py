"""The NLI backend, on tiny NLI models this test builds and saves, and with a stubbed scorer."""

import numpy as np
import pytest

from core.errors import InputError
from core.surrogate.semantic import ItemTexts, get_backend
from core.surrogate.semantic.nli import NLIBackend
from core.testing.tiny_nli import MNLI_LABELS, build_tiny_nli_model

REORDERED_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


GROUPS = [
    ItemTexts("Capital of France?", ["Paris", "paris.", "Lyon", "Nice", "Paris"], "Paris"),
    ItemTexts("2 + 2?", ["4", "four", "4.0"], "5"),
]
UNIQUE = [3, 3]  # distinct normalised strings per item, target included: paris lyon nice; 4 four 5


def pairs_for(classes_seen: list[int]) -> int:
    """Pairs scored when each distinct string is compared, both ways, with every class existing at its turn."""
    return 2 * sum(classes_seen)


@pytest.mark.parametrize("id2label", [MNLI_LABELS, REORDERED_LABELS])
def test_labels_read_from_config_and_always_entailing_model_gives_one_class(tmp_path, id2label):
    path = build_tiny_nli_model(tmp_path / "m", id2label, always="entailment")
    backend = get_backend("nli", model=path, cache_dir=tmp_path / "cache", device="cpu")
    result = backend.cluster(GROUPS)
    entail = [k for k, v in id2label.items() if v.lower() == "entailment"][0]
    assert backend.labels["entailment"] == entail
    assert all(set(r.tolist()) == {0} for r in result)
    # every later string meets one class: 2 directions x 1 representative each
    assert backend.model_calls == sum(pairs_for([1] * (n - 1)) for n in UNIQUE)


def test_never_entailing_model_gives_one_class_per_distinct_string(tmp_path):
    path = build_tiny_nli_model(tmp_path / "m", MNLI_LABELS, always="contradiction")
    backend = get_backend("nli", model=path, cache_dir=tmp_path / "cache", device="cpu")
    paris, four = backend.cluster(GROUPS)
    assert paris.tolist() == [0, 0, 1, 2, 0, 0]
    assert four.tolist() == [0, 1, 0, 2]
    # string j meets j classes: calls grow with strings x classes
    assert backend.model_calls == sum(pairs_for(list(range(1, n))) for n in UNIQUE)


@pytest.mark.parametrize("kind", ["bert", "deberta-v2"])
def test_random_model_is_deterministic_batch_independent_and_cached(tmp_path, kind):
    path = build_tiny_nli_model(tmp_path / "m", MNLI_LABELS, kind=kind)
    small = get_backend("nli", model=path, cache_dir=tmp_path / "c1", device="cpu", batch_size=1)
    large = get_backend("nli", model=path, cache_dir=tmp_path / "c2", device="cpu", batch_size=64)
    expected = [r.tolist() for r in small.cluster(GROUPS)]
    assert [r.tolist() for r in large.cluster(GROUPS)] == expected
    assert small.model_calls == large.model_calls > 0
    again = get_backend("nli", model=path, cache_dir=tmp_path / "c1", device="cpu")
    assert [r.tolist() for r in again.cluster(GROUPS)] == expected
    assert again.model_calls == 0


def test_threshold_on_entailment_probability(tmp_path):
    path = build_tiny_nli_model(tmp_path / "m", MNLI_LABELS, always="entailment")
    lenient = get_backend("nli", model=path, threshold=0.5, cache_dir=tmp_path / "c1", device="cpu")
    strict = get_backend("nli", model=path, threshold=1.0, cache_dir=tmp_path / "c2", device="cpu")
    assert len(set(lenient.cluster(GROUPS)[0].tolist())) == 1
    assert len(set(strict.cluster(GROUPS)[0].tolist())) == 3  # P(entailment) < 1: paris, lyon, nice apart


def test_model_without_entailment_label_is_an_input_error(tmp_path):
    path = build_tiny_nli_model(tmp_path / "m", {0: "negative", 1: "neutral", 2: "positive"})
    backend = get_backend("nli", model=path, cache_dir=tmp_path, device="cpu")
    with pytest.raises(InputError, match="entail"):
        backend.cluster(GROUPS)


def test_missing_model_is_an_input_error(tmp_path):
    backend = get_backend("nli", model=str(tmp_path / "absent"), cache_dir=tmp_path, device="cpu")
    with pytest.raises(InputError, match="absent"):
        backend.cluster(GROUPS)


class StubNLI(NLIBackend):
    """Entailment decided by a rule on the answer texts; records what it was asked."""

    def __init__(self, rule, **kwargs):
        super().__init__(model="stub", device="cpu", **kwargs)
        self.rule = rule
        self.asked: list[tuple[str, str]] = []

    def entails(self, premises, hypotheses):
        self.asked += list(zip(premises, hypotheses))
        self.model_calls += len(premises)
        return np.array([self.rule(p, h) for p, h in zip(premises, hypotheses)], dtype=bool)


def test_bidirectional_entailment_and_question_prepended(tmp_path):
    # "x" entails "x y" but not the reverse: one-way entailment must not merge them
    def rule(premise, hypothesis):
        return hypothesis.split(" ", 1)[1] in premise.split(" ", 1)[1]

    backend = StubNLI(rule, cache_dir=tmp_path)
    (classes,) = backend.cluster([ItemTexts("Q?", ["big cat", "cat", "big cat", "dog"], "cat")])
    assert classes.tolist() == [0, 1, 0, 2, 1]
    assert all(p.startswith("Q? ") and h.startswith("Q? ") for p, h in backend.asked)
    # cat meets {big cat}; dog meets {big cat, cat}; target cat is a duplicate: 2 x (1 + 2)
    assert backend.model_calls == 6


def test_joins_the_first_matching_class_not_the_latest(tmp_path):
    backend = StubNLI(lambda p, h: True if "any" in p + h else p == h, cache_dir=tmp_path)
    (classes,) = backend.cluster([ItemTexts("", ["a1", "b2", "any"], "b2")])
    assert classes.tolist() == [0, 1, 0, 1]
