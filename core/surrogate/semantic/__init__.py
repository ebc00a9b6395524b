"""Semantic-equivalence backends: cluster an item's surrogate answers by meaning.

`get_backend(name, ...)` returns an object whose `cluster(groups, progress)`
gives, for each item, the class ids of its samples followed by the class id of
the target's answer. Backends: `exact` (core/surrogate/semantic/exact.py), `embedding`
(core/surrogate/semantic/embedding.py), `nli` (core/surrogate/semantic/nli.py); the shared work
(normalising, deduplicating, caching) is in core/surrogate/semantic/base.py.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError
from core.surrogate.semantic.base import Backend, ItemTexts, Progress

DEFAULT_BACKEND = "exact"
"""The backend a project, `prepare_items` and the command line use unless told otherwise (no model)."""
BACKENDS = (DEFAULT_BACKEND, "embedding", "nli")

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "Backend", "ItemTexts", "Progress", "get_backend"]


def get_backend(
    name: str,
    *,
    model: str | None = None,
    threshold: float | None = None,
    device: str = "auto",
    cache_dir: str | Path | None = None,
    batch_size: int | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
) -> Backend:
    """The backend called `name`. `model` (name or path) and `threshold` fall back
    to the backend's defaults; the `exact` backend takes neither. Models load
    lazily, on the first item the cache does not already hold. With `api_base`, the
    `embedding` backend's embeddings come from that OpenAI-compatible server, `model`
    naming the model it serves and `api_key_env` the environment variable holding its key
    (core/surrogate/semantic/served.py)."""
    if batch_size is not None and batch_size < 1:
        raise InputError(
            f"batch size must be at least 1, got {batch_size}",
            fix="drop --batch-size for the backend's default, or give e.g. 32",
        )
    if name == "exact":
        if model is not None or threshold is not None:
            raise InputError(
                "the exact backend takes no model or threshold",
                fix="drop --model/--threshold or pick --backend embedding or nli",
            )
        from core.surrogate.semantic.exact import ExactBackend

        return ExactBackend(cache_dir=cache_dir)
    if api_base is not None and name != "embedding":
        raise InputError(
            f"the {name} backend runs no server", fix="drop --api-base, or use --backend embedding with it"
        )
    options = {"model": model, "threshold": threshold, "batch_size": batch_size}
    if api_base is not None:
        from core.surrogate.semantic.served import ServedEmbeddingBackend

        return ServedEmbeddingBackend(
            api_base=api_base,
            api_key_env=api_key_env,
            cache_dir=cache_dir,
            **{k: v for k, v in options.items() if v is not None},
        )
    if name == "embedding":
        from core.surrogate.semantic.embedding import EmbeddingBackend as backend_class
    elif name == "nli":
        from core.surrogate.semantic.nli import NLIBackend as backend_class
    else:
        raise InputError(f"unknown backend '{name}'", fix=f"use one of {', '.join(BACKENDS)}")
    return backend_class(device=device, cache_dir=cache_dir, **{k: v for k, v in options.items() if v is not None})
