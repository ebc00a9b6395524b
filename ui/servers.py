"""The new-project form's choice between a local model and one of the OpenAI-compatible servers the operator
allows ($ACTIVEGRADE_SAMPLING_SERVERS, core.config), with the model that server serves: for sampling surrogate
answers (ui.sampling) and for the embedding backend's embeddings (app_pages/projects.py).

The admin picks a listed URL; they never type a URL or a key's variable. The key is the one the operator named
for that server, read where the app runs: never typed, stored or shown here. core.jobs.sampling_job.allowed_server
checks the choice again when the project is created and when it is prepared.
"""

from __future__ import annotations

import streamlit as st

from core.config import SAMPLING_SERVERS, config

SOURCES = {"local": "A local model", "server": "An OpenAI-compatible server"}


def from_server(label: str, key: str) -> bool:
    """A local model or a server, as a horizontal radio; True when the server is chosen."""
    return st.radio(label, list(SOURCES), format_func=SOURCES.get, horizontal=True, key=key) == "server"


def server_and_model(key: str, instead: str) -> dict[str, str]:
    """One of the servers the operator allows and the model's name as that server lists it (``api_base``,
    ``model``; widget keys ``{key}_api_base`` and ``{key}_server_model``). Without any allowed server, a note
    saying where the operator lists them and ``instead``, what to do meanwhile."""
    servers = [server.url for server in config().sampling_servers]
    if not servers:
        st.info(
            f"This deployment allows no server: the operator lists the servers the app may ask, and each one's "
            f"key variable, in {SAMPLING_SERVERS} (docs/configuration.md). {instead}"
        )
    cols = st.columns([3, 2])
    api_base = cols[0].selectbox(
        "Server (as the operator allows them)",
        servers,
        key=f"{key}_api_base",
        help="The key is the one the operator set for this server where the app runs; it is never stored or shown.",
    )
    model = cols[1].text_input("Model (as the server names it)", key=f"{key}_server_model")
    return {"api_base": api_base or "", "model": model}
