"""Personal API tokens on screen (core.services.tokens): one account's tokens with their last use, a form
that creates one and shows its secret once, and a button per token that revokes it. The Team page shows it
for any account (admins); the sidebar for the signed-in user's own."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.services import auth, tokens
from core.services.outcome import Refused
from ui import state

SHOWN = "api-token-shown"
"""The secret just created, shown until the next rerun of this section, then gone."""


def _when(moment) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def section(actor: auth.User, owner: str, key: str) -> None:
    """``owner``'s tokens, as ``actor`` may manage them; ``key`` keeps several sections' widgets apart."""
    store = state.store()
    try:
        found = tokens.listed(store, actor, owner)
    except (InputError, Refused) as exc:
        st.caption(str(exc))
        return
    shown = st.session_state.pop(f"{SHOWN}-{key}", None)
    if shown:
        st.success("Copy this token now; it is not shown again. Send it as `Authorization: Bearer <token>`.")
        st.code(shown, language=None)
    if found:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "id": t.id,
                        "name": t.name,
                        "created": _when(t.created_at),
                        "by": t.created_by,
                        "last used": _when(t.last_used_at) or "never",
                        "expires": _when(t.expires_at) or "never (made before tokens expired: replace it)",
                        "revoked": _when(t.revoked_at),
                    }
                    for t in found
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption(f"{owner} has no API token.")
    with st.form(f"new-token-{key}", clear_on_submit=True):
        name = st.text_input("What the token is for", placeholder="e.g. CI export", key=f"token-name-{key}")
        days = st.number_input(
            "Days it answers",
            min_value=1,
            max_value=tokens.MAX_DAYS,
            value=tokens.DEFAULT_DAYS,
            step=1,
            key=f"token-days-{key}",
            help="After these days the token stops answering: make a new one then.",
        )
        if st.form_submit_button("Create API token"):
            try:
                _, secret = tokens.create(store, actor, owner, name, int(days))
            except (InputError, Refused) as exc:
                st.error(str(exc))
            else:
                st.session_state[f"{SHOWN}-{key}"] = secret
                st.rerun()
    live = [t for t in found if t.active]
    if live:
        chosen = st.selectbox(
            "Revoke a token",
            [t.id for t in live],
            format_func=lambda i: f"{i}: {next(t.name for t in live if t.id == i)}",
            key=f"revoke-choice-{key}",
        )
        if st.button("Revoke", key=f"revoke-{key}"):
            try:
                st.toast(tokens.revoke(store, actor, chosen).message)
            except (InputError, Refused) as exc:
                st.error(str(exc))
            st.rerun()
