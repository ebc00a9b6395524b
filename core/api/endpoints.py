"""The API's routes, declared once (ENDPOINTS): each with its method, path, handler, permission, body and
the schemas the OpenAPI document (core.api.openapi) reads. ``routes`` turns them into Starlette routes.

Every handler acts for ``call.user`` (the token's account) through the checked services: project_actions
for creating, grade_actions for the next item, grades, skips and undo (the grade page's own path), audit
for exports, and core.exports for the same files as `activegrade export` and `activegrade report`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

import pandas as pd
from sqlalchemy.exc import SQLAlchemyError
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.api import cards, schemas
from core.api.http import (
    ApiError,
    Call,
    Endpoint,
    Handler,
    json_kind,
    not_saved,
    parse_json,
    unrouted,
)
from core.api.openapi import document
from core.errors import InputError, NotSaved
from core.exports.formats import EXPORTS, export_name, exported_what
from core.exports.project_export import GRADE_FORMATS, REPORT_EXPORTED, REPORT_FORMATS, ProjectFiles, report_bytes
from core.exports.report import criterion_rows
from core.inputs.limits import MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_NAME_CHARS, MAX_REQUEST_KEY_CHARS
from core.inputs.markup import safe_markdown
from core.inputs.targets import response_column
from core.jobs import background
from core.rubric import Rubric
from core.scales import Scale
from core.services import audit, auth, grade_actions, grading, live, project_actions, review, showings, team
from core.services.comparison_reading import graded_matrix
from core.services.criteria_reading import criteria_now, design_criterion_words
from core.services.grading import MAX_COMMENT_CHARS, grader_view
from core.services.live import live_reading
from core.services.outcome import STORED, Outcome, Refused
from core.services.overview import preparation_warnings
from core.services.preparation import project_state
from core.services.side_by_side import card_responses, order_of, side_names
from core.settings import ProjectSettings
from core.store import UNREADABLE, ProjectInfo, Store, json_safe

PREFIX = "/api/v1"
PAGE_DEFAULT, PAGE_MAX = 100, 1000
"""Items per page of GET items and GET review: by default, and at most."""
PAGED = {
    "offset": {"type": "integer", "minimum": 0, "default": 0},
    "limit": {"type": "integer", "minimum": 1, "maximum": PAGE_MAX, "default": PAGE_DEFAULT},
}
"""A paged route's query parameters."""
THEN_NEXT = {"then": {"type": "string", "enum": ["next"], "description": "add the caller's next item as 'next'"}}
"""A press's query parameter: its answer carries the caller's next card too (one round trip)."""


@dataclass(frozen=True)
class Declared:
    """One route: ``path`` under PREFIX, ``summary`` and ``description`` for the document, ``body`` (None,
    "json" or "multipart") with its ``request`` schema, the ``response`` schema of a success, the ``query``
    parameters (name -> schema), the success ``status`` and the other statuses it answers with."""

    method: str
    path: str
    handler: Handler
    summary: str
    response: dict[str, Any]
    description: str = ""
    body: str | None = None
    request: dict[str, Any] | None = None
    query: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: int = 200
    errors: tuple[int, ...] = (401, 403, 404, 429)
    media: str | tuple[str, ...] = "application/json"
    """The success's content type, or those it may take (a file's, by the format asked)."""
    public: bool = False
    uploader: str | None = None
    """The action a caller needs before a multipart body is read (core.api.http.Endpoint)."""
    headers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Request headers the route reads (name -> schema), all optional."""
    repeated: int | None = None
    """The success status of the same request sent again, where it differs from ``status`` (its body the same)."""


# helpers ------------------------------------------------------------------------


def _project_id(call: Call) -> int:
    """The path's project id; 422 unless an integer."""
    raw = call.path["project_id"]
    try:
        return int(raw)
    except ValueError:
        raise ApiError(422, f"the project id must be an integer, not {raw!r}", "project_id") from None


def _project(call: Call, action: str, *, ready: bool = False) -> ProjectInfo:
    """The path's project, if the caller may see it (404 otherwise: no hint of projects they are not
    assigned to) and may perform ``action`` on it (403, AccessDenied); 409 unless prepared when ``ready``."""
    project_id = _project_id(call)
    visible = auth.visible_projects(call.store, call.user)
    try:
        if visible is not None and project_id not in visible:
            raise KeyError(project_id)
        project = call.store.project(project_id)
    except KeyError:
        raise ApiError(404, f"no project {project_id} among the projects you may see") from None
    auth.require(call.store, call.user, action)  # the role (the assignment was checked just above)
    if ready and project.status != "ready":
        raise ApiError(409, _not_ready(project))
    return project


def _page_bounds(call: Call) -> tuple[int, int]:
    """A paged route's ``offset`` and ``limit`` (PAGED), 422 outside their bounds."""
    return call.integer("offset", default=0), call.integer("limit", default=PAGE_DEFAULT, low=1, high=PAGE_MAX)


def _not_ready(project: ProjectInfo) -> str:
    """Why a project cannot be read or graded yet, and what to do: waiting helps only one still on its way (a
    failed one was told to wait until it said ready, which it never would: an integrator's review)."""
    if project.status in ("new", "preparing"):
        return f"the project is not ready ({project.status}); wait until GET {PREFIX}/projects/{project.id} says ready"
    return (
        f"the project is {project.status}: {project.error or 'no reason recorded'}; it will not become ready by "
        "itself: fix what the error names (a failed preparation is tried again from the Projects page), or "
        "create a new project"
    )


def _grader(call: Call) -> grade_actions.Acting:
    """The caller checked as a grader of the path's project, ready (grade_actions.check, once per request: the
    caller's account was read when the request was authenticated). Where the check refuses, ``_project``'s
    answer (404, 403 or 409, as for any other route), or 409 with the check's reason."""
    project_id = _project_id(call)
    try:
        acting = grade_actions.check(call.store, call.user, project_id, current=True)
    except Refused:
        _project(call, auth.GRADE, ready=True)
        raise
    return acting


COMPARES_READING = (
    "project {name!r} compares models, and the reading is one score, which would mix them: GET "
    "{prefix}/projects/{id}/report gives each model's score and each difference"
)


MANAGERS_SETTINGS = ("expected_score", "seed", "card_key", "targets")
"""Settings shown only to those who may see the dashboard: the mean grade the manager expects would anchor a
grader's grades (graders are kept blind to the estimate, and to what anyone expects of it); the seed and a
comparison's card key draw which model's response is on which side of a card, which graders are blind to; and
the names of the models compared, which graders never see."""


def _state(store: Store, project: ProjectInfo, user: auth.User | None) -> dict[str, Any]:
    """The project's state and settings, without MANAGERS_SETTINGS for a caller who may not see the dashboard."""
    if project.status in ("new", "preparing"):
        background.ensure_worker(store)  # a preparation waiting in a process that has served no page yet
    settings = {} if project.status == UNREADABLE else project.settings.to_dict()  # its error says why
    if not auth.may(store, user, auth.VIEW_DASHBOARD, project.id):
        settings = {k: v for k, v in settings.items() if k not in MANAGERS_SETTINGS}
    return project_state(store, project) | {"settings": settings}


@dataclass(frozen=True)
class Grading:
    """A grade press as the body asks it (``_grading``): ``labels``, keyed as grade_actions.stored_press keys a
    stored press ("" for one question, criteria, sides), and ``act`` on the item at a position, viewed for some
    seconds."""

    labels: dict[str, str]
    act: Callable[[int, float], Outcome]
    comment: str = ""


def _grading(call: Call, acting: grade_actions.Acting, comment: str) -> Grading:
    """How the body grades the item its token names: ``label`` (grade_actions.grade) in a project that asks one
    question, ``labels`` criterion -> label (grade_actions.grade_rubric: one grade per criterion, stored
    together) in a rubric project, ``labels`` side -> label (grade_actions.grade_card: one grade per response)
    in a comparison; 422, naming the field, for another kind's field or a malformed one. The grade's key is
    (item, target, criterion, grader): the token names the item and the caller is the grader; ``target`` is ""
    (a comparison's models are the sides of ``labels``) and ``criterion`` is "" too, a rubric's criteria being
    the keys of ``labels``."""
    project = acting.project
    settings = project.settings
    rubric = settings.rubric
    if call.text("target", default="", limit=MAX_NAME_CHARS):
        kind = "compares models graded blind, by side" if settings.compares else "grades one model"
        raise ApiError(422, f"this project {kind}, so 'target' must be \"\"", "target")
    criterion = call.text("criterion", default="", limit=MAX_NAME_CHARS)
    body = call.body or {}

    def press(action: Callable[..., Outcome], answer: Any, asked: dict[str, str]) -> Grading:
        return Grading(
            asked,
            lambda position, seconds: action(
                call.store, acting, project.id, position, answer, seconds=seconds, comment=comment
            ),
            comment,
        )

    if rubric is None and not settings.side_by_side:
        if criterion:
            raise ApiError(422, "this project grades one question, so 'criterion' must be \"\"", "criterion")
        if "labels" in body:
            raise ApiError(
                422, "this project asks one question: send its grade as 'label', one of the item's labels", "labels"
            )
        label = call.text("label", limit=MAX_LABEL_CHARS)
        return press(grade_actions.grade, label, {"": label})
    if settings.side_by_side:
        what, per, keys = "compares models side by side", "response on the card", side_names(len(settings.targets))
    else:
        what, per, keys = "grades a rubric", "criterion", rubric.names
    card = f"send 'labels', one label per {per} ({', '.join(keys)}), graded together"
    for name, given in (("label", body.get("label")), ("criterion", criterion)):
        if given:  # "" (the client's default) asks nothing
            raise ApiError(422, f"this project {what}: {card}, in place of {name!r}", name)
    labels = _labels_object(call, card)
    if settings.side_by_side:
        return press(grade_actions.grade_card, labels, labels)
    asked = {name: label for name, label in labels.items() if label}  # an optional criterion left out, as stored
    return press(grade_actions.grade_rubric, labels, asked)


def _labels_object(call: Call, card: str) -> dict[str, str]:
    """The body's ``labels``, an object criterion (or side) -> label of strings within the limits; 422 otherwise
    (``card``: what to send). Whether each is a criterion of the rubric (a response on the card) and a label of its
    scale is grade_rubric's check (grade_card's)."""
    labels = (call.body or {}).get("labels")
    if not isinstance(labels, dict):
        shown = "missing" if labels is None else f"{json_kind(labels)}, not an object"
        raise ApiError(422, f"the field 'labels' is {shown}: {card}", "labels")
    labels = {name: "" if label is None else label for name, label in labels.items()}  # null: no answer, as ""
    for name, label in labels.items():
        if len(name) > MAX_NAME_CHARS:
            raise ApiError(
                422, f"a key of 'labels' has {len(name):,} characters, more than {MAX_NAME_CHARS:,}", "labels"
            )
        if not isinstance(label, str):
            raise ApiError(422, f"the label of {name!r} must be a string, not {json_kind(label)}", f"labels.{name}")
        if len(label) > MAX_LABEL_CHARS:
            raise ApiError(
                422,
                f"the label of {name!r} has {len(label):,} characters, more than {MAX_LABEL_CHARS:,}",
                f"labels.{name}",
            )
    return labels


def _outcome(
    outcome: Outcome, project_id: int, store: Store, ok: tuple[str, ...], item_id: str | None = None
) -> Response:
    """An Outcome as JSON: HTTP 200 when its status is one of ``ok``, else 409 with status "refused";
    ``item_id`` the id of the outcome's item where the caller knows it (else read from the store)."""
    if outcome.status not in ok:
        return _press_error(409, "refused", outcome.message)
    return JSONResponse(_outcome_body(outcome, project_id, store, item_id))


def _outcome_body(outcome: Outcome, project_id: int, store: Store, item_id: str | None) -> dict[str, Any]:
    """A carried-out press's answer: its status, message, grade id, position and item id (``_outcome``)."""
    if item_id is None and outcome.position is not None:
        item_id = str(store.item(project_id, outcome.position).get("id", ""))
    return {
        "status": outcome.status,
        "message": outcome.message,
        "grade_id": outcome.grade_id,
        "position": outcome.position,
        "item_id": item_id,
    }


def _press_error(code: int, status: str, message: str, field: str | None = None) -> JSONResponse:
    """A grading press not carried out: the outcome's shape (status refused or not_saved) with the error's."""
    body = {
        "status": status,
        "message": message,
        "grade_id": None,
        "position": None,
        "item_id": None,
        "error": {"status": code, "message": message, "field": field},
    }
    return JSONResponse(body, code)


def _press(act: Callable[[], Response]) -> Response:
    """A grading press: Refused (the rules said no) as 409 and a database failure as 503, in the outcome's shape."""
    try:
        return act()
    except Refused as exc:
        return _press_error(409, "refused", str(exc), exc.field)
    except ApiError as exc:
        if exc.status != 409:
            raise
        return _press_error(409, "refused", exc.message, exc.field)
    except (NotSaved, SQLAlchemyError, OSError) as exc:
        return _press_error(503, "not_saved", not_saved(exc))


# handlers -----------------------------------------------------------------------


def me(call: Call) -> dict[str, Any]:
    return {"name": call.user.name, "role": call.user.role}


def list_projects(call: Call) -> dict[str, Any]:
    auth.require(call.store, call.user, auth.VIEW_PROJECTS)
    visible = auth.visible_projects(call.store, call.user)
    shown = [p for p in call.store.projects() if visible is None or p.id in visible]
    return {"projects": [_state(call.store, p, call.user) for p in shown]}  # each with its settings, as GET project


def create_project(call: Call) -> JSONResponse:
    """A project from the uploaded files; the caller was allowed CREATE_PROJECT before they were read (the
    route's ``uploader``)."""
    fields, files = dict(call.body), dict(call.files)
    if "settings" in files:  # a settings file sent as one (curl -F settings=@settings.json): its text
        fields["settings"] = files.pop("settings")[1]
    for part in ("pool", "samples"):
        if part in fields:  # curl -F pool=<FILE sends the text: "no file 'pool'" said none was sent (a review)
            raise ApiError(
                422, f"the part '{part}' came as a text field: send it as a file (curl -F {part}=@FILE)", part
            )
    if "pool" not in files:
        raise ApiError(422, "the multipart body has no file 'pool' (the pool of items to grade)", "pool")
    unknown = sorted(set(files) - {"pool", "samples"}) + sorted(set(fields) - {"settings"})
    if unknown:
        raise ApiError(
            422, f"unknown part {unknown[0]!r}: send 'pool', optionally 'samples', and 'settings'", unknown[0]
        )
    settings = parse_json(fields.get("settings") or "{}", "the part 'settings'", "settings")
    if not isinstance(settings, dict):
        raise ApiError(422, "the part 'settings' must be a JSON object", "settings")
    name = settings.pop("name", None)
    if not isinstance(name, str) or not name.strip():
        raise ApiError(422, "the settings need a 'name' for the project", "name")
    key = _request_key(call)

    def made() -> int | None:  # the project this create made already, sent again with its key
        if key is None:
            return None
        return project_actions.made_by_request(call.store, call.user, key, name, files["pool"], settings)

    if (earlier := made()) is not None:  # the same create sent again (its answer lost): the project it made, once
        return _created(call, earlier, 200)
    try:
        project_id = project_actions.create(
            call.store, call.user, name, files["pool"], files.get("samples"), settings, request_key=key
        )
    except InputError as exc:  # a file's error names its part (the message its row and column), a setting its own
        if (twin := made()) is not None:  # sent twice at once: the other made it (it was "the name is taken")
            return _created(call, twin, 200)
        parts = {upload[0]: part for part, upload in files.items()}
        exc.field = parts.get(exc.file) or exc.field
        raise
    background.ensure_worker(call.store)
    return _created(call, project_id, 201)


def _created(call: Call, project_id: int, status: int) -> JSONResponse:
    """A create's answer: the project's id and status, and where to poll (Location)."""
    state = {"id": project_id, "status": call.store.project(project_id).status}
    return JSONResponse(state, status, headers={"Location": f"{PREFIX}/projects/{project_id}"})


def _request_key(call: Call) -> str | None:
    """The create's Idempotency-Key header (the IETF draft's; a structured-field string's quotes taken off), or
    None; 422 where it is empty, too long or not printable ASCII."""
    key = call.headers.get("idempotency-key")
    if key is None:
        return None
    key = key.strip().removeprefix('"').removesuffix('"')
    if not key or len(key) > MAX_REQUEST_KEY_CHARS or not (key.isascii() and key.isprintable()):
        raise ApiError(
            422,
            f"the Idempotency-Key header must be 1 to {MAX_REQUEST_KEY_CHARS} printable ASCII characters (a UUID)",
            "Idempotency-Key",
        )
    return key


def project_detail(call: Call) -> dict[str, Any]:
    """The project's state and settings; once prepared, its ``warnings`` too, as the setup page gives them
    (core.services.overview.preparation_warnings), for those who may see the dashboard."""
    project = _project(call, auth.VIEW_PROJECTS)
    detail = _state(call.store, project, call.user)
    if project.status == "ready" and auth.may(call.store, call.user, auth.VIEW_DASHBOARD, project.id):
        items, _ = cards.design(call.store, project)
        detail["warnings"] = preparation_warnings(items, project.settings.proxy).words()
    return detail


def reading(call: Call) -> dict[str, Any]:
    project = _project(call, auth.VIEW_DASHBOARD, ready=True)
    if project.settings.compares:
        raise ApiError(409, COMPARES_READING.format(name=project.name, prefix=PREFIX, id=project.id), "project_id")
    _, design = cards.design(call.store, project)
    settings = project.settings
    now = live_reading(call.store, project.id, design, settings, settings.method)
    criteria = criteria_now(call.store, project.id, design, settings, settings.method, primary=now)
    criterion = None if settings.rubric is None else settings.design_criterion
    rows = criterion_rows(criteria)
    read = schemas.Read(
        now.reading,
        now.estimate,
        design.N,
        rows,
        criterion,
        design_criterion_words(settings),
        waiting=len(review.waiting(call.store, project.id)),
        validated=review.validated(call.store, project.id, design) if review.validates(settings) else None,
        settled=review.disagreements_settled(call.store, project.id),
    )
    return schemas.reading_body(read)


def items(call: Call) -> dict[str, Any]:
    """A page of the prepared items, each with its final ``grade`` (of the primary criterion in a rubric project)
    and, in a rubric project, ``criteria``: each criterion's final grade (null while it has none). A comparison's
    items give each model's ``responses`` and final ``grades`` (model -> grade, null while it has none) and no
    one ``grade``, ``response``, ``answer`` or ``label``: those of its item rows are one model's, and one grade
    over the models' would mix them (an API review read 0.5 for one model's Correct and another's Incorrect)."""
    project = _project(call, auth.VIEW_DASHBOARD, ready=True)
    table, _ = cards.design(call.store, project)
    offset, limit = _page_bounds(call)
    settings = project.settings
    page = table.iloc[offset : offset + limit]
    extra: Callable[[int, pd.Series], dict[str, Any]]
    if settings.compares:
        by_model = graded_matrix(
            call.store.target_grades(project.id), settings.targets, call.store.active_reviews(project.id)
        )
        shown = ("prompt", "reference", "stratum")

        def extra(position: int, row: pd.Series) -> dict[str, Any]:
            return {
                "responses": {t: row.get(response_column(t)) for t in settings.targets},
                "grades": {t: by_model[t].get(position) for t in settings.targets},
            }
    else:
        graded = call.store.graded_positions(project.id)
        rubric = settings.rubric
        names = rubric.names if rubric else ()
        by_criterion = {name: call.store.graded_positions(project.id, name) for name in names}
        shown = ("prompt", "response", "answer", "reference", "label", "stratum")

        def extra(position: int, row: pd.Series) -> dict[str, Any]:
            criteria = {"criteria": {n: g.get(position) for n, g in by_criterion.items()}} if rubric else {}
            return {"grade": graded.get(position), **criteria}

    columns = [c for c in shown if c in page.columns]
    rows = [
        {"position": offset + i, "item_id": str(row["id"]), **{c: row[c] for c in columns}, **extra(offset + i, row)}
        for i, (_, row) in enumerate(page.iterrows())
    ]
    return json_safe({"items": rows, "offset": offset, "limit": limit, "total": len(table)})


def next_item(call: Call, *, ahead: bool = False) -> dict[str, Any]:
    """The caller's item (reserved, with its showing token); ``ahead``: also the item the queue would most likely
    hand out after it (core.api.cards.ahead), as the card's ``ahead`` (its texts only: no token, no hold), for
    the fast grading page to paint while a press is being saved. ``?item_id=``: a card of an item the caller
    graded, to change their grade (`_earlier_card`)."""
    acting = _grader(call)
    if (earlier := call.query.get("item_id")) is not None:
        return _earlier_card(call, acting, earlier)
    return _next_card(call, acting, ahead)


def _next_card(call: Call, acting: grade_actions.Acting, ahead: bool) -> dict[str, Any]:
    """``next_item``'s answer for the grader ``_grader`` checked in this request (a grade's ``then=next`` checks
    once for both)."""
    project = acting.project
    _, design = cards.design(call.store, project)
    position = grade_actions.claim(call.store, acting, project.id, design)
    if position is None:
        left = live.nothing_left(call.store, project.id, design, project.settings, call.user.name)
        return {"item": None, "reason": left.reason, "done": left.done, "retry_after_s": left.retry_after_s}
    item = call.store.item(project.id, position)
    showing = cards.show(call.store, project.id, call.user.name, position, str(item.get("id", "")))
    card = _card(project, item, position, showing)
    if ahead:
        after = cards.ahead(call.store, project, design, call.user.name, position)
        card["ahead"] = None if after is None else _preview(call.store.item(project.id, after), after, project.settings)
    return json_safe({"item": card, "reason": None, "done": False, "retry_after_s": None})


def _earlier_card(call: Call, acting: grade_actions.Acting, item_id: str) -> dict[str, Any]:
    """A card of an item the caller graded, to change their grade, as the Grade page's B opens one: its token's
    press answers ``changed`` (or ``unchanged``); the card's ``previous`` is the press stored (``labels`` keyed
    as POST grades sends them, ``comment``). No route could change an earlier grade, and undo reaches only the
    last action (an integrator's review)."""
    project = acting.project
    position = call.store.position_of(project.id, item_id)
    if position is None:
        raise ApiError(422, f"the project has no item {item_id!r}", "item_id")
    stored, comment, _ = grade_actions.stored_press(call.store, acting, project.id, position)
    if not stored:
        raise ApiError(
            409, f"you have no grade of item {item_id!r} to change: GET next alone gives a new item", "item_id"
        )
    item = call.store.item(project.id, position)
    showing = showings.current(call.store, project.id, call.user.name, position, item_id, True)
    card = _card(project, item, position, showing) | {"previous": {"labels": stored, "comment": comment}}
    return json_safe({"item": card, "reason": None, "done": False, "retry_after_s": None})


def _card(project: ProjectInfo, item: dict[str, Any], position: int, showing: showings.Showing) -> dict[str, Any]:
    """A card as GET next gives it: the item's texts, its showing's token, the scale's labels (a rubric's
    criteria), the minimum viewing time."""
    card = {
        **_preview(item, position, project.settings),
        "item_id": showing.item_id,
        "token": showing.token,
        "position": position,
        "expires_in_s": cards.TOKEN_TTL.total_seconds(),
        "labels": _labels(project.settings.grading_scale),
        "min_view_s": grading.min_view_s(project.settings),
    }
    rubric = project.settings.rubric
    if rubric is not None:
        card["criteria"] = _criteria(rubric)
    return card


def _labels(scale: Scale) -> list[dict[str, Any]]:
    """A scale's labels as a card lists them: label and value, in the scale's order (key 1, 2, ...)."""
    return [{"label": c.label, "value": c.value} for c in scale.choices]


def _criteria(rubric: Rubric) -> list[dict[str, Any]]:
    """A rubric's criteria as a card lists them, in its order: name, whether primary or required, guidelines and
    the labels of the criterion's own scale."""
    return [
        {
            "name": c.name,
            "primary": c.name == rubric.primary,
            "required": c.required,
            "guidelines": c.guidelines,
            "labels": _labels(c.scale),
        }
        for c in rubric.criteria
    ]


def _preview(item: dict[str, Any], position: int, settings: ProjectSettings) -> dict[str, Any]:
    """What a card shows of ``item`` at ``position`` (grader_view), named by its pool id, without a token or a
    position (the card ahead; the card itself adds them). A side-by-side card's ``responses`` replace its
    ``response``: every model's response in the card's order (core.services.side_by_side.card_order), each
    under its side's neutral name, never the model's."""
    view = grader_view(item, settings)
    card = {"item_id": str(item.get("id", "")), **{k: v for k, v in view.items() if k != "id"}}
    if settings.side_by_side:
        order = order_of(settings, position)
        texts = card_responses(item, order)
        card.pop("response", None)
        card["responses"] = [
            {"side": side, "response": safe_markdown(text)} for side, text in zip(side_names(len(order)), texts)
        ]
    return card


def _shown(call: Call, project: ProjectInfo) -> showings.Showing:
    """The showing the body's ``token`` and ``item_id`` name (409 when none: used, expired or unknown; naming
    ``item_id`` where the token is live for another item)."""
    token = call.text("token", limit=100)
    item_id = call.text("item_id", limit=MAX_ID_CHARS)
    showing = cards.shown(call.store, project.id, call.user.name, token, item_id)
    given_with = None if showing is not None else showings.item_of(call.store, project.id, call.user.name, token)
    if given_with is not None:
        raise ApiError(
            409,
            f"that token was given with item {given_with!r}, not {item_id!r}: send the two as GET next gave them",
            "item_id",
        )
    if showing is None:
        raise ApiError(
            409,
            "that token names none of your current items (used, expired after "
            f"{cards.TOKEN_TTL.total_seconds() / 3600:g} hours, or for another item): GET next again",
            "token",
        )
    return showing


def grade(call: Call, *, ahead: bool = False) -> Response:
    """A grade of the item the token names; ``?then=next`` adds the caller's next card (``next_item``'s, with
    ``ahead`` passed on)."""
    _check_then(call)
    call.fields_of(schemas.GRADE_REQUEST)
    acting = _grader(call)
    comment = call.text("comment", default="", limit=MAX_COMMENT_CHARS)
    _check_shown_ms(call)
    press = _grading(call, acting, comment)
    again = functools.partial(_sent_again, call, acting, press)
    return _press(lambda: _press_card(call, acting, press.act, STORED, again, ahead))


def _press_card(
    call: Call,
    acting: grade_actions.Acting,
    act: Callable[[int, float], Outcome],
    kept: tuple[str, ...],
    again: Callable[[], dict[str, Any] | Response | None],
    ahead: bool,
) -> Response:
    """A press on the card the body's token names (a grade or a skip): ``act`` on its item, viewed for the seconds
    `_viewing_seconds` gives, once for the token (core.api.cards.press), kept where its status is one of ``kept``;
    where no live token names a card (the press sent again, or refused), ``again``'s answer (the press stored
    before: a body, or a Response), else the refusal. With ``?then=next`` a stored press's answer carries the
    caller's next card (`_saved`)."""
    project = acting.project
    try:
        showing = _shown(call, project)
        seconds = _viewing_seconds(call, showing)
        outcome = cards.press(
            call.store, project.id, call.user.name, showing.token, lambda: act(showing.position, seconds), kept
        )
    except (ApiError, Refused) as refused:  # no live token: the press sent again, or refused
        if isinstance(refused, Refused) and str(refused) != showings.USED:
            raise
        if (answer := again()) is None:
            raise
        return answer if isinstance(answer, Response) else _saved(call, acting, ahead, answer)
    if outcome.status not in kept:
        return _outcome(outcome, project.id, call.store, kept, showing.item_id)
    return _saved(call, acting, ahead, _outcome_body(outcome, project.id, call.store, showing.item_id))


def _check_then(call: Call) -> None:
    """422 for a ``then`` other than ``next``: a typo (then=nxt) was ignored, the press stored, no next card, no
    word."""
    if (then := call.query.get("then")) not in (None, "next"):
        raise ApiError(422, f"'then' takes only 'next', not {then!r}; leave it out for the press alone", "then")


def _saved(call: Call, acting: grade_actions.Acting, ahead: bool, body: dict[str, Any]) -> JSONResponse:
    """A stored press's answer ``body``, with the caller's next card where ``?then=next`` asks for it (the next
    card in the same round trip)."""
    more = {"next": _next_card(call, acting, ahead)} if call.query.get("then") == "next" else {}
    return JSONResponse(body | more)


PRESS_WAIT_S = 3.0
"""How long a press sent again waits for the first press with its token to store its grade (`_sent_again`)."""


def _sent_again(call: Call, acting: grade_actions.Acting, press: Grading) -> dict[str, Any] | Response | None:
    """The answer to a press whose token's grade is stored already (core.services.showings.spent): the stored
    press's answer (a body) where this one asks the same, so that a client that lost the first answer and sends
    it again learns it was saved, once; 409 saying what is stored where it asks another; `_once_stored`'s 503
    while the first press is still being stored; None for any other token."""
    project_id = acting.project.id
    item_id = (call.body or {}).get("item_id")
    showing = showings.spent(call.store, project_id, call.user.name, (call.body or {}).get("token"), item_id)

    def pressed(position: int) -> tuple[dict[str, str], str, int | None] | None:
        stored = grade_actions.stored_press(call.store, acting, project_id, position)
        return stored if stored[0] else None

    found = _once_stored(call, project_id, showing, pressed)
    if found is None or isinstance(found, Response):
        return found
    stored, comment, grade_id = found
    if (stored, comment) != (press.labels, press.comment.strip()):
        said = ", ".join(f"{k} {v}" if k else v for k, v in stored.items()) + (f" ({comment!r})" if comment else "")
        message = (
            f"that token's press was stored already, as {said}: to change it, GET next?item_id= gives a card of "
            "the item, whose press changes your grade"
        )
        return _press_error(409, "refused", message, "token")
    status = grade_actions.press_status(call.store, acting, project_id, showing)
    again = Outcome(status, f"{status}: the same press was sent again, and its grade is stored once", showing.position)
    return _outcome_body(dataclasses.replace(again, grade_id=grade_id), project_id, call.store, item_id)


T = TypeVar("T")


def _once_stored(
    call: Call, project_id: int, showing: showings.Showing | None, stored: Callable[[int], T]
) -> T | Response | None:
    """What ``stored`` reads of the press a spent token's ``showing`` made (truthy once stored), waiting up to
    PRESS_WAIT_S while that press is still being stored (core.services.showings.pressing: a press sent again at
    once after a client's timeout arrived then, and was refused as naming no current item, 8 of 30 retries in an
    integrator's review); a 503 to send it again where it is still not stored, or was not after all (its token
    live again); a 409 where the grader's undo took that press back (core.services.showings.taken_back); None for a
    token no press is storing (none, or another item's)."""
    grader, body = call.user.name, call.body or {}
    token = body.get("token")
    deadline = time.monotonic() + PRESS_WAIT_S
    while showing is not None:
        if found := stored(showing.position):
            return found
        if showings.taken_back(call.store, project_id, grader, token):
            return _press_error(409, "refused", showings.TAKEN_BACK, "token")
        if not showings.pressing(call.store, project_id, grader, token) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if showing is not None:  # not stored: still being stored
        unsettled = showings.pressing(call.store, project_id, grader, token)
    else:  # not spent: a token live again (the first press not kept), or none of this grader's
        unsettled = cards.shown(call.store, project_id, grader, str(token), str(body.get("item_id"))) is not None
    if not unsettled:
        return None
    message = "the first press with this token is still being stored, or was not: send it again"
    return JSONResponse(
        {"error": {"status": 503, "message": message, "field": "token"}}, 503, headers={"Retry-After": "1"}
    )


def _check_shown_ms(call: Call) -> None:
    """A malformed ``shown_ms`` refused (422) before the state's checks (core.services.grading.check_shown_ms)."""
    if (shown_ms := (call.body or {}).get("shown_ms")) is not None:
        grading.check_shown_ms(shown_ms)


def _viewing_seconds(call: Call, showing: showings.Showing) -> float:
    """How long the caller saw the card (core.services.grading.viewing_seconds): ``shown_ms`` as sent, at most
    the server's own time since it released the card, which it is when none is sent."""
    released = showing.seconds_since_released()
    sent = (call.body or {}).get("shown_ms")  # absent or null: the server's own measure
    return grading.viewing_seconds(released * 1000 if sent is None else sent, released)


def skip(call: Call) -> Response:
    """A skip of the item the token names; ``?then=next`` adds the caller's next card, as a grade's does."""
    _check_then(call)
    call.fields_of(schemas.SKIP_REQUEST)
    acting = _grader(call)
    project = acting.project
    _check_shown_ms(call)

    def act(position: int, seconds: float) -> Outcome:
        return grade_actions.skip(call.store, acting, project.id, position, seconds=seconds)

    again = functools.partial(_skipped_again, call, project.id)
    return _press(lambda: _press_card(call, acting, act, ("skipped",), again, False))


def _skipped_again(call: Call, project_id: int) -> dict[str, Any] | Response | None:
    """The answer to a skip whose token was spent by this grader's skip of its item, which stands: skipped, once
    (a client that lost the first answer and sends it again learns it was carried out, as a grade sent again
    does: `_sent_again`, whose wait for a press still being stored it shares, `_once_stored`); None for any other
    token (the item graded since, or the skip taken back)."""
    token, item_id = (call.body or {}).get("token"), (call.body or {}).get("item_id")
    showing = showings.spent(call.store, project_id, call.user.name, token, item_id)

    def done(position: int) -> str | None:  # what the press with the token did, once it is stored
        if position in call.store.skipped_by(project_id, call.user.name):
            return "skipped"
        return "graded" if call.store.grade_of(project_id, position, call.user.name) is not None else None

    found = _once_stored(call, project_id, showing, done)
    if found != "skipped":  # None, a 503 to send it again, or a grade's token: the item is graded, not skipped
        return found if isinstance(found, Response) else None
    again = Outcome("skipped", "skipped: the same press was sent again, and the item is skipped once", showing.position)
    return _outcome_body(again, project_id, call.store, item_id)


def flag(call: Call) -> Response:
    """Send the item a token names to the review queue with the caller's note (grade_actions.flag, the Grade
    page's F): its card stays the caller's, live or spent by their grade; the same flag sent again raises one."""
    call.fields_of(schemas.FLAG_REQUEST)
    acting = _grader(call)
    project_id = acting.project.id
    token = call.text("token", limit=100)
    item_id = call.text("item_id", limit=MAX_ID_CHARS)
    note = call.text("note", default="", limit=MAX_COMMENT_CHARS)
    showing = cards.shown(call.store, project_id, call.user.name, token, item_id)
    if showing is None and (spent := showings.spent(call.store, project_id, call.user.name, token, item_id)):
        graded = call.store.grade_of(project_id, spent.position, call.user.name) is not None
        showing = spent if graded else None  # a skipped item is back in the queue, no longer the caller's card
    if showing is None:
        return _press_error(
            409,
            "refused",
            "that token and item_id name neither your current card nor an item you graded with it (or it expired): "
            "send the two as GET next gave them",
            "token",
        )
    return _press(
        lambda: _outcome(
            grade_actions.flag(call.store, acting, project_id, showing.position, note),
            project_id,
            call.store,
            (review.FLAGGED,),
            showing.item_id,
        )
    )


def undo(call: Call) -> Response:
    call.fields_of(schemas.UNDO_REQUEST)
    acting = _grader(call)
    project_id = acting.project.id
    item_id = (call.body or {}).get("item_id")
    return _press(
        lambda: _outcome(
            grade_actions.undo(call.store, acting, project_id, item_id), project_id, call.store, ("undone",)
        )
    )


def review_queue(call: Call) -> dict[str, Any]:
    """A page of the items waiting for a reviewer's final grade (core.services.review.queue: flagged ones,
    disagreements, the audit share), each with why, the parts its grades disagree on, its grades and its flags;
    a comparison's parts are its sides ("Response 1", ...), as its reviewer reads them, never the models' names."""
    project = _project(call, auth.REVIEW, ready=True)
    offset, limit = _page_bounds(call)
    waiting = review.queue(call.store, call.user, project.id)
    page = waiting[offset : offset + limit]
    rows = []
    read = review.items(call.store, call.user, project.id, [entry.position for entry in page])
    for entry, shown in zip(page, read, strict=True):
        named = dict(zip(shown.order, side_names(len(shown.order))))  # a comparison's target -> its side
        rows.append(
            {
                "item_id": str(shown.item.get("id", "")),
                "position": entry.position,
                "reasons": list(entry.reasons),
                "disagree": [named.get(part, part) for part in shown.disagree],
                "settled": [named.get(part, part) for part in dict.fromkeys(shown.reviews.get("part", []))],
                "grades": [
                    {"grader": g.grader, "part": named.get(g.part, g.part), "label": g.label, "comment": g.comment}
                    for g in shown.grades.itertuples()
                ],
                "flags": [{"grader": f.grader, "note": f.note} for f in shown.flags.itertuples()],
            }
        )
    return json_safe({"items": rows, "offset": offset, "limit": limit, "total": len(waiting)})


def settle(call: Call) -> Response:
    """An item's final grade, as the Review page sets it (core.services.review: ``label`` in a project that asks
    one question, ``labels`` by criterion in a rubric project or by side in a comparison), with a note."""
    call.fields_of(schemas.REVIEW_REQUEST)
    project = _project(call, auth.REVIEW, ready=True)
    item_id = call.text("item_id", limit=MAX_ID_CHARS)
    position = call.store.position_of(project.id, item_id)
    if position is None:
        raise ApiError(422, f"the project has no item {item_id!r}", "item_id")
    note = call.text("note", default="", limit=MAX_COMMENT_CHARS)
    settings = project.settings
    labels = (call.body or {}).get("labels")
    if (settings.rubric is not None or settings.compares) != (labels is not None):
        wanted = "labels" if settings.rubric is not None or settings.compares else "label"
        raise ApiError(422, f"this project's final grades are sent as {wanted!r}", wanted)
    if labels is not None and not (
        isinstance(labels, dict) and all(isinstance(v, str | None) for v in labels.values())
    ):
        raise ApiError(422, "'labels' must map each part to a label", "labels")

    def act() -> Response:
        if settings.rubric is not None:
            outcome = review.settle_rubric(call.store, call.user, project.id, position, labels, note=note)
        elif settings.compares:
            order = order_of(settings, position)
            targets = dict(zip(side_names(len(order)), order))  # the reviewer names sides, as graders did
            if unknown := sorted(set(labels) - set(targets)):  # as a grade's card answers it: 409, its field
                raise Refused(
                    f"no side {unknown[0]!r} on this card: {', '.join(targets)}", field=f"labels.{unknown[0]}"
                )
            by_target = {targets[side]: label for side, label in labels.items()}
            outcome = review.settle_responses(call.store, call.user, project.id, position, by_target, note=note)
        else:
            label = call.text("label", limit=MAX_LABEL_CHARS)
            outcome = review.settle(call.store, call.user, project.id, position, label, note=note)
        return _outcome(outcome, project.id, call.store, ("reviewed", "unchanged"), item_id)

    return _press(act)


def members(call: Call) -> dict[str, Any]:
    """The accounts assigned to the project (core.services.team.members): name, role, whether active."""
    project = _project(call, auth.MANAGE_USERS)
    shown = team.members(call.store, project.id)
    return {"members": [{"name": u.name, "role": u.role, "active": u.active} for u in shown]}


def _membership(call: Call, change: Callable[..., Outcome]) -> dict[str, Any]:
    """An account assigned to the project or taken off it (core.services.team.assign, unassign), by the path's
    name: the same call again changes nothing, and says so."""
    project = _project(call, auth.MANAGE_USERS)
    outcome = change(call.store, call.user, project.id, call.path["name"])
    return {"status": outcome.status, "message": outcome.message}


def assign(call: Call) -> dict[str, Any]:
    return _membership(call, team.assign)


def unassign(call: Call) -> dict[str, Any]:
    return _membership(call, team.unassign)


def _download(data: bytes, mime: str, name: str) -> Response:
    """A file to save as ``name``: an ASCII ``filename`` for every client and the name itself, UTF-8 and
    percent-encoded, as ``filename*`` (RFC 6266, section 4.3); a header is Latin-1, so a project named in
    another script made the response fail."""
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
    return Response(data, media_type=mime, headers={"Content-Disposition": disposition})


def export(call: Call) -> Response:
    project = _project(call, auth.EXPORT, ready=True)
    fmt = call.choice("format", list(EXPORTS), "csv")
    texts = call.choice("texts", ["0", "1", "false", "true"], "0") in ("1", "true")
    files = ProjectFiles.of(
        call.store, project, texts=texts, task=call.query.get("task"), model=call.query.get("model")
    )
    response = _download(EXPORTS[fmt].write(files), EXPORTS[fmt].mime, export_name(files, fmt))
    audit.exported(call.store, call.user, exported_what(fmt, texts), project.id, auth.EXPORT)  # once it can be sent
    return response


def report(call: Call) -> Response:
    project = _project(call, auth.EXPORT, ready=True)
    fmt = call.choice("format", list(REPORT_FORMATS), "json")
    files = ProjectFiles.of(call.store, project)
    data = report_bytes(files.require_report(), fmt)
    audit.exported(call.store, call.user, REPORT_EXPORTED[fmt], project.id, auth.EXPORT)
    return Response(data, media_type=REPORT_FORMATS[fmt][1])


def openapi(call: Call) -> dict[str, Any]:
    return document(ENDPOINTS, PREFIX)


# the declaration ----------------------------------------------------------------

GRADE_FORMAT_NAMES = list(GRADE_FORMATS)
ENDPOINTS: tuple[Declared, ...] = (
    Declared(
        "GET", "/openapi.json", openapi, "This document (OpenAPI 3.1)", {"type": "object"}, public=True, errors=()
    ),
    Declared("GET", "/me", me, "The token's account", schemas.ME, errors=(401, 429)),
    Declared(
        "GET",
        "/projects",
        list_projects,
        "The projects the account may see, with their state",
        schemas.PROJECT_LIST,
        errors=(401, 403, 429),
    ),
    Declared(
        "POST",
        "/projects",
        create_project,
        "Create a project from a pool (and samples) file",
        schemas.CREATED,
        body="multipart",
        request=schemas.CREATE_REQUEST,
        status=201,
        uploader=auth.CREATE_PROJECT,
        description="The same checks and messages as the Projects page: a bad file is a 422 naming the file, "
        "row and fix. Preparation starts at once; poll GET /projects/{project_id} until its status is ready. "
        "With an Idempotency-Key header (a new UUID per project), the same create sent again (its answer lost) "
        "is answered 200 with the project it made; the key with another name or pool file is a 422. A name "
        "another project has is a 409.",
        errors=(401, 403, 409, 413, 422, 429),
        headers={"Idempotency-Key": {"type": "string", "minLength": 1, "maxLength": MAX_REQUEST_KEY_CHARS}},
        repeated=200,
    ),
    Declared("GET", "/projects/{project_id}", project_detail, "A project's state and settings", schemas.PROJECT),
    Declared(
        "GET",
        "/projects/{project_id}/reading",
        reading,
        "The project's reading: estimate, intervals, stopping, forecast, saving (admins and viewers)",
        schemas.READING,
        errors=(401, 403, 404, 409, 429),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/items",
        items,
        "The prepared items, a page at a time (admins and viewers)",
        schemas.ITEMS,
        query=PAGED,
        errors=(401, 403, 404, 409, 422, 429),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/next",
        next_item,
        "The caller's next item, reserved for them",
        schemas.NEXT,
        description="As the grade page's card: the item reserved for the caller (the same one until "
        "graded or skipped), with a single-use token for POST grades or skip. In a rubric project the card "
        "lists its criteria, each with its own labels, to grade together; in a comparison its responses, every "
        "model's under its side's neutral name in the card's drawn order, to grade together. With item_id, a "
        "card of an item the caller graded, to change their grade (the Grade page's B): its press answers "
        "changed, and the card's previous gives the press stored.",
        query={"item_id": {"type": "string", "description": "an item the caller graded: a card to change it"}},
        errors=(401, 403, 404, 409, 422, 429),
    ),
    Declared(
        "POST",
        "/projects/{project_id}/grades",
        grade,
        "Grade the item a token names",
        schemas.GRADE_OUTCOME,
        body="json",
        request=schemas.GRADE_REQUEST,
        query=THEN_NEXT,
        description="The grade page's own path (core.services.grade_actions.grade; in a rubric project "
        "grade_rubric: 'labels', one label per criterion, stored together on the one token; in a comparison "
        "grade_card: 'labels', one label per side, each stored with the model shown there). The same press sent "
        "again on its spent token answers saved once more and stores nothing. 409 with status refused: the hold "
        "lapsed and another grader has the item, the token is spent by another press, it came sooner than the "
        "project's min_view_s after next, or a label is not on its scale (a rubric's: or a required criterion "
        "is unanswered; a comparison's: or a side is ungraded or not on the card; its field names it, "
        "labels.<key>); 422: 'label' sent where 'labels' is asked or 'labels' in a project that asks one "
        "question; 503 with status not_saved: the database failed, send it again.",
        errors=(401, 403, 404, 409, 413, 422, 429, 503),
    ),
    Declared(
        "POST",
        "/projects/{project_id}/skip",
        skip,
        "Skip the item a token names (back to the queue)",
        schemas.GRADE_OUTCOME,
        body="json",
        request=schemas.SKIP_REQUEST,
        query=THEN_NEXT,
        errors=(401, 403, 404, 409, 413, 422, 429, 503),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/members",
        members,
        "The accounts assigned to the project",
        schemas.MEMBERS,
        description="Graders, reviewers and viewers assigned to it (admins act on every project). Admins.",
    ),
    Declared(
        "PUT",
        "/projects/{project_id}/members/{name}",
        assign,
        "Assign an account to the project",
        schemas.MEMBERSHIP,
        description="As the Team page's assignment (core.services.team.assign): the grader, reviewer or viewer "
        "named gets the project; assigned already, it answers unchanged. 409 for an admin, who acts on every "
        "project; 422 for a name no account has. Admins.",
        errors=(401, 403, 404, 409, 422, 429),
    ),
    Declared(
        "DELETE",
        "/projects/{project_id}/members/{name}",
        unassign,
        "Take an account off the project",
        schemas.MEMBERSHIP,
        description="As the Team page's (core.services.team.unassign); not assigned, it answers unchanged. Admins.",
        errors=(401, 403, 404, 409, 422, 429),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/review",
        review_queue,
        "The items waiting for a reviewer's final grade",
        schemas.REVIEW_QUEUE,
        query=PAGED,
        description="The Review page's queue (core.services.review.queue): flagged items once graded, grades that "
        "disagree, the audit share; each with its reasons, the parts its grades disagree on, its grades and "
        "flags. A comparison's parts are its sides, never the models' names. Reviewers and admins.",
    ),
    Declared(
        "POST",
        "/projects/{project_id}/review",
        settle,
        "Set an item's final grade",
        schemas.OUTCOME,
        body="json",
        request=schemas.REVIEW_REQUEST,
        description="The Review page's final grade (core.services.review.settle, settle_rubric, settle_responses): "
        "'label' in a project that asks one question, 'labels' by criterion in a rubric project or by side in a "
        "comparison, with a note; a second review of the item replaces the first. 409: the item has no grade "
        "yet, a grade of it is the caller's own, or a label is not on the scale.",
        errors=(401, 403, 404, 409, 413, 422, 429, 503),
    ),
    Declared(
        "POST",
        "/projects/{project_id}/flag",
        flag,
        "Send the item a token names to review, with a note",
        schemas.OUTCOME,
        body="json",
        request=schemas.FLAG_REQUEST,
        description="The Grade page's F (core.services.grade_actions.flag): the item goes to the Review page's "
        "queue with the note, and stays the caller's to grade or skip. The token is GET next's for the item, "
        "live or spent by the caller's own grade; a flag the caller raised on the item with the same note "
        "answers flagged again and adds none. 409: the token names none of the caller's cards, or another "
        "grader holds the item now.",
        errors=(401, 403, 404, 409, 413, 422, 429, 503),
    ),
    Declared(
        "POST",
        "/projects/{project_id}/undo",
        undo,
        "Retract the caller's last grade or skip",
        schemas.OUTCOME,
        body="json",
        request=schemas.UNDO_REQUEST,
        description="One action further back at each call (core.services.grade_actions.undo). With 'item_id', "
        "only where the caller's last grade or skip is on that item (409, field item_id, otherwise): an undo sent "
        "again after a lost answer then undoes nothing more. 422 for another field.",
        errors=(401, 403, 404, 409, 413, 422, 429, 503),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/export",
        export,
        "The grades (or another export) as a file",
        {"type": "string", "format": "binary"},
        media=tuple(sorted({e.mime for e in EXPORTS.values()})),
        query={
            "format": {"type": "string", "enum": list(EXPORTS), "default": "csv"},
            "texts": {"type": "string", "enum": ["0", "1", "false", "true"], "default": "0"},
            "task": {"type": "string"},
            "model": {"type": "string"},
        },
        description="The same bytes as `activegrade export --format FORMAT` (csv, jsonl, parquet: the grades).",
        errors=(401, 403, 404, 409, 422, 429),
    ),
    Declared(
        "GET",
        "/projects/{project_id}/report",
        report,
        "The report as JSON, Markdown or HTML",
        {"type": "object"},
        media=tuple(mime for _, mime in REPORT_FORMATS.values()),
        query={"format": {"type": "string", "enum": list(REPORT_FORMATS), "default": "json"}},
        description="The same bytes as `activegrade report --format FORMAT`.",
        errors=(401, 403, 404, 409, 422, 429),
    ),
)


def routes(store: Callable[[], Store]) -> list[Route]:
    """Starlette routes for ENDPOINTS under PREFIX, and core.api.http.unrouted's for every other path under it;
    ``store()`` gives the app's Store for each request."""
    declared = [
        Route(
            PREFIX + d.path,
            Endpoint(d.handler, d.body, store, d.public, uploader=d.uploader, query=list(d.query)),
            methods=[d.method],
        )
        for d in ENDPOINTS
    ]
    return declared + unrouted(PREFIX, declared, f"the API's routes are in {PREFIX}/openapi.json")
