"""The `exact` backend: two answers mean the same when their normalised forms are equal.

Normalisation (core.surrogate.normalize) already merged equal strings, so every distinct
normalised string is its own class. No model, hence nothing worth caching:
recomputing is faster than a cache look-up, and the cache is not used.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.surrogate.semantic.base import Backend, Progress, UniqueTexts


class ExactBackend(Backend):
    name = "exact"

    def __init__(self, *, cache_dir: str | Path | None = None) -> None:
        super().__init__(cache_dir=cache_dir, use_cache=False)

    def _classes(self, items: list[UniqueTexts], progress: Progress | None) -> list[np.ndarray]:
        if progress:
            progress(len(items), len(items))
        return [np.arange(len(item.strings)) for item in items]
