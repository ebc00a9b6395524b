"""The HTTP API under /api/v1, served by the app's own web server (ui/web.py mounts ``routes``).

Starlette only (which Streamlit ships); no Streamlit here. Every request carries a personal API token
(``Authorization: Bearer ag_...``, core.services.tokens) and acts as its account, through the same checked
services as the pages (core.services.*_actions, core.services.team); every answer is JSON, an error one
``{"error": {"status", "message", "field"}}`` (core.api.http). The routes are declared once
(core.api.endpoints.ENDPOINTS), and both the Starlette routes and the OpenAPI 3.1 document
(core.api.openapi, at /api/v1/openapi.json) are made from that declaration. docs/api.md is the reference.
"""

from core.api.endpoints import PREFIX, routes

__all__ = ["PREFIX", "routes"]
