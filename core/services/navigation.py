"""Which project a page opens when its URL names none (issue 28): the only one the user may see, else the one
they used last (opened, graded, or any recorded action), else none and the page asks. Opening a project counts
as using it, so a bare address in a new tab opens it again."""

from __future__ import annotations

from collections.abc import Sequence

from core.services import audit
from core.services.auth import User
from core.store import Store, accounts

OPEN_DEMO_VISITORS = "(open demo)"
"""The name an open-demo visitor (no account) opens projects under: a new tab has no name typed yet, and every
visitor is the same anonymous admin of the same projects, so the demo remembers one last-used project for all."""


def _user_name(user: User) -> str:
    """The name a project's opening is recorded and looked up under (OPEN_DEMO_VISITORS for open-demo visitors)."""
    return user.name if user.id is not None else OPEN_DEMO_VISITORS


def default_project(store: Store, user: User, visible_ids: Sequence[int]) -> int | None:
    """The project to open for ``user`` among the projects they may see, or None to let them choose."""
    if len(visible_ids) == 1:
        return visible_ids[0]
    return accounts.last_active_project(store, _user_name(user), visible_ids)


def opened(store: Store, user: User, project_id: int) -> None:
    """Record that ``user`` opened ``project_id``: their last-used project from now on (``default_project``).
    The frame calls it once per browser tab and project, not at every rerun."""
    accounts.record_event(store, _user_name(user), audit.PROJECT_OPENED, project_id=project_id)
