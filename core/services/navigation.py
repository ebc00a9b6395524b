"""Which project a page opens (issue 28): the one its address names when the user may open it; otherwise the
only one they may see, else the one they used last (opened, graded, or any recorded action), else none and the
page asks. Opening a project counts as using it, so a bare address in a new tab opens it again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.services import audit
from core.services.audit import OPEN_DEMO_VISITORS
from core.services.auth import ALL_PROJECTS_ROLES, User
from core.store import Store, accounts


@dataclass(frozen=True)
class Opening:
    """The project a page run shows, and what to tell the user about the address they came with."""

    project_id: int | None
    refused: str | None = None
    """The address's project (as written) when it does not exist or is not the user's; None otherwise."""
    unassigned: bool = False
    """Whether the user may open no project at all and only an admin can change that (by assigning one): the
    pages then say whom to ask instead of "choose a project"."""


def _user_name(user: User) -> str:
    """The name a project's opening is recorded and looked up under (OPEN_DEMO_VISITORS for open-demo visitors)."""
    return user.name if user.id is not None else OPEN_DEMO_VISITORS


def default_project(store: Store, user: User, visible_ids: Sequence[int]) -> int | None:
    """The project to open for ``user`` among the projects they may see, or None to let them choose."""
    if len(visible_ids) == 1:
        return visible_ids[0]
    return accounts.last_active_project(store, _user_name(user), visible_ids)


def _as_id(asked: str) -> int | None:
    """The project id an address's ``?project=`` names, or None for one that names none (``abc``)."""
    try:
        return int(asked)
    except ValueError:
        return None


def open_project(store: Store, user: User, asked: str | None, visible_ids: Sequence[int]) -> Opening:
    """The project to show ``user`` for an address asking for ``asked`` (None when it names none): that one
    when they may open it, else the default, with the refused address kept so that the page says so rather
    than silently show another project."""
    wanted = None if asked is None else _as_id(asked)
    if wanted in visible_ids:
        return Opening(wanted)
    unassigned = not visible_ids and user.role not in ALL_PROJECTS_ROLES
    return Opening(default_project(store, user, visible_ids), refused=asked, unassigned=unassigned)


def opened(store: Store, user: User, project_id: int) -> None:
    """Record that ``user`` opened ``project_id``: their last-used project from now on (``default_project``).
    The frame calls it once per browser tab and project, not at every rerun."""
    accounts.record_event(store, _user_name(user), audit.PROJECT_OPENED, project_id=project_id)
