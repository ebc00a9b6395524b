"""The grading card's renderer as app_pages/grade.py still imports it: core.inputs.markup.to_html, the one
markdown renderer. Delete this module once grade.py imports to_html from core.inputs.markup."""

from __future__ import annotations

from core.inputs.markup import to_html

__all__ = ["to_html"]
