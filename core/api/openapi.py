"""The OpenAPI 3.1 document, made from the routes' one declaration (core.api.endpoints.ENDPOINTS)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from core.api import schemas
from core.version import version

TITLE = "ActiveGrade API"


def document(endpoints: Iterable[Any], prefix: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints`` (core.api.endpoints.Declared) served under ``prefix``."""
    paths: dict[str, dict[str, Any]] = {}
    for declared in endpoints:
        paths.setdefault(prefix + declared.path, {})[declared.method.lower()] = _operation(declared)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": version(),
            "description": "Projects, grading, readings and exports of ActiveGrade; docs/api.md.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer", "description": "a personal API token"}},
            "schemas": {"Error": schemas.ERROR},
        },
        "security": [{"token": []}],
    }


TEXT = {"type": "string"}
"""The schema of a response body that is not JSON (a file, Markdown, HTML)."""


def _errors_of(declared: Any) -> set[int]:
    """The errors every route of its kind answers with, beside its own: a query parameter it does not take
    (422) and a database that failed (503), on every route (the document listed them on a few: an integrator's
    review); a path's project id not an integer (422) or not among the caller's (404); a body over its limit
    (413), malformed (422), or JSON's sent as another content type (415)."""
    errors = {422, 503} | ({404} if "{project_id}" in declared.path else set())
    if declared.body:
        errors |= {413, 422} | ({415} if declared.body == "json" else set())
    return errors


def _operation(declared: Any) -> dict[str, Any]:
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "integer" if name.endswith("_id") else "string"},
        }
        for name in re.findall(r"{(\w+)}", declared.path)
    ] + [
        {"name": name, "in": where, "required": False, "schema": schema}
        for where, given in (("query", declared.query), ("header", declared.headers))
        for name, schema in given.items()
    ]
    medias = (declared.media,) if isinstance(declared.media, str) else declared.media
    responses: dict[str, Any] = {
        str(status): {
            "description": HTTPStatus(status).phrase,
            "content": {m: {"schema": declared.response if m == "application/json" else TEXT} for m in medias},
        }
        for status in (declared.status, declared.repeated)
        if status is not None
    }
    for status in sorted(set(declared.errors) | _errors_of(declared)):
        responses[str(status)] = {
            "description": HTTPStatus(status).phrase,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    operation: dict[str, Any] = {
        "operationId": declared.handler.__name__,
        "summary": declared.summary,
        "parameters": parameters,
        "responses": responses,
    }
    if declared.description:
        operation["description"] = declared.description
    if declared.body:
        media = "application/json" if declared.body == "json" else "multipart/form-data"
        operation["requestBody"] = {
            "required": bool(declared.request and declared.request.get("required")),
            "content": {media: {"schema": declared.request}},
        }
    if declared.public:
        operation["security"] = []
    return operation
