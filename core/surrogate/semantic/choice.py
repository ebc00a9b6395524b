"""Which semantic backend suits a pool, from the length of its answers (issue 28).

Short answers (a number, a name, a letter, yes or no) mean the same exactly when their normalised forms are
equal (core.surrogate.normalize), so the ``exact`` backend clusters them right, at once and with no model.
Answers of a sentence or more can say the same thing in other words, which only a model sees: the
``embedding`` backend (a small sentence-embedding model, cosine similarity) clusters those by meaning at a
fraction of the ``nli`` backend's cost (two entailment checks per pair of answers).

The rule: ``exact`` when at least SHORT_SHARE of the answers have at most SHORT_WORDS words, else
``embedding``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.inputs.io import Inputs

SHORT_WORDS = 4
"""The most words of an answer the rule calls short ("42", "Paris", "(B) 3.5 km")."""
SHORT_SHARE = 0.8
"""The share of short answers at which exact matching is the default."""
DESCRIPTIONS = {
    "exact": "exact: answers are the same when equal after normalising (case, spaces, punctuation); no model, "
    "instant; right for short answers",
    "embedding": "embedding: the same when a sentence-embedding model finds them close (cosine similarity); a "
    "small local model; for answers of a sentence or more",
    "nli": "nli: the same when an entailment model finds that each implies the other; the most careful and "
    "by far the slowest",
}
"""What each backend judges the same, for the person choosing one."""


@dataclass(frozen=True)
class BackendChoice:
    backend: str
    """core.surrogate.semantic.BACKENDS: "exact" or "embedding"."""
    reason: str
    """Why, in a sentence for the person setting up the project."""


def choose_backend(answers: Iterable[str]) -> BackendChoice:
    """The backend for answers like ``answers`` (the surrogate's samples, or the target's responses without
    them) by the module's rule; ``exact`` when there is no answer to judge by."""
    lengths = [len(str(a).split()) for a in answers]
    if not lengths:
        return BackendChoice("exact", "no answers to judge by yet: exact matching, the fastest")
    short = sum(n <= SHORT_WORDS for n in lengths) / len(lengths)
    median = sorted(lengths)[len(lengths) // 2]
    if short >= SHORT_SHARE:
        return BackendChoice(
            "exact",
            f"{short:.0%} of the answers have at most {SHORT_WORDS} words (median {median}): short answers mean "
            "the same when they are equal once normalised, so exact matching is right and needs no model",
        )
    return BackendChoice(
        "embedding",
        f"only {short:.0%} of the answers have at most {SHORT_WORDS} words (median {median}): longer answers can "
        "say the same in other words, which a sentence-embedding model sees and exact matching does not",
    )


def choose_backend_for(inputs: Inputs) -> BackendChoice:
    """``choose_backend`` on a pool's surrogate samples, or on its target responses when it has none yet
    (the samples are to be drawn): the two are answers to the same prompts."""
    answers = inputs.samples["sample"] if len(inputs.samples) else inputs.pool["response"]
    return choose_backend(answers)
