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

from core.stats.proxy import PROXY_COLUMN, predicted_grade, proxy_strata, proxy_values
from core.stats.strata import DEFAULT_MIN_STRATUM_SIZE, DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, stratify
from core.surrogate.entropy import agreement, semantic_entropy, weighted_semantic_entropy
from core.surrogate.semantic import Backend, ItemTexts, Progress, get_backend
from core.surrogate.semantic.base import Stage

if TYPE_CHECKING:
    from core.inputs.io import Inputs

SCORE_COLUMNS = ["n_samples", "n_clusters", "semantic_entropy", "semantic_entropy_weighted", "agreement", "stratum"]


def target_answers(pool: pd.DataFrame) -> list[str]:
    """Per pool row, `answer` when present and non-empty, else `response`."""
    response = pool["response"].fillna("").astype(str)
    if "answer" not in pool.columns:
        return response.tolist()
    answer = pool["answer"].fillna("").astype(str)
    return answer.where(answer.str.strip() != "", response).tolist()


def sample_lengths(samples: pd.DataFrame) -> np.ndarray:
    """Length of each sample for likelihood normalisation: `n_tokens` if given, else word count."""
    words = samples["sample"].astype(str).str.split().str.len().to_numpy(dtype=float)
    if "n_tokens" not in samples.columns:
        return words
    tokens = pd.to_numeric(samples["n_tokens"], errors="coerce").to_numpy(dtype=float)
    return np.where(np.isnan(tokens), words, tokens)


def item_texts(inputs: Inputs) -> tuple[dict[str, np.ndarray], dict[int, ItemTexts]]:
    """Sample rows of each id, and the texts to cluster of every pool item that has samples, by pool position."""
    pool, samples = inputs.pool, inputs.samples
    rows_of = samples.groupby("id", sort=False).indices
    texts = samples["sample"].astype(str).to_numpy()
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
    backend: str = "exact",
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
) -> pd.DataFrame:
    """One row per pool item, in pool order: the pool's columns plus SCORE_COLUMNS.

    `progress(done, total)` counts items clustered; `stage(what, done, total)` hears of the steps
    before (core.surrogate.semantic.base.Stage: loading the model, embedding texts).

    Items without samples get n_samples = n_clusters = 0, NaN scores and their
    own stratum (numbered last; see core.stats.strata). With `proxy`, the name of a
    numeric pool column, the strata are the proxy's (core.stats.proxy.proxy_strata)
    instead of `stratify_by`'s, and the items get its predicted grade in the
    column core.stats.proxy.PROXY_COLUMN, the column's name in `items.attrs["proxy"]`.

    The same as `stratified_items(inputs.pool, score_items(inputs, ...), ...)`, which is how a
    pool prepared in chunks (core.jobs.preparation_job) gives exactly this result.
    """
    if proxy is not None:
        proxy_values(inputs.pool, proxy)  # a bad proxy column is said before any model loads
    engine = get_backend(
        backend, model=model, threshold=threshold, device=device, cache_dir=cache_dir, batch_size=batch_size
    )
    scores = score_items(inputs, engine, progress=progress, stage=stage)
    return stratified_items(
        inputs.pool, scores, n_strata=n_strata, stratify_by=stratify_by, min_stratum_size=min_stratum_size, proxy=proxy
    )


def score_items(
    inputs: Inputs,
    engine: Backend,
    *,
    start: int = 0,
    stop: int | None = None,
    progress: Progress | None = None,
    stage: Stage | None = None,
) -> dict[str, np.ndarray]:
    """SCORES of the pool rows ``start:stop``, each an array of that length.

    Every item is scored from its own texts alone (an exact backend gives the same classes in any
    company; a model backend's batches differ with the chunk, see README's note on workers), so the
    scores of consecutive chunks, concatenated, are those of the whole pool.
    """
    pool, samples = inputs.pool, inputs.samples
    stop = len(pool) if stop is None else min(stop, len(pool))
    engine.on_stage = stage
    rows_of, groups = item_texts(inputs)
    groups = {p: texts for p, texts in groups.items() if start <= p < stop}
    classes = engine.cluster(list(groups.values()), progress)
    logprobs = (
        pd.to_numeric(samples["logprob"], errors="coerce").to_numpy(dtype=float)
        if "logprob" in samples
        else np.full(len(samples), np.nan)
    )
    lengths = sample_lengths(samples)

    n = max(stop - start, 0)
    scores = {name: np.full(n, np.nan) for name in ("semantic_entropy", "semantic_entropy_weighted", "agreement")}
    scores["n_samples"], scores["n_clusters"] = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    for p, item_classes in zip(groups, classes):
        rows, i = rows_of[pool["id"].iat[p]], p - start
        sample_classes, target_class = item_classes[:-1], item_classes[-1]
        scores["n_samples"][i] = sample_classes.size
        scores["n_clusters"][i] = np.unique(sample_classes).size
        scores["semantic_entropy"][i] = semantic_entropy(sample_classes)
        scores["semantic_entropy_weighted"][i] = weighted_semantic_entropy(
            sample_classes, logprobs[rows], lengths[rows]
        )
        scores["agreement"][i] = agreement(sample_classes, target_class)
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
