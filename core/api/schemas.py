"""JSON Schemas of the API's bodies, for the OpenAPI document (core.api.openapi); one per shape.

GET reading's body and its schema (`reading_body`, READING) are both derived from core.services.reading.Reading
and its nested dataclasses: a field added to Reading appears in both with no second edit (`json_schema` maps a
field's type to its schema; a float may be NaN, written null)."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

from core.inputs.limits import MAX_LABEL_CHARS, MAX_NAME_CHARS
from core.rubric import ALLOCATE_FOR, MAX_CRITERIA, PRIMARY
from core.services import auth
from core.services.grading import MAX_COMMENT_CHARS
from core.services.reading import (
    Interval,
    Reading,
    interval_when,
    reported_estimate,
    saving_words,
    stopping_words,
)
from core.settings import CHOICES, DEFAULTS, ProjectSettings
from core.stats.estimate import Estimate
from core.stats.forecast import StopSaving
from core.stats.validation import Validated
from core.store import UNREADABLE, json_safe

NUMBER_OR_NULL = {"type": ["number", "null"]}
INT_OR_NULL = {"type": ["integer", "null"]}
STRING_OR_NULL = {"type": ["string", "null"]}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required or properties)}


def _request(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A request body's schema: `_object`, closed to fields it does not list, as the server refuses them (a 422
    naming the field; core.api.http.Call.fields_of)."""
    return {**_object(properties, required), "additionalProperties": False}


SCALARS: dict[type, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: NUMBER_OR_NULL,
    str: {"type": "string"},
}
"""The JSON Schema of each scalar type a field may have (a float may be NaN, written null)."""
FINITE_SCALARS = {**SCALARS, float: {"type": "number"}}
"""SCALARS for values that are never NaN: a setting's."""


def json_schema(hint: Any, scalars: dict[type, dict[str, Any]] = SCALARS) -> dict[str, Any]:
    """The JSON Schema of a value of type ``hint`` as `json_safe(asdict(...))` writes it: a dataclass is the
    object of its fields, ``X | None`` X or null, a list or ``tuple[X, ...]`` an array of X, a dict an object,
    a scalar as ``scalars`` maps it; TypeError for a type they do not map."""
    if is_dataclass(hint):
        hints = get_type_hints(hint)
        return _object({f.name: json_schema(hints[f.name], scalars) for f in fields(hint)})
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:
        schema = json_schema(_bare(hint), scalars)
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return {**schema, "type": list(dict.fromkeys([*kinds, "null"]))}
    if origin is list or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        return {"type": "array", "items": json_schema(args[0], scalars)}
    if origin is dict:
        return {"type": "object"}
    if hint in scalars:
        return dict(scalars[hint])
    raise TypeError(f"no JSON Schema for the type {hint!r}: add it to core.api.schemas.SCALARS")


def _bare(hint: Any) -> Any:
    """``hint`` without its ``| None`` (TypeError for a union of two types or more besides None)."""
    if get_origin(hint) not in (Union, types.UnionType):
        return hint
    kept = [a for a in get_args(hint) if a is not type(None)]
    if len(kept) != 1:
        raise TypeError(f"no JSON Schema for the union {hint!r}: use one type, or one type or None")
    return kept[0]


ERROR = _object(
    {"error": _object({"status": {"type": "integer"}, "message": {"type": "string"}, "field": STRING_OR_NULL})}
)
ME = _object({"name": {"type": "string"}, "role": {"type": "string", "enum": list(auth.ROLES)}})
PROJECT_STATE = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "status": {
            "type": "string",
            "enum": ["new", "preparing", "ready", "failed", UNREADABLE],
            "description": f"{UNREADABLE!r}: its stored settings fail their checks (another version's, or edited by "
            "hand); ``error`` names the setting, and nothing reads the project until it is fixed or deleted",
        },
        "progress": _object({"done": {"type": "integer"}, "total": {"type": "integer"}, "message": {"type": "string"}}),
        "error": STRING_OR_NULL,
        "items": INT_OR_NULL,
        "graded_items": INT_OR_NULL,
        "grades": INT_OR_NULL,
        "updated_at": {"type": "string", "format": "date-time"},
        "warnings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "once prepared (GET projects/{id}, for admins and viewers): what the setup page warns of",
        },
    },
    "required": ["id", "name", "status"],
}
SCALE = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["binary", "likert", "custom"]},
        "labels": {
            "type": "array",
            "items": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
            "description": "[label, value in [0, 1]] pairs; needed for kind custom",
        },
    },
    "required": ["kind"],
}
RUBRIC_SETTINGS = {
    "criteria": {
        "type": "array",
        "maxItems": MAX_CRITERIA,
        "description": "a rubric: the questions every card asks together, in the card's order (none: one "
        "question, 'scale'); a bad one is a 422 naming its row (from 1) and the fix",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
                "scale": {**SCALE, "description": "its own scale (default binary)"},
                "guidelines": {"type": "string", "default": ""},
                "required": {"type": "boolean", "default": True, "description": "every card must answer it"},
            },
            "required": ["name"],
        },
    },
    "primary_criterion": {
        "type": "string",
        "default": "",
        "description": "the required criterion the design, the stopping rule and the reading follow ('' : the first)",
    },
    "allocate_for": {
        "type": "string",
        "enum": list(ALLOCATE_FOR),
        "default": PRIMARY,
        "description": "what the queue allocates grades for: the primary criterion, or all criteria together",
    },
}
"""The settings of a rubric (core.rubric), among ProjectSettings' fields."""
SETTING_SCHEMAS: dict[str, dict[str, Any]] = {"scale": SCALE, **RUBRIC_SETTINGS}
"""The settings whose schema says more than their type: the grading questions."""


def _setting_docs() -> dict[str, str]:
    """Each ProjectSettings field's attribute docstring (the string under it in core/settings.py), one line."""
    body = ast.parse(textwrap.dedent(inspect.getsource(ProjectSettings))).body[0].body
    return {
        field.target.id: " ".join(doc.value.value.split())
        for field, doc in zip(body, body[1:])
        if isinstance(field, ast.AnnAssign)
        and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
    }


def _settings_schema() -> dict[str, Any]:
    """SETTINGS: every ProjectSettings field with its type, default, allowed values (core.settings.CHOICES)
    and attribute docstring; the grading questions as SETTING_SCHEMAS describes them."""
    hints, docs, properties = get_type_hints(ProjectSettings), _setting_docs(), {}
    for f in fields(ProjectSettings):
        schema = dict(SETTING_SCHEMAS.get(f.name) or json_schema(hints[f.name], FINITE_SCALARS))
        schema.setdefault("default", json_safe(getattr(DEFAULTS, f.name)))
        if f.name in CHOICES:
            schema["enum"] = list(CHOICES[f.name])
        if f.name in docs:
            schema.setdefault("description", docs[f.name])
        properties[f.name] = schema
    return {"type": "object", "properties": properties, "additionalProperties": False}


SETTINGS = _settings_schema()
"""A project's settings (core.settings.ProjectSettings): GET project's ``settings``, and what a new project may set."""
PROJECT = {**PROJECT_STATE, "properties": {**PROJECT_STATE["properties"], "settings": SETTINGS}}
PROJECT_LIST = _object({"projects": {"type": "array", "items": PROJECT}})
CREATED = _object({"id": {"type": "integer"}, "status": {"type": "string"}})
CREATE_REQUEST = {
    "type": "object",
    "properties": {
        "pool": {
            "type": "string",
            "format": "binary",
            "description": "the pool: JSONL, CSV, Parquet, an lm-eval or Inspect log",
        },
        "samples": {"type": "string", "format": "binary", "description": "the surrogate's samples (optional)"},
        "settings": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {
                **SETTINGS,
                "properties": {"name": {"type": "string"}, **SETTINGS["properties"]},
                "required": ["name"],
            },
            "description": "a JSON object of ProjectSettings' fields (docs/settings), with 'name' the project's name",
        },
    },
    "required": ["pool", "settings"],
}
ITEMS = _object(
    {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "description": "position, item_id, the item's texts, stratum, its final grade; in a rubric project "
                "also criteria: criterion -> its final grade (null while it has none); in a comparison responses "
                "and grades, model -> its response and its final grade, in place of one response and grade",
            },
        },
        "offset": {"type": "integer"},
        "limit": {"type": "integer"},
        "total": {"type": "integer"},
    }
)
LABELS = {"type": "array", "items": _object({"label": {"type": "string"}, "value": {"type": "number"}})}
CARD = {
    "type": "object",
    "properties": {
        "item_id": {"type": "string"},
        "token": {"type": "string", "description": "single use; send it back with the grade or skip"},
        "position": {"type": "integer"},
        "expires_in_s": {"type": "number"},
        "prompt": {"type": "string"},
        "response": {"type": "string"},
        "reference": {
            **STRING_OR_NULL,
            "description": "the reference answer, where the project shows it (null: the item has none)",
        },
        "image": {"type": "string"},
        "image_note": {"type": "string"},
        "signals": {"type": "object"},
        "labels": {**LABELS, "description": "the scale's labels (a rubric's: its primary criterion's)"},
        "criteria": {
            "type": "array",
            "description": "a rubric project's criteria, in the card's order: grade them together ('labels' "
            "of POST grades); absent in a project that asks one question",
            "items": _object(
                {
                    "name": {"type": "string"},
                    "primary": {"type": "boolean", "description": "the criterion the reading follows"},
                    "required": {"type": "boolean"},
                    "guidelines": {"type": "string"},
                    "labels": LABELS,
                }
            ),
        },
        "responses": {
            "type": "array",
            "description": "a comparison's side-by-side card: every model's response, in the card's order under "
            "its side's neutral name (the model is never named); grade them together ('labels' of POST grades, "
            "side -> label); 'response' is then absent",
            "items": _object({"side": {"type": "string"}, "response": {"type": "string"}}),
        },
        "min_view_s": {"type": "number"},
    },
    "required": ["item_id", "token", "position", "prompt", "labels"],
}
NEXT = _object(
    {
        "item": {"oneOf": [CARD, {"type": "null"}]},
        "reason": STRING_OR_NULL,
        "done": {
            "type": "boolean",
            "description": "grading is over for everyone (the rule said done, the budget is graded, every item is "
            "graded); false while other graders hold the items left, or they wait for another grader",
        },
        "retry_after_s": {
            **NUMBER_OR_NULL,
            "description": "where other graders hold the items left: seconds until the first of their holds lapses",
        },
    }
)
KEY = {
    "target": {
        "type": "string",
        "default": "",
        "description": "'' (the project's one model; a comparison's responses are named by side in 'labels')",
    },
    "criterion": {
        "type": "string",
        "default": "",
        "description": "the criterion of 'label' ('' : the one question); a rubric's grades name theirs as the "
        "keys of 'labels'",
    },
}
"""A grade's key besides the item (the token's) and the grader (the caller): (item, target, criterion, grader)."""
UNDO_REQUEST = {
    **_request(
        {
            "item_id": {
                "type": "string",
                "description": "the item the grader means to undo: refused (409) where their last grade or skip is "
                "on another, so an undo sent again after a lost answer undoes nothing more",
            },
        }
    ),
    "required": [],  # optional: without it, the last action is undone whatever its item
}
SKIP_REQUEST = _request(
    {
        "item_id": {"type": "string"},
        "token": {"type": "string"},
        "shown_ms": {"type": "number", "description": "how long the item was shown (default: since next)"},
    },
    ("item_id", "token"),
)
FLAG_REQUEST = _request(
    {
        "item_id": {"type": "string"},
        "token": {
            "type": "string",
            "description": "the token GET next gave with the item: live, or spent by the caller's own grade",
        },
        "note": {"type": "string", "default": "", "maxLength": MAX_COMMENT_CHARS},
    },
    ("item_id", "token"),
)
MEMBERS = _object(
    {
        "members": {
            "type": "array",
            "items": _object({"name": {"type": "string"}, "role": {"type": "string"}, "active": {"type": "boolean"}}),
        }
    }
)
"""GET members' answer."""
MEMBERSHIP = _object(
    {"status": {"type": "string", "enum": ["assigned", "unassigned", "unchanged"]}, "message": {"type": "string"}}
)
"""PUT and DELETE members' answer."""
REVIEW_REQUEST = _request(
    {
        "item_id": {"type": "string"},
        "label": {
            "type": "string",
            "maxLength": MAX_LABEL_CHARS,
            "description": "the item's final grade, one of the scale's labels (a project that asks one question)",
        },
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string", "maxLength": MAX_LABEL_CHARS},
            "description": "a rubric item's final grades, criterion -> label, or a comparison's, side ('Response "
            "1', ...) -> label, as GET review shows its grades; a part left out keeps what it has",
        },
        "note": {"type": "string", "default": "", "maxLength": MAX_COMMENT_CHARS},
    },
    ("item_id",),
) | {"oneOf": [{"required": ["label"]}, {"required": ["labels"]}]}
"""POST review's body: a final grade, as the Review page sets it."""
REVIEW_QUEUE = _object(
    {
        "items": {
            "type": "array",
            "items": _object(
                {
                    "item_id": {"type": "string"},
                    "position": {"type": "integer"},
                    "reasons": {"type": "array", "items": {"type": "string"}},
                    "disagree": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the parts (criteria, or a comparison's sides) whose grades disagree",
                    },
                    "settled": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the parts a reviewer has set a final grade of",
                    },
                    "grades": {
                        "type": "array",
                        "items": _object(
                            {
                                "grader": {"type": "string"},
                                "part": {"type": "string"},
                                "label": {"type": "string"},
                                "comment": {"type": "string"},
                            }
                        ),
                    },
                    "flags": {
                        "type": "array",
                        "items": _object({"grader": {"type": "string"}, "note": {"type": "string"}}),
                    },
                }
            ),
        },
        "offset": {"type": "integer"},
        "limit": {"type": "integer"},
        "total": {"type": "integer"},
    }
)
"""GET review's answer: a page of the items waiting for a reviewer's final grade."""
GRADE_REQUEST = _request(
    {
        "item_id": {"type": "string"},
        "token": {"type": "string"},
        "label": {
            "type": "string",
            "maxLength": MAX_LABEL_CHARS,
            "description": "one of the item's labels (a project that asks one question)",
        },
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string", "maxLength": MAX_LABEL_CHARS},
            "description": "a rubric project's card: criterion -> one of its labels, every required criterion "
            "answered (an optional one may be left out); a comparison's side-by-side card: side ('Response 1', "
            "...) -> one of the labels, every response graded; stored together, one grade per criterion "
            "(per response, with the model that wrote it)",
        },
        "comment": {"type": "string", "default": "", "maxLength": MAX_COMMENT_CHARS},
        "shown_ms": {"type": "number", "description": "how long the item was shown (default: since next)"},
        **KEY,
    },
    ("item_id", "token"),
) | {"oneOf": [{"required": ["label"]}, {"required": ["labels"]}]}
"""POST grades' body: 'label' in a project that asks one question, 'labels' in a rubric project or a comparison."""
OUTCOME = _object(
    {
        "status": {
            "type": "string",
            "enum": [
                "saved",
                "changed",
                "unchanged",
                "skipped",
                "undone",
                "flagged",
                "reviewed",
                "refused",
                "not_saved",
            ],
        },
        "message": {"type": "string"},
        "grade_id": INT_OR_NULL,
        "position": INT_OR_NULL,
        "item_id": STRING_OR_NULL,
    }
)
GRADE_OUTCOME = OUTCOME | {
    "properties": OUTCOME["properties"] | {"next": {**NEXT, "description": "with ?then=next: GET next's answer"}}
}
"""POST grades' answer: the outcome, and with ``?then=next`` the caller's next card."""


# GET reading: its body and schema, both derived from core.services.reading.Reading ----------------------

READING_TYPES: dict[str, Any] = get_type_hints(Reading)
"""Reading's fields and their types."""

READING_RENAMED: dict[str, tuple[str, str]] = {
    "target": ("stopping", "target_half_width"),
    "graded": ("counts", "graded"),
    "skipped": ("counts", "skipped"),
    "skipped_at_stop": ("counts", "skipped_at_stop"),
    "fresh_left": ("counts", "fresh_left"),
    "fresh_low": ("forecast", "fresh_low"),
    "fresh_high": ("forecast", "fresh_high"),
    "budget": ("counts", "budget"),
    "overlap": ("counts", "overlap"),
    "audit_share": ("counts", "audit_share"),
    "saving_known": ("saving", "known"),
}
"""Reading's fields the body gives under another name, as (group, key): where activegrade.client and docs/api.md
read them."""


def reading_place(name: str) -> tuple[str, str | None]:
    """Where Reading's field ``name`` lies in GET reading's body, as (group, key): an Interval is the entry of
    ``intervals`` whose ``role`` is ``name`` (key ``name``); another dataclass (Forecast, StopSaving) spreads
    its fields into the group of its name (key None); READING_RENAMED's lie where it says; any other field is
    the key of its name in ``stopping``."""
    kind = _bare(READING_TYPES[name])
    if kind is Interval:
        return "intervals", name
    if is_dataclass(kind):
        return name, None
    return READING_RENAMED.get(name, ("stopping", name))


@dataclass(frozen=True)
class Read:
    """What GET reading renders: the project's ``reading``, the ``estimate`` it read, the pool's ``items``, each
    criterion's row (core.exports.report.criterion_rows; the one question's alone without a rubric) and the
    criterion the stopping rule reads, by name and in words (None without a rubric)."""

    reading: Reading
    estimate: Estimate
    items: int
    criteria: list[dict[str, Any]]
    criterion: str | None
    criterion_words: str | None
    waiting: int = 0
    """Items waiting for a reviewer's final grade (core.services.review.waiting)."""
    validated: Validated | None = None
    """The estimate corrected on the random reviewed sample (core.services.review.validated), as the dashboard
    shows it; None where the project grades no item twice and audits none."""
    settled: tuple[int, int] = (0, 0)
    """(settled, disagreements) of the double-graded items whose grades disagree (core.services.review
    .disagreements_settled): the correction measures graders' errors only as far as they are settled."""


STRING, INTEGER = {"type": "string"}, {"type": "integer"}
BOOLEAN = {"type": "boolean"}
CRITERION_ROW = _object(
    {
        "criterion": STRING,
        "primary": BOOLEAN,
        "required": BOOLEAN,
        "scale": STRING,
        "graded_items": INTEGER,
        "of_graded_items": INTEGER,
        "method": STRING,
        "estimate": NUMBER_OR_NULL,
        "se": NUMBER_OR_NULL,
        "missing_strata": INTEGER,
        "interval": STRING_OR_NULL,
        "when": STRING,
        "interval_level": NUMBER_OR_NULL,
        "interval_low": NUMBER_OR_NULL,
        "interval_high": NUMBER_OR_NULL,
        "fixed_n_level": NUMBER_OR_NULL,
        "fixed_n_low": NUMBER_OR_NULL,
        "fixed_n_high": NUMBER_OR_NULL,
        "anytime_low": NUMBER_OR_NULL,
        "anytime_high": NUMBER_OR_NULL,
        "estimand": STRING,
    }
)
"""One entry of GET reading's ``criteria``: a row of core.exports.report.criterion_rows."""
READING_DERIVED: tuple[tuple[tuple[str, ...], dict[str, Any], Callable[[Read], Any]], ...] = (
    (("estimate", "value"), NUMBER_OR_NULL, lambda r: r.estimate.value),
    (("estimate", "reported"), NUMBER_OR_NULL, lambda r: reported_estimate(r.reading, r.estimate)[0]),
    (("estimate", "reported_when"), STRING, lambda r: reported_estimate(r.reading, r.estimate)[1]),
    (("estimate", "se"), NUMBER_OR_NULL, lambda r: r.estimate.se),
    (("estimate", "method"), STRING, lambda r: r.estimate.method),
    (("estimate", "grades"), INTEGER, lambda r: r.estimate.n),
    (("estimate", "graded_items"), INTEGER, lambda r: r.estimate.n),
    (("now_when",), STRING, lambda r: interval_when(r.reading)),
    (("stopping", "rule"), STRING, lambda r: r.reading.regime_name),
    (("stopping", "words"), STRING, lambda r: stopping_words(r.reading)),
    (("forecast", "items_left"), INTEGER, lambda r: r.reading.items_left),
    (("saving", "words"), STRING, lambda r: saving_words(r.reading)),
    (("counts", "items"), INTEGER, lambda r: r.items),
    (("criteria",), {"type": "array", "items": CRITERION_ROW}, lambda r: r.criteria),
    (("stopping", "criterion"), STRING_OR_NULL, lambda r: r.criterion),
    (("stopping", "criterion_words"), STRING_OR_NULL, lambda r: r.criterion_words),
    (("review", "waiting_items"), INTEGER, lambda r: r.waiting),
    (("review", "validated"), json_schema(Validated | None), lambda r: r.validated and asdict(r.validated)),
    (("review", "disagreements"), INTEGER, lambda r: r.settled[1]),
    (("review", "disagreements_settled"), INTEGER, lambda r: r.settled[0]),
)
"""What the body holds besides Reading's fields, as (path, schema, value): the estimate, and what the pages
derive from the reading (its words, the items left) or beside it (the pool's size)."""


def _put(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """``value`` at ``path`` (a key, or a group and a key) of the body ``tree``."""
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value


def _put_schema(schema: dict[str, Any], path: tuple[str, ...], leaf: dict[str, Any]) -> None:
    """``leaf``, required, at ``path`` of the object ``schema``: the schema of `_put`'s value there."""
    for key in path[:-1]:
        schema = schema["properties"].setdefault(key, _object({}))
    schema["properties"][path[-1]] = leaf
    schema["required"].append(path[-1])


def reading_body(read: Read) -> dict[str, Any]:
    """GET reading's body: every field of ``read.reading`` at its `reading_place`, and READING_DERIVED's values."""
    body: dict[str, Any] = {"intervals": []}
    for path, _, value in READING_DERIVED:
        _put(body, path, value(read))
    for f in fields(Reading):
        group, key = reading_place(f.name)
        value = getattr(read.reading, f.name)
        if group == "intervals":
            body["intervals"] += [] if value is None else [{"role": key, **asdict(value)}]
        elif key is None:
            for name, part in asdict(value).items():
                _put(body, (group, name), part)
        else:
            _put(body, (group, key), value)
    if not read.reading.saving_known:  # withheld, as the dashboard withholds it (the plan's uniform size: forecast)
        body["saving"] |= {name: None for name in SAVING_NUMBERS}
    return json_safe(body)


SAVING_NUMBERS = tuple(f.name for f in fields(StopSaving))
"""The saving's numbers, null in GET reading's body until ``known`` (every stratum has 2 grades)."""


def _reading_schema() -> dict[str, Any]:
    """READING: the schema of `reading_body`, from the same places and READING_DERIVED's schemas."""
    roles = [name for name in READING_TYPES if reading_place(name)[0] == "intervals"]
    interval = _object({"role": {"type": "string", "enum": roles}, **json_schema(Interval)["properties"]})
    schema = _object({"intervals": {"type": "array", "items": interval}})
    for path, leaf, _ in READING_DERIVED:
        _put_schema(schema, path, leaf)
    for name, hint in READING_TYPES.items():
        group, key = reading_place(name)
        if group == "intervals":
            continue
        if key is None:
            for part, leaf in json_schema(_bare(hint))["properties"].items():
                _put_schema(schema, (group, part), leaf)
        else:
            _put_schema(schema, (group, key), json_schema(hint))
    return schema


READING = _reading_schema()
"""GET reading's schema."""
