"""The `nli` backend: two answers mean the same when each entails the other.

Any Hugging Face sequence-classification NLI model, by name or path (the
DeBERTa-MNLI family of Kuhn et al. 2023 and Farquhar et al. 2024). The
entailment label is looked up in the model's `config.id2label`. As in those
papers the question is prepended to both answers ("<question> <answer>"), and
each answer is compared only with one representative of each existing class
(core.surrogate.semantic.base.cluster_by_representatives), in both directions, so the
model scores at most 2 x (distinct answers) x (classes) pairs per item rather
than a number growing with the square of the samples; `model_calls` counts the
pairs scored. An answer joins the first class (in order of creation) whose
representative it entails and is entailed by: entailment is the most probable
label (the papers' strict criterion) or, when a threshold is given, the
entailment probability reaches it. The model sees normalised answers
(core.surrogate.normalize), so answers that normalise alike are scored once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.errors import InputError
from core.surrogate.semantic.base import (
    LOADING_MODEL,
    Backend,
    Progress,
    Query,
    UniqueTexts,
    cluster_by_representatives,
    model_fingerprint,
    resolve_device,
    short_error,
)

DEFAULT_MODEL = "microsoft/deberta-large-mnli"


def label_index(id2label: dict, name: str) -> int:
    """Index of the label whose name starts with `name` (case-insensitive), from config.id2label."""
    matches = [int(i) for i, label in id2label.items() if str(label).lower().startswith(name)]
    if len(matches) != 1:
        raise InputError(
            f"the model's labels {dict(id2label)} have no single '{name}' label",
            fix="use an NLI model whose config.id2label names entailment, neutral and contradiction",
        )
    return matches[0]


class NLIBackend(Backend):
    name = "nli"
    uses_question = True
    items_per_save = 2048  # NLI is slow: an interrupted run keeps what it finished

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        threshold: float | None = None,
        device: str = "auto",
        cache_dir: str | Path | None = None,
        batch_size: int = 32,
    ) -> None:
        super().__init__(cache_dir=cache_dir)
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise InputError(
                f"entailment probability threshold {threshold} is outside [0, 1]", fix="use e.g. 0.5, or no threshold"
            )
        self.model_name = model
        self.threshold = threshold
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self._loaded = None

    def identity(self) -> tuple:
        return (*super().identity(), model_fingerprint(self.model_name), self.threshold)

    def _load(self):
        """(tokenizer, model, entailment index, contradiction index), loaded on first use."""
        if self._loaded is None:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            try:
                self._stage(LOADING_MODEL)
                tokenizer = AutoTokenizer.from_pretrained(self.model_name)
                model = AutoModelForSequenceClassification.from_pretrained(self.model_name)
            except (OSError, ValueError) as error:
                raise InputError(
                    f"cannot load NLI model '{self.model_name}' ({short_error(error)})",
                    fix="give the path of a local Hugging Face NLI model folder or a model name in the local Hugging Face cache "
                    "(a worker downloads none unless the operator sets ACTIVEGRADE_HUB_DOWNLOADS=1)",
                ) from None
            id2label = model.config.id2label
            indices = label_index(id2label, "entail"), label_index(id2label, "contradict")
            model = model.to(self.device).eval()
            if self.device == "cuda":
                model = model.half()
            self._loaded = (tokenizer, model, *indices)
        return self._loaded

    @property
    def labels(self) -> dict[str, int]:
        """Indices of the entailment and contradiction labels in the model's output."""
        _, _, entailment, contradiction = self._load()
        return {"entailment": entailment, "contradiction": contradiction}

    def probabilities(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """Softmax label probabilities of each (premise, hypothesis) pair, one row each.

        Pairs are sorted by length into batches of `batch_size` to limit padding;
        counted in `model_calls`.
        """
        import torch

        tokenizer, model, _, _ = self._load()
        order = np.argsort([len(p) + len(h) for p, h in zip(premises, hypotheses)], kind="stable")
        out = np.empty((len(premises), model.config.num_labels), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                encoded = tokenizer(
                    [premises[i] for i in batch],
                    [hypotheses[i] for i in batch],
                    padding=True,
                    truncation=True,
                    return_tensors="pt",
                ).to(self.device)
                out[batch] = torch.softmax(model(**encoded).logits.float(), dim=-1).cpu().numpy()
        self.model_calls += len(premises)
        return out

    def entails(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """Whether each premise entails its hypothesis (argmax, or probability >= threshold)."""
        if not premises:
            return np.zeros(0, dtype=bool)
        probabilities = self.probabilities(premises, hypotheses)
        entailment = self.labels["entailment"]
        if self.threshold is None:
            return probabilities.argmax(axis=1) == entailment
        return probabilities[:, entailment] >= self.threshold

    def _classes(self, items: list[UniqueTexts], progress: Progress | None) -> list[np.ndarray]:
        texts = [[f"{item.question} {s}".strip() for s in item.strings] for item in items]

        def decide(queries: list[Query]) -> list[int | None]:
            premises, hypotheses = [], []
            for q in queries:
                answer = texts[q.item][q.string]
                for rep in q.representatives:
                    other = texts[q.item][rep]
                    premises += [answer, other]
                    hypotheses += [other, answer]
            both = self.entails(premises, hypotheses).reshape(-1, 2).all(axis=1)
            chosen: list[int | None] = []
            start = 0
            for q in queries:
                hits = np.flatnonzero(both[start : start + len(q.representatives)])
                chosen.append(q.representatives[hits[0]] if hits.size else None)
                start += len(q.representatives)
            return chosen

        return cluster_by_representatives([len(t) for t in texts], decide, progress)
