"""Projects: open the demo or a saved project, create one from uploads, follow its preparation, see its strata."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.inputs.images import EXTERNAL_IMAGES_SETTING
from core.inputs.markup import one_line_plain
from core.inputs.readers import FORMATS, UPLOAD_TYPES, load
from core.inputs.targets import TARGET_COLUMN, has_targets
from core.rubric import ALL
from core.scales import BINARY, LIKERT, parse_custom_labels
from core.services import auth, project_actions
from core.services.database import UNREADABLE, ProjectInfo
from core.services.live import ESTIMATORS, estimator_name
from core.services.outcome import Refused
from core.services.preparation import preparation_queued, waiting_for_worker
from core.services.progress import counted
from core.services.reading import Reading
from core.services.setup import (
    LEVEL,
    REGIME_CHOICES,
    REGIME_NAMES,
    STRATIFY_BY,
    planned_budget_chosen,
    proxy_choices,
)
from core.settings import DEFAULTS, MAX_MIN_VIEW_S, MAX_TARGET_HALF_WIDTH, ProjectSettings
from core.surrogate.semantic import BACKENDS
from core.surrogate.semantic.choice import DESCRIPTIONS, BackendChoice, choose_backend, choose_backend_for
from ui import access, plan, rubric_form, signin, state
from ui.glossary import STOPPING_TERM, term_help
from ui.sampling import sampling_settings
from ui.servers import from_server, server_and_model

store = state.store()
st.title("Projects")
st.caption(
    "ActiveGrade chooses which of your model's answers your experts grade, in the order that narrows the score's "
    "interval fastest, and says when enough are graded. Where a cheap surrogate's doubt predicts the grades, that "
    "takes fewer grades than a random sample for the same precision."
)

if "demo_error" in st.session_state:
    st.warning(f"The demo project could not be opened: {st.session_state.pop('demo_error')}")


@st.fragment(run_every=1.0)
def preparation_progress(project_id: int) -> None:
    """Polls the database each second; a full rerun once the job has finished (or the viewer may no
    longer see the project: a fragment's reruns skip the page's gate). Says so when no worker is at it."""
    access.fragment_guard(auth.VIEW_PROJECTS, project_id)
    info = store.project(project_id)
    if info.status != "preparing":
        st.rerun(scope="app")
    waiting = waiting_for_worker(store, project_id)
    if waiting:
        st.warning(f"Preparation is waiting: {waiting}.")
    total = max(info.progress_total, 1)
    st.progress(  # "the work goes on" beside "its worker stopped responding" read as two answers (an operator's review)
        min(info.progress_done / total, 1.0),
        text=f"{info.progress_message or 'preparing'}. You can leave this page"
        + (
            "; what is done is saved, and a worker takes the rest over."
            if waiting
            else "; the work goes on and is saved."
        ),
    )


def settings_editor(project: ProjectInfo, reading: Reading) -> None:
    """What may change after preparation: guidelines, what graders see, the stopping target, the planned budget
    (unset, the field offers the one the project uses, ProjectSettings.anytime_n0, and saving it untouched keeps it
    unset). Saved, the page reruns so that the caption above shows the new settings."""
    design = plan.design(project)
    n_items = design.N
    current = project.settings
    one_score = not current.compares  # a comparison reads no target, regime or expected score (ONE_SCORE_SETTINGS)
    suggested = current.anytime_n0(design)
    with st.expander("Grading settings", expanded=False), st.form(f"settings-{project.id}"):
        guidelines = st.text_area("Guidelines (markdown)", current.guidelines, height=160)
        show_reference = st.checkbox("Show graders the reference answer", current.show_reference)
        show_signals = st.checkbox(
            "Show graders the stratum and surrogate signals (may bias them)",
            current.show_signals,
        )
        external_images = st.checkbox(
            "Show external images (http/https URLs of the pool's image column)",
            current.external_images,
            help="Each grader's browser then fetches every image from its server when the item is shown, "
            "which tells that server who graded which item and when. Images inside the pool "
            "(data:image URIs) are always shown.",
        )
        target, regime, expected = current.target_half_width, current.regime, current.expected_score
        if one_score:
            target = st.number_input(
                f"Stop when the {LEVEL:.0%} interval's half-width is at most",
                min_value=0.001,
                max_value=MAX_TARGET_HALF_WIDTH,
                step=0.005,
                format="%.3f",
                value=float(current.target_half_width),
            )
            regime = regime_input(f"regime-{project.id}", current.regime, graded=reading.graded)
        if reading.graded:  # why the fields below are greyed out, said where they are, not only in their help
            st.caption(
                f"{'When grading may stop, n0' if one_score else 'n0'} and a budget fixed in advance are chosen "
                f"before grading: the project has {counted(reading.graded, 'grade')}, so they stay as they are."
            )
        if one_score:
            expected = expected_score_input(f"expected-{project.id}", current.expected_score)
        n0 = st.number_input(
            "Planned number of grades (n0)" if one_score else "Planned number of items (n0)",
            min_value=1,
            max_value=n_items,
            step=10,
            value=suggested,
            disabled=reading.graded > 0,
            help=(
                "The anytime interval's bets are tuned for it (the interval is narrowest near n0). Unset, it is "
                "the grades the forecast made before any grade says the target needs, and follows the target and "
                "the expected score; saving the form untouched leaves it unset. "
                if one_score
                else "The items to grade for every model: with the budget fixed in advance the queue closes there "
                "and the fixed-n intervals are read at it; the anytime-valid intervals' bets are tuned for it. "
            )
            + "A tuning picked from the grades seen would not hold the intervals' level, so it is chosen before "
            "grading.",
        )
        budget_fixed = st.checkbox(
            "The budget is fixed in advance: grade n0 items and report the fixed-n interval",
            current.budget_fixed,
            disabled=reading.graded > 0,
            help=term_help(STOPPING_TERM) + " Chosen before grading, as the stopping regime is.",
        )
        min_view = st.number_input(
            "Minimum viewing time (seconds)",
            min_value=0.0,
            max_value=MAX_MIN_VIEW_S,
            step=0.1,
            format="%.1f",
            value=float(current.min_view_s),
            help="A grade pressed sooner than this after the item appeared on the grader's screen is taken for "
            "a key held down or pressed twice, and is not stored (the card says so). 0 turns the check off, "
            "for one-word answers a practised grader reads at a glance.",
        )
        estimators = list(ESTIMATORS)
        method = st.selectbox(
            "Estimator for the report",
            estimators,
            index=estimators.index(current.method),
            format_func=estimator_name,
        )
        if st.form_submit_button("Save settings"):
            changes = {
                "guidelines": guidelines,
                "show_reference": show_reference,
                "show_signals": show_signals,
                EXTERNAL_IMAGES_SETTING: external_images,
                "target_half_width": target,
                "expected_score": expected,
                "regime": regime,
                "method": method,
                "planned_budget": planned_budget_chosen(current, int(n0), suggested, budget_fixed),
                "budget_fixed": budget_fixed,
                "min_view_s": round(float(min_view), 3),
            }
            if save_settings(project, changes):
                st.rerun()


def regime_input(key: str, current: str, graded: int = 0) -> str:
    """When grading may stop (core.settings.ProjectSettings.regime), fixed once the project has grades."""
    return st.selectbox(
        "When grading may stop",
        REGIME_CHOICES,
        index=REGIME_CHOICES.index(current),
        format_func=lambda r: REGIME_NAMES[r] + (" (the default)" if r == DEFAULTS.regime else ""),
        key=key,
        disabled=graded > 0,
        help="Planned looks: the rule looks at the grades a few times, when their information reaches set shares "
        "of what the target needs, and may stop only there; the fewest grades for a manager who stops when the "
        "dashboard says so. Any grade: the anytime-valid interval, which holds however often you look and "
        "whenever you stop, at the cost of a wider interval. A budget fixed in advance (below) overrides both. "
        + ("Chosen before grading: the project has grades now." if graded else "Chosen before grading."),
    )


def expected_score_input(key: str, current: float | None) -> float | None:
    """The mean grade the manager expects (core.settings.ProjectSettings.expected_score), blank for none."""
    return st.number_input(
        "Mean grade you expect (optional)",
        min_value=0.001,
        max_value=0.999,
        value=current,
        step=0.05,
        format="%.3f",
        placeholder="blank: the surrogate's guess",
        key=key,
        help="Your best guess of the target model's mean grade on [0, 1] (a scale's labels are mapped onto it: "
        "Likert 1-5 as 0, 0.25, 0.5, 0.75, 1, so a mean of 2 on 1-5 is 0.25), from an earlier evaluation, say. The "
        "forecast of the grades needed starts from it instead of the surrogate's own guess, which is a ranking "
        "more than a score, and the grades take over as they arrive.",
    )


NOTHING_SAVED = (
    "Nothing saved: no setting changed. A field that shows its range in red keeps its old value: type a value "
    "within the range and save again."
)
"""What a save that changed nothing says: a number typed outside a field's range is not sent, so it reads as
untouched (a manager's review saw nothing at all)."""


def save_settings(project: ProjectInfo, changes: dict[str, Any]) -> bool:
    """Save changed settings as the signed-in user (project_actions.change_settings); the refusal shown, or the
    outcome as a toast. Whether anything was saved (the page then reruns, to show it)."""
    try:
        outcome = project_actions.change_settings(store, signin.user(), project.id, changes)
    except (InputError, Refused) as exc:
        st.error(str(exc))
        return False
    if outcome.status == "unchanged":
        st.warning(NOTHING_SAVED)
        return False
    st.toast(outcome.message.capitalize())
    return True


def questions_editor(project: ProjectInfo) -> None:
    """What graders are asked (one question on the project's scale, or a rubric), while the project has no
    grades: grades are keyed by criterion and read on its scale (project_actions.change_settings refuses)."""
    current = project.settings
    with st.expander("Questions", expanded=False):
        items, grades = store.grade_counts(project.id)
        if grades or current.compares:
            st.caption(
                f"Fixed: the project has {counted(items, 'item')} graded ({counted(grades, 'grade')}, keyed by "
                "criterion)."
                if grades
                else "A comparison asks one question of each response."
            )
            return
        key = f"questions-{project.id}"
        changes = questions_form(key, current)
        stored = current.to_dict()
        unchanged = changes is None or all(stored[k] == v for k, v in changes.items())
        if st.button("Save questions", key=f"{key}_save", disabled=unchanged) and save_settings(project, changes):
            st.rerun()


def overview(project: ProjectInfo) -> None:
    """Counts for everyone; the strata, entropy and planned allocation (predicted mean grade per stratum)
    only for those who may see the dashboard: graders grade blind to them."""
    items = plan.items(project)
    sees_strata = signin.may(auth.VIEW_DASHBOARD, project.id)
    counts = st.columns(3)
    counts[0].metric("Items", f"{len(items):,}")
    counts[1].metric("Items graded", f"{len(store.graded_positions(project.id)):,}")  # grades: the Dashboard's
    changes_settings = signin.may(auth.CHANGE_SETTINGS, project.id)
    if not (sees_strata or changes_settings):
        return
    reading = plan.project_reading(project)  # once: the setup's headline and the settings' planned budget
    if sees_strata:
        counts[2].metric("Strata", plan.design(project).H, help=term_help("stratum"))
        if project.settings.compares:  # the setup's forecast reads one score, which would mix the models
            st.info(
                f"A comparison of {len(project.settings.targets)} models: the Dashboard and the report give each "
                "model's score and each difference with its interval. The forecast of the grades to a target "
                "half-width reads one score, and is not made for a comparison yet."
            )
        else:
            plan.show_setup(project, reading)
    if changes_settings:
        settings_editor(project, reading)
        questions_editor(project)


def strata_count(project: ProjectInfo) -> str:
    """The strata as prepared (small ones merged), and the setting where it differs: one count everywhere."""
    asked = project.settings.n_strata
    if project.status != "ready":
        return f"{asked} strata asked"
    made = plan.design(project).H
    return f"{made} {'stratum' if made == 1 else 'strata'}" + (
        "" if made == asked else f" ({asked} asked; small or tied ones merged)"
    )


def questions_summary(settings: ProjectSettings) -> str:
    """The project's questions in a few words: its scale, or its rubric and the criterion the design reads."""
    rubric = settings.rubric
    if rubric is None:
        return f"{settings.grading_scale.name} scale"
    together = ", allocated for all" if rubric.allocate_for == ALL else ""
    return f"rubric of {len(rubric.criteria)} criteria ({rubric.primary} primary, {settings.grading_scale.name} scale{together})"


def engine_summary(settings: ProjectSettings) -> str:
    """The backend and where its work runs, so an admin sees what a preparation asks of which server: its model
    and the allowed server its embeddings come from, and the model (and server) the surrogate answers are
    sampled with."""
    served = f" from {settings.embedding_server}" if settings.embedding_server else ""
    engine = f"backend {settings.backend}" + (f" ({settings.model}{served})" if settings.model else "")
    sampling = settings.sampling
    if not sampling:
        return engine
    where = f"from {sampling['api_base']}" if "api_base" in sampling else "here"
    return f"{engine} · sampled with {sampling['model']} {where}"


def current(project: ProjectInfo) -> None:
    st.header(one_line_plain(project.name))
    if project.status == UNREADABLE:  # nothing of it can be shown or done with settings it was not given
        st.error(f"This project cannot be opened: {one_line_plain(project.error)}. Its grades are kept.")
        return
    settings = project.settings
    st.caption(
        one_line_plain(
            f"{engine_summary(settings)} · "
            + (f"proxy {settings.proxy} · " if settings.proxy else f"stratify by {settings.stratify_by} · ")
            + f"{strata_count(project)} · {questions_summary(settings)} · "
            + (f"seed {settings.seed} · " if signin.may(auth.VIEW_DASHBOARD, project.id) else "")  # not a grader's
            + f"minimum viewing time {settings.min_view_s:g} s"
        )
    )
    if targets := settings.targets:  # the names only to those who may see the dashboard: graders grade blind
        names = f" ({one_line_plain(', '.join(targets))})" if signin.may(auth.VIEW_DASHBOARD, project.id) else ""
        st.info(f"A comparison of {len(targets)} models{names}, graded side by side; graders never see the names.")
    if project.status == "ready":
        next_steps(project)
        overview(project)
        return
    if project.status == "failed":
        st.error(f"Preparation failed: {one_line_plain(project.error)}")
        prepare_button(project, "Try again", "retry")
    elif project.status == "new" or not preparation_queued(store, project.id):
        prepare_button(project, "Prepare", "prepare")
    else:
        preparation_progress(project.id)


NEXT_STEPS = (
    ("Grade", "app_pages/grade.py", "Grade its items", ":material/rate_review:"),
    ("Dashboard", "app_pages/dashboard.py", "Follow the estimate", ":material/monitoring:"),
    ("Simulate", "app_pages/simulate.py", "Simulate the grading first", ":material/science:"),
)
"""Where a ready project leads: (page title, page, label, icon), shown to those whose role may open the page
(signin.PAGE_ACTIONS)."""


def next_steps(project: ProjectInfo) -> None:
    """The project's next steps as links, those the user's role allows (a new user's first screen said where they
    were but not where to go)."""
    steps = [s for s in NEXT_STEPS if signin.may(signin.PAGE_ACTIONS[s[0]], project.id)]
    if not steps:
        return
    query = state.link_query(project.id)
    for column, (_, page, label, icon) in zip(st.columns(len(steps)), steps, strict=True):
        column.page_link(page, label=label, icon=icon, query_params=query)


def prepare_button(project: ProjectInfo, label: str, key: str) -> None:
    """A button, for those allowed to prepare, that starts the preparation job (audited when it starts)."""
    if signin.may(auth.PREPARE_PROJECT, project.id) and st.button(label, key=key):
        try:
            project_actions.prepare(store, signin.user(), project.id)
        except Refused as exc:
            st.error(str(exc))
            return
        st.rerun()


def scale_settings(key: str, current: dict[str, Any]) -> dict[str, Any]:
    """One question's scale, starting from ``current`` (a stored scale); InputError while custom labels are
    bad. ``key`` prefixes the widgets' keys."""
    kinds = ["binary", "likert", "custom"]
    kind = st.radio(
        "Grading scale",
        kinds,
        index=kinds.index(current.get("kind", "binary")),
        horizontal=True,
        format_func={"binary": "Correct / incorrect", "likert": "Likert 1-5", "custom": "Custom labels"}.get,
        key=f"{key}_scale",
    )
    if kind == "binary":
        return BINARY.to_settings()
    if kind == "likert":
        return LIKERT.to_settings()
    labels = current.get("labels") if current.get("kind") == "custom" else None
    text = st.text_area(
        "Labels, one 'label = value' per line (values in [0, 1])",
        "\n".join(f"{label} = {value:g}" for label, value in labels)
        if labels
        else "Wrong = 0\nPartly right = 0.5\nRight = 1",
        key=f"{key}_custom_labels",
    )
    return parse_custom_labels(text).to_settings()


@st.cache_data(max_entries=4, show_spinner=False)
def _numeric_columns(name: str, data: bytes, input_format: str, columns: str) -> list[str]:
    try:
        return proxy_choices((name, data), input_format, columns)
    except InputError:
        return []  # the pool's own error is shown when the project is created


def proxy_choice(pool, input_format: str, columns: str) -> str | None:
    """The pool's numeric column chosen as the design's proxy, or None for the surrogate's agreement."""
    found = _numeric_columns(pool.name, pool.getvalue(), input_format, columns) if pool is not None else []
    return st.selectbox(
        "Proxy: an existing score to stratify on",
        [None, *found],
        format_func=lambda c: "none: the surrogate's agreement" if c is None else c,
        key="new_proxy",
        help="A judge's verdict, a reward model's score or a metric per item. It makes the strata and the "
        "predicted grades; graders do not see it unless you show them the signals.",
    )


@st.cache_data(max_entries=4, show_spinner=False)
def _backend_choice(
    pool: tuple[str, bytes], samples: tuple[str, bytes] | None, input_format: str, columns: str
) -> tuple[BackendChoice, int, str | None]:
    """The backend the uploads' answers call for, how many models the pool holds (1 unless it compares
    several, core.inputs.targets.has_targets), and why the uploads cannot be read (None: they can), from one
    read of the uploads."""
    try:
        inputs = load(pool, samples, fmt=input_format, columns=columns or None)
    except InputError as bad:
        return choose_backend([]), 1, str(bad)
    models = inputs.pool[TARGET_COLUMN].nunique() if has_targets(inputs.pool) else 1
    return choose_backend_for(inputs), int(models), None


def backend_choice(pool, samples, input_format: str, columns: str) -> tuple[str, int]:
    """The semantic backend, its default chosen from the uploads' answers (core.surrogate.semantic.choice),
    and a line saying which and why; and how many models the pool compares (1: one model's pool)."""
    choice, models, unreadable = (
        _backend_choice(
            (pool.name, pool.getvalue()),
            (samples.name, samples.getvalue()) if samples is not None else None,
            input_format,
            columns,
        )
        if pool is not None
        else (choose_backend([]), 1, None)
    )
    backend = st.selectbox(
        "Semantic backend",
        BACKENDS,
        index=BACKENDS.index(choice.backend),
        key=f"new_backend_{choice.backend}",  # a new default when new files call for another backend
        help="How two surrogate answers are judged to mean the same (the strata come from it):\n\n"
        + "\n\n".join(f"- {DESCRIPTIONS[b]}" for b in BACKENDS),
    )
    if unreadable is not None:  # said on upload, not after Create beside "no answers to judge by yet" (a review)
        st.warning(f"This upload cannot be read: {unreadable}")  # Create says it as its error
    elif pool is not None:
        st.caption(f"Suggested from the answers: **{choice.backend}**, as {choice.reason}.")
    return backend, models


def _uploads() -> tuple[Any, Any, str, str]:
    """The pool and samples files, how to read them and the columns to pick."""
    pool = st.file_uploader(
        "Pool: a table (JSONL, CSV, Parquet), an lm-eval samples file, an Inspect log (.eval, .json), "
        "a dataset's .arrow file or a .zip of its save_to_disk folder",
        type=list(UPLOAD_TYPES),
        key="new_pool",
    )
    samples = st.file_uploader(
        "Surrogate samples (optional if the pool has a samples column, repeats or epochs)",
        type=list(UPLOAD_TYPES),
        key="new_samples",
    )
    cols = st.columns(2)
    input_format = cols[0].selectbox("Format", FORMATS, key="new_format", help="auto tells them apart")
    columns = cols[1].text_input(
        "Columns to pick (optional)",
        key="new_columns",
        placeholder="prompt=instruction,response=output,label=exact_match",
        help="TARGET=SOURCE pairs, applied after reading: a dataset's columns, a metric as the label.",
    )
    return pool, samples, input_format, columns


def _embedding_server() -> dict[str, Any]:
    """The allowed server the embeddings come from and the model it serves, as the project's settings."""
    server = server_and_model("new_embedding", "Embed with a local model instead.")
    return {"model": server["model"].strip() or None, "embedding_server": server["api_base"]}


def _preparation(pool, samples, input_format: str, columns: str) -> tuple[dict[str, Any], int]:
    """The settings of the preparation (sampling, proxy, backend and its model or embedding server, strata, and
    the stopping rule's), and how many models the pool compares: a comparison is asked no stopping target,
    regime or expected score, which read one score (its Dashboard reads each model's and each difference)."""
    sampling = sampling_settings() if samples is None else None
    proxy = proxy_choice(pool, input_format, columns)
    cols = st.columns(3)
    with cols[0]:
        backend, models = backend_choice(pool, samples, input_format, columns)
        served = backend == "embedding" and from_server("Embeddings from", key="new_embedding_source")
    model = cols[1].text_input(
        "Model (name or path; blank for the default)", key="new_model", disabled=backend == "exact" or served
    )
    stratify_by = cols[2].selectbox(
        "Stratify by", STRATIFY_BY, key="new_stratify", index=STRATIFY_BY.index(DEFAULTS.stratify_by)
    )
    engine = _embedding_server() if served else {"model": model.strip() or None}
    cols = st.columns(3)
    n_strata = cols[0].number_input("Strata", 1, 20, DEFAULTS.n_strata, key="new_strata")
    seed = cols[1].number_input("Seed", 0, 2**31 - 1, DEFAULTS.seed, key="new_seed")
    settings = {
        "backend": backend,
        **engine,
        "stratify_by": stratify_by,
        "proxy": proxy,
        "input_format": input_format,
        "columns": columns.strip(),
        "n_strata": int(n_strata),
        "seed": int(seed),
        "sampling": sampling,
    }
    if models > 1:
        st.caption(
            f"A comparison of {models} models, graded side by side: its Dashboard and report give each model's "
            "score and each difference with its interval. A stopping target and its forecast read one score, so "
            "they are not asked (docs/compare.md)."
        )
        return settings, models
    target = cols[2].number_input(
        "Target half-width",
        0.001,
        MAX_TARGET_HALF_WIDTH,
        DEFAULTS.target_half_width,
        step=0.005,
        format="%.3f",
        key="new_target",
    )
    regime = regime_input("new_regime", DEFAULTS.regime)
    expected = expected_score_input("new_expected", None)
    return settings | {"target_half_width": float(target), "expected_score": expected, "regime": regime}, models


def _grading(rubric: bool) -> dict[str, Any] | None:
    """The settings graders see: guidelines, the reference answer, the questions (a rubric offered where
    ``rubric``: a comparison asks one question of each response, so far); None while those are bad."""
    guidelines = st.text_area("Guidelines for graders (markdown)", key="new_guidelines")
    show_reference = st.checkbox("Show graders the reference answer", DEFAULTS.show_reference, key="new_show_reference")
    questions = questions_form("new", DEFAULTS, rubric=rubric)
    if questions is None:
        return None
    return {"guidelines": guidelines, "show_reference": show_reference, **questions}


def questions_form(key: str, current: ProjectSettings, *, rubric: bool = True) -> dict[str, Any] | None:
    """What graders are asked, starting from ``current``'s: one question on a scale (``scale``, no criteria) or,
    where ``rubric`` offers it, a rubric (``criteria``, ``primary_criterion``, ``allocate_for``); None, with the
    error shown, while the labels or a criterion are bad. ``key`` prefixes the widgets' keys."""
    if rubric and rubric_form.uses_rubric(f"{key}_rubric", current):
        return rubric_form.rubric_editor(key, current)
    try:
        scale = scale_settings(key, current.scale)
    except InputError as exc:
        st.error(f"Custom labels: {exc}")
        return None
    return {"scale": scale, "criteria": [], "primary_criterion": "", "allocate_for": DEFAULTS.allocate_for}


def new_project() -> None:
    with st.expander("New project", expanded=not store.projects()):
        name = st.text_input("Name", key="new_name")
        pool, samples, input_format, columns = _uploads()
        preparation, models = _preparation(pool, samples, input_format, columns)
        grading = _grading(rubric=models == 1)
        if st.button("Create project", type="primary", key="create", disabled=grading is None):
            if pool is None:
                st.error("Choose a pool file first.")
                return
            pool_upload = (pool.name, pool.getvalue())
            samples_upload = (samples.name, samples.getvalue()) if samples else None
            settings = preparation | grading
            try:
                project_id = project_actions.create(store, signin.user(), name, pool_upload, samples_upload, settings)
            except (InputError, Refused) as exc:
                st.error(str(exc))
                return
            state.select_project(project_id)
            st.rerun()


def all_projects() -> None:
    projects = signin.visible(store.projects())
    st.header("All projects" if signin.may(auth.CREATE_PROJECT) else "Your projects")
    top = st.columns([1, 1, 3])
    if signin.may(auth.CREATE_PROJECT) and top[0].button("Open the demo", key="demo"):
        try:
            state.select_project(project_actions.open_demo(store, signin.user()))
            st.rerun()
        except (InputError, Refused) as exc:
            st.error(str(exc))
    if not projects:
        st.caption("No project yet.")
        return
    table = pd.DataFrame(
        [
            {"id": p.id, "name": p.name, "status": p.status, "created": p.created_at.strftime("%Y-%m-%d %H:%M")}
            for p in projects
        ]
    )
    st.caption("Choose a row to open its project.")
    version = st.session_state.setdefault("projects-table-version", 0)
    chosen = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=f"projects-table-{version}",
    )
    if chosen.selection.rows:
        st.session_state["projects-table-version"] = version + 1  # a fresh table: no choice left standing
        state.select_project(int(table.iloc[chosen.selection.rows[0]]["id"]))
        st.rerun()
    names = {p.id: p.name for p in projects}
    if not signin.may(auth.DELETE_PROJECT):
        return
    with st.expander("Delete a project"):
        victim = st.selectbox("Project to delete", list(names), format_func=names.get, key="delete_choice")
        sure = st.checkbox("Yes, delete it with all its grades", key="delete_sure")
        if st.button("Delete", disabled=not sure, key="delete"):
            try:
                project_actions.delete(store, signin.user(), victim)
            except Refused as exc:
                st.error(str(exc))
                return
            if st.session_state.get("project_id") == victim:
                state.select_project(None)
            st.rerun()


project = state.current_project()
if project is not None:
    current(project)
    st.divider()
if signin.may(auth.CREATE_PROJECT):
    new_project()
all_projects()
