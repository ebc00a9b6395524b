"""Project lifecycle: create a project from uploads, prepare it in the background.

Nothing here checks who acts: the pages, the CLI and the API reach these only through the checked
actions of core.services.project_actions (tests/test_architecture.py); scripts and tests that set a
project up call them directly.

Preparation (sampling, semantic clustering, entropy, strata) is a job in the database
(core.jobs.preparation_job), run by a worker: the app's own child process by default
(core.jobs.background), or workers apart, on other machines and GPUs (`python -m core worker`).
Scripts and tests that wait for it run its jobs in their own process. Its progress and outcome
live in the database, so a page reload, another browser or a restart sees the same state and never
recomputes finished work; a worker that dies leaves the job to another.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from core.errors import InputError, Taken, hidden_character
from core.inputs.io import Inputs
from core.inputs.limits import MAX_FILE_NAME_CHARS, MAX_NAME_CHARS, check_length
from core.inputs.markup import MAX_MARKDOWN_CHARS, MAX_NESTING, MAX_TABLE_CELLS, has_image, safe_markdown
from core.jobs.context import WorkerOptions
from core.jobs.preparation_job import enqueue_preparation, served_embeddings
from core.jobs.sampling_job import sampling_request
from core.jobs.worker import Worker
from core.services import preparation
from core.services.side_by_side import new_card_key
from core.settings import ProjectSettings
from core.store import Store
from core.store import jobs as job_table
from core.surrogate.semantic.choice import choose_backend_for


def check_inputs(
    pool: tuple[str, bytes], samples: tuple[str, bytes] | None, settings: ProjectSettings | Mapping[str, Any]
) -> tuple[list[str], Inputs]:
    """Validate uploads as the project's settings read them (core.inputs.readers.read_project_inputs), and the
    proxy column when one is chosen; raises InputError naming file, row and fix. Returns the models the pool
    compares (core.inputs.targets.pool_targets; [] for a one-model pool), and the inputs read: a comparison
    is refused surrogate sampling and a proxy, which are not built for several targets yet."""
    from core.inputs.readers import read_project_inputs
    from core.inputs.targets import pool_targets
    from core.stats.proxy import proxy_values

    read = ProjectSettings.from_dict(settings)
    try:
        inputs = read_project_inputs(pool, samples, read)
    except InputError as error:
        if samples is not None and error.file != pool[0]:  # the pool's own shape first: a comparison pool missing
            # a model's row was said as 5,000 sample rows whose ids were not in it (an integrator's review)
            pool_targets(read_project_inputs(pool, None, read).pool, pool[0])
        raise
    targets = list(pool_targets(inputs.pool, pool[0]))
    if targets and (read.sampling or read.proxy):
        raise InputError(
            f"the pool compares {len(targets)} models; sampling the surrogate and a proxy column are not "
            "available for a comparison yet",
            file=pool[0],
            fix="upload the surrogate's samples and leave the proxy unset",
        )
    if read.proxy:
        proxy_values(inputs.pool, read.proxy, file=pool[0])
    return targets, inputs


def slug(name: str) -> str:
    """The project's name as a file-name stem (its exports' default file names): letters and digits, anything
    else a dash."""
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") or "project"


def check_look_alike(store: Store, name: str) -> None:
    """Taken where another project's name has the same `slug`, differing only in case, spaces or punctuation
    ("gsm8k 300" beside "GSM8K 300", "G2-file" beside "G2 file"): the two wrote one default export file, the second
    over the first (a new user's review). The same name is the store's to refuse (naming its id), or an
    Idempotency-Key's to answer."""
    wanted = slug(name)
    for project in store.projects():
        if project.name != name.strip() and slug(project.name) == wanted:
            raise Taken(
                f"project {project.id} is named {project.name!r}, which {name.strip()!r} differs from only in case, "
                "spaces or punctuation (their files would share one name)",
                fix="choose a name people can tell apart, or open that project",
                field="name",
            )


def create_project(
    store: Store,
    name: str,
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None = None,
    settings: dict[str, Any] | None = None,
    *,
    start: bool = True,
    request_key: str | None = None,
) -> int:
    """Validate the uploads, store them with the settings (and the Idempotency-Key ``request_key`` the create was
    sent with), and (by default) start preparing. Without a ``backend`` in the settings, the one the answers
    call for (core.surrogate.semantic.choice, the Projects page's default too): the API and the CLI took exact
    matching for any pool, and a pool of free-text answers made one stratum, no design at all (a manager's
    review).

    Raises InputError for bad input before anything is written.
    """
    check_project_name(name)
    check_look_alike(store, name)
    check_length(pool[0], MAX_FILE_NAME_CHARS, "the pool file's name")
    if samples is not None:
        check_length(samples[0], MAX_FILE_NAME_CHARS, "the samples file's name")
    check_settings(settings or {})
    typed = ProjectSettings().with_changes(settings or {})  # defaults filled in; every key and value checked
    served_embeddings(typed)  # an embedding server the deployment does not allow is refused here
    targets, inputs = check_inputs(pool, samples, typed)
    if "targets" in (settings or {}) and list(typed.targets) != list(targets):  # it was dropped without a word
        raise InputError(
            f"the setting targets names {list(typed.targets)}, but the pool names {list(targets) or 'no model'}: "
            "a project's models are read from its pool's model column",
            fix="leave targets out of the settings",
            field="settings.targets",
        )
    typed = typed.with_changes({"targets": targets})
    if "backend" not in (settings or {}):  # the one the answers call for, as the Projects page offers it
        typed = typed.with_changes({"backend": choose_backend_for(inputs).backend})
    if typed.compares and not typed.card_key:  # the comparison's secret: its cards' order, hidden from graders
        typed = typed.with_changes({"card_key": new_card_key()})
    if typed.sampling:
        typed = typed.with_changes({"sampling": sampling_request(typed.sampling, pool, samples, typed)})
    files = {"pool": pool} | ({"samples": samples} if samples else {})
    project_id = store.create_project(name, typed.to_dict(), files, request_key)
    if start:
        start_preparation(store, project_id)
    return project_id


def check_project_name(name: str) -> None:
    """A project name is one line of at most MAX_NAME_CHARS characters with no markdown image (pages show it
    as plain text; this keeps it so wherever it goes)."""
    name = name.strip()
    check_length(name, MAX_NAME_CHARS, "the project name")
    if (hidden := hidden_character(name)) is not None:  # line breaks and every character one_line escapes too
        raise InputError(
            f"the project name holds a line break or an invisible character ({hidden})",
            fix="type it on one line, of visible characters",
        )
    if has_image(name):
        raise InputError("the project name holds a markdown image", fix="remove the ![...](...) part")
    if name.strip().isdecimal():  # `activegrade export 2` took project "2" for project 2 (a new user's review)
        raise InputError(
            f"the project name {name.strip()!r} is a number, which commands read as a project's id",
            fix="give a name with a letter in it, e.g. 'run 2'",
            field="name",
        )


def check_settings(changes: Mapping[str, Any]) -> None:
    """Texts in new or changed project settings (as sent, before core.settings reads them) that graders' pages
    render: the guidelines, the project's and each criterion's, must render as written (``_check_guidelines``);
    the scale and its labels are ProjectSettings' check (core.scales), naming the setting."""
    _check_guidelines(changes.get("guidelines") or "", "the guidelines")
    criteria = changes.get("criteria")
    for criterion in criteria if isinstance(criteria, list) else []:
        if isinstance(criterion, Mapping) and isinstance(criterion.get("guidelines"), str):
            _check_guidelines(criterion["guidelines"], f"the guidelines of criterion {criterion.get('name')!r}")


def _check_guidelines(text: str, what: str) -> None:
    """InputError unless ``text`` renders as written (core.inputs.markup.safe_markdown): no markdown image,
    which every grader's browser would fetch, and not too large or deeply nested."""
    if has_image(text):
        raise InputError(
            f"{what} hold a markdown image, which every grader's browser would fetch from its server",
            fix="link to the picture instead ([text](url)), or describe it",
        )
    if safe_markdown(text) != text:
        raise InputError(
            f"{what} are too large or too deeply nested to render quickly",
            fix=f"keep them under {MAX_MARKDOWN_CHARS:,} characters, {MAX_NESTING} levels of nesting "
            f"and {MAX_TABLE_CELLS:,} table cells",
        )


def start_preparation(store: Store, project_id: int, *, wait: bool = False, chunk_items: int | None = None) -> bool:
    """Queue the project's preparation unless it is ready or already queued or running.

    Returns True when a job was queued. With ``wait=True`` (scripts and tests) this process runs the
    project's jobs to the end before returning. ``chunk_items`` (default
    core.jobs.preparation_job.chunk_items) sizes the chunks several workers share.
    """
    if preparation.preparation_queued(store, project_id):
        return False
    if not store.claim_preparation(project_id, stale_before=datetime.now(UTC) - preparation.STALE_AFTER):
        return False  # ready, or another session claimed it at the same moment
    enqueue_preparation(store, project_id, chunk_items)
    if wait:
        run_project_jobs(store, project_id)
    return True


def run_project_jobs(store: Store, project_id: int) -> int:
    """Run the project's waiting jobs in this process until none is queued or running; returns how
    many this process ran. A job another worker (the app's) claimed first is waited for, polling at
    the worker's interval: its end, or its holder's death making it claimable here, ends the wait."""
    worker = Worker(store, WorkerOptions(project_id=project_id))
    count = worker.run_until_idle()
    while any(job.state in job_table.ACTIVE for job in job_table.jobs(store, project_id)):
        time.sleep(worker.options.poll_s)
        count += worker.run_until_idle()
    return count
