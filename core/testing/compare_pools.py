"""Generated comparison pools (several targets, correlated grades) for tests and benchmarks/compare.py.

Item i has a difficulty b_i ~ Normal(0, 1); target k has an ability theta_k and answers right with probability
sigmoid(theta_k - b_i), so the targets' grades are correlated through b_i. With probability `equal` every
target gives one answer (one meaning class, one grade: right with the first target's probability); otherwise
each target answers on its own, the right ones sharing the right answer's class and each wrong one its own
class. With `noise`, an item whose answers share a class still gets independent grades with that probability
(clustering that merges answers the graders tell apart: the design's prior is then wrong). The surrogate's
`n_samples` answers are right with probability sigmoid(signal (theta_s - b_i)), else one of three wrong
answers; agreement, entropy and strata as core.surrogate.prepare makes them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.stats.compare import Comparison
from core.stats.strata import stratify
from core.surrogate.entropy import agreement, semantic_entropy


def synthetic_comparison(
    n_items: int = 1000,
    abilities: tuple[float, ...] = (0.6, 0.2),
    *,
    equal: float = 0.5,
    signal: float = 1.0,
    noise: float = 0.0,
    n_samples: int = 5,
    seed: int = 0,
) -> Comparison:
    """A labelled Comparison of len(abilities) targets named "m0", "m1", ... (module docstring)."""
    rng = np.random.default_rng(seed)
    k = len(abilities)
    b = rng.normal(size=n_items)
    right = rng.random((k, n_items)) < 1 / (1 + np.exp(-(np.asarray(abilities)[:, None] - b)))
    same = rng.random(n_items) < equal
    right[:, same] = right[0, same]
    # class 0: the right answer; wrong answers: 1 + target index (each its own), or 1 for one shared answer
    classes = np.where(right, 0, 1 + np.arange(k)[:, None])
    classes[:, same] = np.where(right[0, same], 0, 1)
    labels = right.astype(float)
    graded_apart = same & (rng.random(n_items) < noise)
    labels[:, graded_apart] = (rng.random((k, int(graded_apart.sum()))) < 0.5).astype(float)
    p_sample = 1 / (1 + np.exp(-signal * (0.5 - b)))
    sample_right = rng.random((n_items, n_samples)) < p_sample[:, None]
    samples = np.where(sample_right, 0, 1 + rng.integers(0, 3, (n_items, n_samples)))
    # wrong sample answers 1..3 coincide with the targets' wrong answers 1..k (the surrogate can share a mistake)
    items = {}
    for t in range(k):
        agree = np.array([agreement(samples[i], classes[t, i]) for i in range(n_items)])
        entropy = np.array([semantic_entropy(samples[i]) for i in range(n_items)])
        items[f"m{t}"] = pd.DataFrame(
            {
                "id": [f"item-{i:05d}" for i in range(n_items)],
                "label": labels[t],
                "n_samples": n_samples,
                "semantic_entropy": entropy,
                "agreement": agree,
                "stratum": stratify(entropy, agree),
            }
        )
    return Comparison(tuple(items), items, classes.astype(np.int64))
