"""JSON Schemas of the API's bodies, for the OpenAPI document (core.api.openapi); one per shape."""

from __future__ import annotations

from typing import Any

NUMBER_OR_NULL = {"type": ["number", "null"]}
INT_OR_NULL = {"type": ["integer", "null"]}
STRING_OR_NULL = {"type": ["string", "null"]}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required or properties)}


ERROR = _object(
    {"error": _object({"status": {"type": "integer"}, "message": {"type": "string"}, "field": STRING_OR_NULL})}
)
ME = _object({"name": {"type": "string"}, "role": {"type": "string", "enum": ["admin", "grader", "viewer"]}})
PROJECT_STATE = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "status": {"type": "string", "enum": ["new", "preparing", "ready", "failed"]},
        "progress": _object({"done": {"type": "integer"}, "total": {"type": "integer"}, "message": {"type": "string"}}),
        "error": STRING_OR_NULL,
        "items": INT_OR_NULL,
        "graded_items": INT_OR_NULL,
        "grades": INT_OR_NULL,
        "updated_at": {"type": "string", "format": "date-time"},
    },
    "required": ["id", "name", "status"],
}
PROJECT = {**PROJECT_STATE, "properties": {**PROJECT_STATE["properties"], "settings": {"type": "object"}}}
PROJECT_LIST = _object({"projects": {"type": "array", "items": PROJECT_STATE}})
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
            "description": "a JSON object of ProjectSettings' fields (docs/settings), with 'name' the project's name",
        },
    },
    "required": ["pool", "settings"],
}
INTERVAL = _object(
    {
        "role": {"type": "string", "enum": ["fixed_n", "anytime", "rule", "now"]},
        "name": {"type": "string"},
        "level": {"type": "number"},
        "low": {"type": "number"},
        "high": {"type": "number"},
    }
)
READING = _object(
    {
        "estimate": _object(
            {"value": NUMBER_OR_NULL, "se": NUMBER_OR_NULL, "method": {"type": "string"}, "grades": {"type": "integer"}}
        ),
        "intervals": {"type": "array", "items": INTERVAL},
        "now_when": {"type": "string"},
        "stopping": {"type": "object"},
        "forecast": {"type": "object"},
        "saving": {"type": "object"},
        "counts": {"type": "object"},
    }
)
ITEMS = _object(
    {
        "items": {"type": "array", "items": {"type": "object"}},
        "offset": {"type": "integer"},
        "limit": {"type": "integer"},
        "total": {"type": "integer"},
    }
)
CARD = {
    "type": "object",
    "properties": {
        "item_id": {"type": "string"},
        "token": {"type": "string", "description": "single use; send it back with the grade or skip"},
        "position": {"type": "integer"},
        "expires_in_s": {"type": "number"},
        "prompt": {"type": "string"},
        "response": {"type": "string"},
        "reference": {"type": "string"},
        "image": {"type": "string"},
        "image_note": {"type": "string"},
        "signals": {"type": "object"},
        "labels": {"type": "array", "items": _object({"label": {"type": "string"}, "value": {"type": "number"}})},
        "min_view_s": {"type": "number"},
    },
    "required": ["item_id", "token", "position", "prompt", "response", "labels"],
}
NEXT = _object({"item": {"oneOf": [CARD, {"type": "null"}]}, "reason": STRING_OR_NULL})
KEY = {
    "target": {"type": "string", "default": "", "description": "the target model graded ('' : the project's one)"},
    "criterion": {"type": "string", "default": "", "description": "the rubric's criterion ('' : the one question)"},
}
SKIP_REQUEST = _object({"item_id": {"type": "string"}, "token": {"type": "string"}})
GRADE_REQUEST = _object(
    {
        "item_id": {"type": "string"},
        "token": {"type": "string"},
        "label": {"type": "string", "description": "one of the item's labels"},
        "comment": {"type": "string", "default": ""},
        "shown_ms": {"type": "number", "description": "how long the item was shown (default: since next)"},
        **KEY,
    },
    ("item_id", "token", "label"),
)
OUTCOME = _object(
    {
        "status": {"type": "string", "enum": ["saved", "changed", "skipped", "undone", "refused", "not_saved"]},
        "message": {"type": "string"},
        "grade_id": INT_OR_NULL,
        "position": INT_OR_NULL,
        "item_id": STRING_OR_NULL,
    }
)
