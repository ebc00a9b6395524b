"""The new-project form's control for sampling surrogate answers with a local model (core.jobs.sampling_job)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.jobs.sampling_job import SamplingSettings, default_model


def sampling_settings() -> dict[str, Any] | None:
    """Offer to sample the surrogate answers; the project's `settings["sampling"]`, or None when not asked.

    The values are checked by `core.services.project.create_project`, which shows what is wrong.
    """
    if not st.checkbox(
        "Sample surrogate answers with a local model",
        key="new_sampling",
        help="The preparation job first samples K answers per prompt, then prepares as usual. "
        "SmolLM2-135M on 2 CPU cores: about 2 s per item at K = 8 "
        "(benchmarks/sample.md), plus about 20 s to load.",
    ):
        return None
    model, gguf_file = default_model() or ("", "")
    cols = st.columns([3, 2])
    model = cols[0].text_input(
        "Surrogate model (local folder, or a Hugging Face name already in the cache)", model, key="new_sampling_model"
    )
    gguf_file = cols[1].text_input("GGUF file in that folder (optional)", gguf_file, key="new_sampling_gguf")
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
    return {
        "model": model,
        "gguf_file": gguf_file,
        "k": int(k),
        "temperature": float(temperature),
        "max_new_tokens": int(max_new_tokens),
    }
