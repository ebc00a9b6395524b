"""The new-project form's control for sampling surrogate answers with a local model or from an
OpenAI-compatible server (core.jobs.sampling_job, through core.services.setup)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.services.setup import SamplingSettings, ServerSamplingSettings, default_model
from ui.servers import from_server, server_and_model


def sampling_settings() -> dict[str, Any] | None:
    """Offer to sample the surrogate answers; the project's `settings.sampling`, or None when not asked.

    The values are checked by `core.services.project.create_project`, which shows what is wrong.
    """
    if not st.checkbox(
        "Sample surrogate answers",
        key="new_sampling",
        help="The preparation job first samples K answers per prompt, then prepares as usual. "
        "SmolLM2-135M on 2 CPU cores: about 2 s per item at K = 8 "
        "(benchmarks/sample.md), plus about 20 s to load.",
    ):
        return None
    where = _server() if from_server("From", key="new_sampling_source") else _local()
    cols = st.columns(3)
    k = cols[0].number_input("Answers per item (K)", 1, 100, SamplingSettings.k, key="new_sampling_k")
    temperature = cols[1].number_input(
        "Temperature (0 = greedy, needs K = 1)",
        0.0,
        5.0,
        SamplingSettings.temperature,
        step=0.1,
        key="new_sampling_temperature",
    )
    max_new_tokens = cols[2].number_input(
        "Longest answer (new tokens)", 1, 512, SamplingSettings.max_new_tokens, key="new_sampling_tokens"
    )
    return {**where, "k": int(k), "temperature": float(temperature), "max_new_tokens": int(max_new_tokens)}


def _local() -> dict[str, Any]:
    model, gguf_file = default_model() or ("", "")
    cols = st.columns([3, 2])
    model = cols[0].text_input(
        "Surrogate model (local folder, or a Hugging Face name already in the cache)", model, key="new_sampling_model"
    )
    gguf_file = cols[1].text_input("GGUF file in that folder (optional)", gguf_file, key="new_sampling_gguf")
    return {"model": model, "gguf_file": gguf_file}


def _server() -> dict[str, Any]:
    """One of the servers the operator allows (ui.servers), the model and concurrency."""
    where = server_and_model("new_sampling", "Sample with a local model instead.")
    concurrency = st.number_input(
        "Requests at once", 1, 256, ServerSamplingSettings.concurrency, key="new_sampling_concurrency"
    )
    return {**where, "concurrency": int(concurrency)}
