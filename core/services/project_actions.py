"""What a user does to a project: create, prepare, change settings, delete, open the demo; each checked and audited.

The Projects and Team pages call these with the signed-in user. Each checks
that the user may still act (core.services.outcome.permitted), calls the
project's lifecycle (core.services.project) or the store, and records the
audit event. The unaudited primitives (core.services.project) stay for scripts
and tests that set a project up; pages, the CLI and the API never import them
(tests/test_architecture.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from core import config
from core.errors import InputError
from core.rubric_table import QUESTION_SETTINGS, check_questions_change
from core.services import audit, auth, project
from core.services.outcome import Outcome, Refused, permitted
from core.services.progress import counted
from core.settings import ProjectSettings
from core.stats.design import fixed_budget_problem, prepared_design
from core.stats.stopping import FIXED, LOOKS
from core.store import Store

DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"
DEMO_NAME = "Demo"


def create(
    store: Store,
    actor: auth.User | None,
    name: str,
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: dict[str, Any],
    *,
    request_key: str | None = None,
) -> int:
    """A new project from uploads, preparing in the background (core.services.project.create_project); its id.
    ``request_key``: the Idempotency-Key the create was sent with, kept with the project (`made_by_request`)."""
    user = permitted(store, actor, auth.CREATE_PROJECT)
    project_id = project.create_project(store, name, pool, samples, settings, request_key=request_key)
    audit.record(
        store, user, audit.PROJECT_CREATED, project_id, name=name, pool=pool[0], samples=samples[0] if samples else None
    )
    return project_id


def made_by_request(
    store: Store,
    actor: auth.User | None,
    request_key: str,
    name: str,
    pool: tuple[str, bytes],
    settings: dict[str, Any],
) -> int | None:
    """The project a create sent with the Idempotency-Key ``request_key`` made already, where this is that create
    sent again (the same name, pool file and settings given), else None; an InputError where the key made another
    project (a key is one create's: the IETF's Idempotency-Key draft refuses its reuse for another request; the
    same name and pool with other settings answered with the first project, its settings dropped: a review). The
    pool's file alone is compared (a sampling project replaces its samples file as it samples), and each setting
    given as the project read it when it was made."""
    permitted(store, actor, auth.CREATE_PROJECT)
    made = store.project_of_request(request_key)
    if made is None:
        return None
    project_ = store.project(made)
    digest = hashlib.sha256(pool[1]).hexdigest()
    asked = ProjectSettings().with_changes(settings).to_dict()
    stored = project_.settings.to_dict()
    other_settings = [k for k in settings if asked.get(k) != stored.get(k)]
    if project_.name != name.strip() or store.input_digests(made).get("pool") != (pool[0], digest) or other_settings:
        what = (
            f"other settings ({', '.join(sorted(other_settings))})" if other_settings else "another name or pool file"
        )
        raise InputError(
            f"the Idempotency-Key {request_key!r} made project {made} with {what}",
            fix="send a new key with each new project, and the same key only with the same create sent again",
            field="Idempotency-Key",
        )
    return made


def open_demo(store: Store, actor: auth.User | None, *, start: bool = True) -> int:
    """The demo project's id, created from data/demo/ on first use (and, by default, prepared); raises
    InputError while that data is missing."""
    permitted(store, actor, auth.CREATE_PROJECT)
    existing = store.project_by_name(DEMO_NAME)
    if existing is not None:
        return existing.id
    folder = _demo_dir()
    pool_path = folder / "pool.jsonl"
    samples_path = folder / "samples.jsonl"
    if not pool_path.exists():
        raise InputError(
            "the demo pool is not available yet",
            file=str(pool_path),
            fix="create it (data/demo/README.md says how) or upload your own pool",
        )
    samples = (samples_path.name, samples_path.read_bytes()) if samples_path.exists() else None
    settings = {"guidelines": _demo_guidelines(folder)}
    try:
        return project.create_project(
            store, DEMO_NAME, (pool_path.name, pool_path.read_bytes()), samples, settings, start=start
        )
    except InputError:
        existing = store.project_by_name(DEMO_NAME)  # another session created it meanwhile
        if existing is None:
            raise
        return existing.id


def _demo_dir() -> Path:
    """data/demo/, or the folder named by $ACTIVEGRADE_DEMO_DIR (core.config)."""
    return config.config().demo_dir or DEMO_DIR


def _demo_guidelines(folder: Path) -> str:
    path = folder / "guidelines.md"
    if path.exists():
        return path.read_text(encoding="utf-8")
    return (
        "Grade the **target response** against the prompt and the reference answer.\n\n"
        "- *Correct*: the final answer is right; minor wording differences are fine.\n"
        "- *Incorrect*: the final answer is wrong, missing, or hedged between options.\n"
    )


def prepare(store: Store, actor: auth.User | None, project_id: int, *, wait: bool = False) -> Outcome:
    """Start (or restart) the project's preparation; audited when a job starts. ``wait``: run the project's
    jobs in this process to the end (the command line), those queued earlier too."""
    user = permitted(store, actor, auth.PREPARE_PROJECT, project_id)
    if not project.start_preparation(store, project_id, wait=wait):
        if wait:
            project.run_project_jobs(store, project_id)  # queued before, e.g. by an app stopped before it ran them
        return Outcome("unchanged", "the project is ready or already being prepared")
    audit.record(store, user, audit.PREPARATION_STARTED, project_id)
    return Outcome("started", "preparation started")


NEVER_CHANGED = {
    "card_key": "a comparison's card key is drawn when the project is created: it sets which side each model's "
    "response was shown on",
    "targets": "the models a project compares are read from its pool's model column when it is created: its items "
    "hold their responses",
}
"""The settings the project is made with and keeps, and why (`change_settings`)."""

FIXED_ONCE_GRADED = {
    "regime": "its stopping regime cannot change: a regime picked after seeing the grades would not hold its level",
    "budget_fixed": "whether its budget is fixed in advance cannot change: that is its stopping regime too, and a "
    "regime picked after seeing the grades would not hold its level",
    "planned_budget": "its planned number of grades n0 cannot change: it tunes the anytime interval's bets and sets "
    "a fixed budget, and a tuning or a budget picked after seeing the grades would not hold the level",
    "seed": "its queue's seed cannot change: drawing the queue again until the next items suit would choose which "
    "items are graded",
}
"""The settings that stay as they are once the project has a grade, and why (`change_settings`)."""

N0_INPUTS = ("target_half_width", "expected_score")
"""The settings a project's n0 follows while its planned budget is unset (core.settings.ProjectSettings.anytime_n0,
the forecast before any grade), besides those fixed once graded: a change of one of them after the first grade
pins n0 where it was (`change_settings`)."""


def change_settings(store: Store, actor: auth.User | None, project_id: int, changes: dict[str, Any]) -> Outcome:
    """Check and save changed settings (core.services.project.check_settings, then core.settings); what graders
    are asked stays while the project has grades (core.rubric_table.check_questions_change). One audit event
    with the settings whose value changed, none when nothing did."""
    user = permitted(store, actor, auth.CHANGE_SETTINGS, project_id)
    project.check_settings(changes)
    before = store.project(project_id).settings
    stored = before.to_dict()
    changed = {k: v for k, v in changes.items() if stored.get(k) != v}
    if not changed:
        return Outcome("unchanged", "no setting changed")
    if frozen := [k for k in NEVER_CHANGED if k in changed]:
        raise InputError(
            f"{NEVER_CHANGED[frozen[0]]}, so it cannot change",
            fix=f"leave {frozen[0]} out of the changes",
            field=f"settings.{frozen[0]}",
        )
    if changed.keys() & set(QUESTION_SETTINGS):
        check_questions_change(stored, changed, store.grade_counts(project_id)[1])
    if (frozen := [k for k in FIXED_ONCE_GRADED if k in changed]) and (graded := store.grade_counts(project_id)[1]):
        raise InputError(
            f"the project has {counted(graded, 'grade')}, so {FIXED_ONCE_GRADED[frozen[0]]}",
            fix=f"keep the {frozen[0]}, or create a new project",
            field=f"settings.{frozen[0]}",
        )
    if (
        before.stopping == LOOKS
        and float(changed.get("target_half_width", before.target_half_width)) > before.target_half_width
        and (graded := store.grade_counts(project_id)[1])
    ):
        raise InputError(
            f"the project has {counted(graded, 'grade')}, so its target cannot widen: the planned looks are "
            "fractions of what the target needs, and a wider one reads the looks already passed again, so a "
            "stop could be picked among them after seeing the grades (a security review swept the target and "
            "chose the interval)",
            fix=f"keep ±{before.target_half_width:g} or tighten it (grading then goes on), or create a new project",
            field="settings.target_half_width",
        )
    if changed.keys() & set(N0_INPUTS) and before.planned_budget is None and before.stopping != FIXED:
        changed.update(_pinned_n0(store, project_id, before))
    sizes = store.stratum_sizes(project_id) if changed.keys() & {"budget_fixed", "planned_budget"} else []
    if sizes and (after := before.with_changes(changed)).budget_fixed:  # a budget fixed in advance, or its n0, changed
        problem = fixed_budget_problem(after.n0(sum(sizes)), sizes)
        if problem is not None:
            raise problem
    store.update_settings(project_id, changed)
    audit.record(store, user, audit.SETTINGS_CHANGED, project_id, **changed)
    if "planned_budget" in changed and "planned_budget" not in changes:
        return Outcome(
            "changed",
            f"settings saved; n0 stays {changed['planned_budget']}, the grades the anytime "
            "interval was tuned for before the first grade",
        )
    return Outcome("changed", "settings saved")


def _pinned_n0(store: Store, project_id: int, before: ProjectSettings) -> dict[str, int]:
    """``planned_budget`` at the n0 the anytime interval has been tuned for, where the project has a grade: the
    interval is valid only for an n0 fixed before the first grade, and re-tuned from a new target or expected
    score it moved on the same grades (a manager's review: 0.4300-0.6216 at +-0.05, 0.414-0.633 at +-0.03,
    back again at +-0.05), so a manager could try targets until it suited. Nothing before a grade."""
    if not store.grade_counts(project_id)[1]:
        return {}
    return {"planned_budget": before.anytime_n0(prepared_design(store.load_items(project_id), before.stopping))}


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
