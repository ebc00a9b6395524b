"""Which project a page opens when its URL names none (issue 28): the only one the user may see, else the
one they used last (their latest grade or recorded action), else none and the page asks."""

from __future__ import annotations

from collections.abc import Sequence

from core.store import Store, accounts


def default_project(store: Store, user_name: str, visible_ids: Sequence[int]) -> int | None:
    """The project to open for ``user_name`` among the projects they may see, or None to let them choose."""
    if len(visible_ids) == 1:
        return visible_ids[0]
    return accounts.last_active_project(store, user_name, visible_ids)
