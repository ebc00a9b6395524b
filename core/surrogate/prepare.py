"""From validated inputs to the items table: classes, scores and stratum of every pool item.

The target's answer compared with the surrogate samples is the pool's `answer`
when the column exists and the cell is not empty, else its `response`.
Likelihood-weighted entropy normalises each sample's log-likelihood by its
length: the samples' `n_tokens` column when present (the surrogate's token
count, what the log-likelihood sums over), else the number of
whitespace-separated words, a tokenizer-free stand-in proportional to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from core.inputs import io
from core.inputs.targets import refuse_targets
from core.stats.proxy import PROXY_COLUMN, predicted_grade, proxy_strata, proxy_values
from core.stats.strata import DEFAULT_MIN_STRATUM_SIZE, DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, stratify
from core.surrogate.entropy import agreement, semantic_entropy, weighted_semantic_entropy
from core.surrogate.semantic import DEFAULT_BACKEND, Backend, ItemTexts, Progress, get_backend
from core.surrogate.semantic.base import Stage

if TYPE_CHECKING:
    from core.inputs.io import Inputs

SCORE_COLUMNS = list(io.SCORE_COLUMNS)


def target_answers(pool: pd.DataFrame) -> list[str]:
    """Per pool row, `answer` when present and non-empty, else `response`."""
    response = pool["response"].fillna("").astype(str)
    if "answer" not in pool.columns:
        return response.tolist()
    answer = pool["answer"].fillna("").astype(str)
    return answer.where(answer.str.strip() != "", response).tolist()


def sample_lengths(samples: pd.DataFrame) -> np.ndarray:
    """Length of each sample for likelihood normalisation: `n_tokens` if given, else word count
    (`str.split()`, counted once per distinct text: no list of words per sample is ever held)."""
    codes, distinct = pd.factorize(samples["sample"].astype(str))
    per_text = np.fromiter((len(text.split()) for text in distinct), dtype=float, count=len(distinct))
    words = per_text[codes]
    if "n_tokens" not in samples.columns:
        return words
    tokens = pd.to_numeric(samples["n_tokens"], errors="coerce").to_numpy(dtype=float)
    return np.where(np.isnan(tokens), words, tokens)


CHUNK_ITEMS = 50_000
"""Items clustered at once: the per-item Python objects (their texts, deduplicated strings, class ids) of one
chunk are alive at a time, so preparing 10^6 items x 10 samples stays within a few GB (benchmarks/scale.md).
The result does not depend on it: every item is clustered on its own strings."""


class SampleTexts:
    """Every sample's text, each distinct string held once (answers repeat: 10^7 samples of a 10^6-item pool
    hold at most 10^5 strings in benchmarks/scale.md's pools); ``texts[rows]`` is a list of those rows' texts."""

    def __init__(self, samples: pd.DataFrame) -> None:
        self.codes, distinct = pd.factorize(samples["sample"].astype(str))
        self.distinct = np.asarray(distinct, dtype=object)

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        return self.distinct[self.codes[rows]]


def sample_index(samples: pd.DataFrame) -> tuple[dict[str, np.ndarray], SampleTexts]:
    """Sample rows of each id, and every sample's text."""
    return samples.groupby("id", sort=False).indices, SampleTexts(samples)


def item_texts(inputs: Inputs) -> tuple[dict[str, np.ndarray], dict[int, ItemTexts]]:
    """Sample rows of each id, and the texts to cluster of every pool item that has samples, by pool position."""
    pool = inputs.pool
    rows_of, texts = sample_index(inputs.samples)
    questions = pool["prompt"].astype(str).tolist()
    targets = target_answers(pool)
    groups = {
        p: ItemTexts(questions[p], texts[rows_of[item_id]].tolist(), targets[p])
        for p, item_id in enumerate(pool["id"])
        if item_id in rows_of
    }
    return rows_of, groups


SCORES = ("n_samples", "n_clusters", "semantic_entropy", "semantic_entropy_weighted", "agreement")
"""What clustering gives each item, apart from its stratum (decided over the whole pool)."""


def prepare_items(
    inputs: Inputs,
    *,
    backend: str = DEFAULT_BACKEND,
    model: str | None = None,
    threshold: float | None = None,
    n_strata: int = DEFAULT_N_STRATA,
    stratify_by: str = DEFAULT_STRATIFY_BY,
    min_stratum_size: int = DEFAULT_MIN_STRATUM_SIZE,
    device: str = "auto",
    cache_dir: str | Path | None = None,
    batch_size: int | None = None,
    progress: Progress | None = None,
    stage: Stage | None = None,
    proxy: str | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
) -> pd.DataFrame:
    """One row per pool item, in pool order: the pool's columns plus SCORE_COLUMNS.

    `progress(done, total)` counts items clustered; `stage(what, done, total)` hears of the steps
    before (core.surrogate.semantic.base.Stage: loading the model, embedding texts).

    Items without samples get n_samples = n_clusters = 0, NaN scores and their
    own stratum (numbered last; see core.stats.strata). With `proxy`, the name of a
    numeric pool column, the strata are the proxy's (core.stats.proxy.proxy_strata)
    instead of `stratify_by`'s, and the items get its predicted grade in the
    column core.stats.proxy.PROXY_COLUMN, the column's name in `items.attrs["proxy"]`. With `api_base`, the
    embedding backend's embeddings come from that OpenAI-compatible server (core.surrogate.semantic.get_backend).

    The same as `stratified_items(inputs.pool, score_items(inputs, ...), ...)`, which is how a
    pool prepared in chunks (core.jobs.preparation_job) gives exactly this result.
    """
    refuse_targets(inputs.pool)  # several targets: core.surrogate.targets.prepare_targets
    if proxy is not None:
        proxy_values(inputs.pool, proxy)  # a bad proxy column is said before any model loads
    engine = get_backend(
        backend,
        model=model,
        threshold=threshold,
        device=device,
        cache_dir=cache_dir,
        batch_size=batch_size,
        api_base=api_base,
        api_key_env=api_key_env,
    )
    scores = score_items(inputs, engine, progress=progress, stage=stage)
    return stratified_items(
        inputs.pool, scores, n_strata=n_strata, stratify_by=stratify_by, min_stratum_size=min_stratum_size, proxy=proxy
    )


def score_items(
    inputs: Inputs,
    engine: Backend,
    *,
    progress: Progress | None = None,
    stage: Stage | None = None,
) -> dict[str, np.ndarray]:
    """SCORES of every pool row, each an array of the pool's length.

    Every item is scored from its own texts alone (an exact backend gives the same classes in any
    company; a model backend's batches differ with the chunk, see docs/workers.md), so the
    scores of consecutive chunks of the pool with their samples (core.inputs.io.load_inputs's ``rows``),
    concatenated, are those of the whole pool.
    """
    pool, samples = inputs.pool, inputs.samples
    engine.on_stage = stage
    rows_of, texts = sample_index(samples)
    ids = pool["id"].to_numpy()
    questions = pool["prompt"].astype(str).to_numpy()
    targets = np.asarray(target_answers(pool), dtype=object)
    logprobs = (
        pd.to_numeric(samples["logprob"], errors="coerce").to_numpy(dtype=float)
        if "logprob" in samples
        else np.full(len(samples), np.nan)
    )
    lengths = sample_lengths(samples)

    n = len(pool)
    scores = {name: np.full(n, np.nan) for name in ("semantic_entropy", "semantic_entropy_weighted", "agreement")}
    scores["n_samples"], scores["n_clusters"] = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    with_samples = [p for p in range(n) if ids[p] in rows_of]
    for first in range(0, len(with_samples), CHUNK_ITEMS):
        part = with_samples[first : first + CHUNK_ITEMS]
        groups = [ItemTexts(questions[p], texts[rows_of[ids[p]]].tolist(), targets[p]) for p in part]
        classes = engine.cluster(groups, _offset(progress, first, len(part), len(with_samples)))
        for p, item_classes in zip(part, classes):
            rows = rows_of[ids[p]]
            sample_classes, target_class = item_classes[:-1], item_classes[-1]
            scores["n_samples"][p] = sample_classes.size
            scores["n_clusters"][p] = np.unique(sample_classes).size
            scores["semantic_entropy"][p] = semantic_entropy(sample_classes)
            scores["semantic_entropy_weighted"][p] = weighted_semantic_entropy(
                sample_classes, logprobs[rows], lengths[rows]
            )
            scores["agreement"][p] = agreement(sample_classes, target_class)
    return {name: scores[name] for name in SCORES}


def stratified_items(
    pool: pd.DataFrame,
    scores: dict[str, np.ndarray],
    *,
    n_strata: int = DEFAULT_N_STRATA,
    stratify_by: str = DEFAULT_STRATIFY_BY,
    min_stratum_size: int = DEFAULT_MIN_STRATUM_SIZE,
    proxy: str | None = None,
) -> pd.DataFrame:
    """The items table: the pool's columns, the whole pool's SCORES, and the strata decided over all of them."""
    items = pool.copy()
    for name in SCORES:
        items[name] = scores[name]
    if proxy is None:
        items["stratum"] = stratify(
            scores["semantic_entropy"],
            scores["agreement"],
            n_strata=n_strata,
            by=stratify_by,
            min_size=min_stratum_size,
        )
    else:
        proxy_scores = proxy_values(pool, proxy)
        items[PROXY_COLUMN] = predicted_grade(proxy_scores)
        items["stratum"] = proxy_strata(proxy_scores, n_strata, min_stratum_size)
        items.attrs["proxy"] = proxy
    return items


def _offset(progress: Progress | None, start: int, size: int, total: int) -> Progress | None:
    """A chunk's progress (its own done of its own total) as items done out of the whole pool's ``total``."""
    if progress is None:
        return None
    return lambda done, of: progress(start + (size if of == 0 else round(done * size / of)), total)
