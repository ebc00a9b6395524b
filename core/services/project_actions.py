"""What a user does to a project: create, prepare, change settings, delete, open the demo; each checked and audited.

The Projects and Team pages call these with the signed-in user. Each checks
that the user may still act (core.services.outcome.permitted), calls the
project's lifecycle (core.services.project) or the store, and records the
audit event; the unaudited primitives stay for scripts and tests that set a
project up.
"""

from __future__ import annotations

from typing import Any

from core.services import audit, auth, project
from core.services.outcome import Outcome, Refused, permitted
from core.settings import ProjectSettings
from core.stats.design import fixed_budget_problem, planned_budget
from core.store import Store


def create(
    store: Store,
    actor: auth.User | None,
    name: str,
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: dict[str, Any],
) -> int:
    """A new project from uploads, preparing in the background (core.services.project.create_project); its id."""
    user = permitted(store, actor, auth.CREATE_PROJECT)
    project_id = project.create_project(store, name, pool, samples, settings)
    audit.record(
        store, user, audit.PROJECT_CREATED, project_id, name=name, pool=pool[0], samples=samples[0] if samples else None
    )
    return project_id


def open_demo(store: Store, actor: auth.User | None) -> int:
    """The demo project's id, created on first use (core.services.project.open_demo)."""
    permitted(store, actor, auth.CREATE_PROJECT)
    return project.open_demo(store)


def prepare(store: Store, actor: auth.User | None, project_id: int) -> Outcome:
    """Start (or restart) the project's preparation; audited when a job starts."""
    user = permitted(store, actor, auth.PREPARE_PROJECT, project_id)
    if not project.start_preparation(store, project_id):
        return Outcome("unchanged", "the project is ready or already being prepared")
    audit.record(store, user, audit.PREPARATION_STARTED, project_id)
    return Outcome("started", "preparation started")


def change_settings(store: Store, actor: auth.User | None, project_id: int, changes: dict[str, Any]) -> Outcome:
    """Check and save changed settings (core.services.project.check_settings, then core.settings); one audit
    event with the settings whose value changed, none when nothing did."""
    user = permitted(store, actor, auth.CHANGE_SETTINGS, project_id)
    project.check_settings(changes)
    before = ProjectSettings.from_dict(store.project(project_id).settings).to_dict()
    changed = {k: v for k, v in changes.items() if before.get(k) != v}
    if not changed:
        return Outcome("unchanged", "no setting changed")
    after = {**before, **changes}
    sizes = store.stratum_sizes(project_id) if changed.keys() & {"budget_fixed", "planned_budget"} else []
    if after.get("budget_fixed") and sizes:  # a budget fixed in advance, or its n0, changed
        n0 = planned_budget(after, sum(sizes))
        problem = fixed_budget_problem(n0, sizes, len(store.graded_positions(project_id)))
        if problem is not None:
            raise problem
    store.update_settings(project_id, changed)
    audit.record(store, user, audit.SETTINGS_CHANGED, project_id, **changed)
    return Outcome("changed", "settings saved")


def delete(store: Store, actor: auth.User | None, project_id: int) -> Outcome:
    """Delete the project with all its grades (the audit trail keeps the event and the name)."""
    user = permitted(store, actor, auth.DELETE_PROJECT, project_id)
    try:
        name = store.project(project_id).name
    except KeyError:
        raise Refused(f"project {project_id} has already been deleted") from None
    store.delete_project(project_id)
    audit.record(store, user, audit.PROJECT_DELETED, project_id, name=name)
    return Outcome("deleted", f"project {name} deleted")
