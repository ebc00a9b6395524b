"""Preparation of a comparison pool: each target's signals, and the signals between the targets.

Each target is prepared as a one-model pool is (core.surrogate.prepare.prepare_items on its rows, with the
item's surrogate samples, which every target shares). Between the targets: the meaning class of each
target's answer, from one clustering of the item's samples followed by every target's answer (the same
backend, so "same meaning" means what it means for agreement); two targets whose answers share a class said
the same thing, and where they did their grades tend to agree.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from core.inputs.io import Inputs
from core.inputs.targets import Targets, response_column, split_targets
from core.stats.compare import Comparison
from core.stats.compare_design import difference_strata, predicted_grades
from core.surrogate.prepare import prepare_items, sample_index, target_answers
from core.surrogate.semantic import DEFAULT_BACKEND, ItemTexts, get_backend

ENGINE_OPTIONS = ("model", "threshold", "device", "cache_dir", "batch_size", "api_base", "api_key_env")
"""prepare_items' options that pick the semantic backend (core.surrogate.semantic.get_backend's)."""


def prepare_targets(
    inputs: Inputs, *, backend: str = DEFAULT_BACKEND, file: str | None = None, **options: Any
) -> Comparison:
    """The comparison of a long-format pool (core.inputs.targets): per target, prepare_items(backend, **options)
    of its rows; between them, `answer_classes`. `file` names the pool in errors."""
    targets = split_targets(inputs.pool, file)
    items = {
        model: prepare_items(replace(inputs, pool=pool), backend=backend, **options)
        for model, pool in targets.pools.items()
    }
    engine = get_backend(backend, **{k: options[k] for k in ENGINE_OPTIONS if options.get(k) is not None})
    return Comparison(targets.models, items, answer_classes(targets, inputs, engine))


def answer_classes(targets: Targets, inputs: Inputs, engine) -> np.ndarray:
    """(K, N) int: the meaning class of target k's answer to item p, clustered with the item's samples
    (`engine.cluster` on the samples, then targets 1..K-1's answers as samples, then target K's answer as
    the target). Classes are comparable within an item only."""
    rows_of, texts = sample_index(inputs.samples)
    first = targets.pools[targets.models[0]]
    answers = np.array([target_answers(targets.pools[m]) for m in targets.models], dtype=object)
    groups = []
    for p, (item_id, question) in enumerate(zip(first["id"], first["prompt"].astype(str))):
        samples = texts[rows_of[item_id]].tolist() if item_id in rows_of else []
        groups.append(ItemTexts(question, samples + list(answers[:-1, p]), answers[-1, p]))
    k = len(targets.models)
    return np.stack([classes[-k:] for classes in engine.cluster(groups)], axis=1).astype(np.int64)


def comparison_items(comparison: Comparison, n_strata: int) -> pd.DataFrame:
    """A comparison project's items, one row per item (stored once): the first target's prepared row
    (id, prompt, reference answer, the surrogate's signals) without its response, each target's response in
    `response_column(model)`, and the stratum of the design for the difference
    (core.stats.compare_design.difference_strata)."""
    first = comparison.items[comparison.models[0]]
    items = first.drop(columns=["response", "stratum"], errors="ignore").copy()
    for model in comparison.models:
        items[response_column(model)] = comparison.items[model]["response"].to_numpy()
    items["stratum"] = difference_strata(comparison, predicted_grades(comparison), n_strata)
    return items
