"""What a reader sees of the reports' Markdown: its backslash escapes taken off (core.inputs.markup.plain_text
escapes every ASCII punctuation character of the names and words the reports show literally)."""

from __future__ import annotations

import re


def shown(markdown: str) -> str:
    """``markdown`` with each backslash escape of an ASCII punctuation character replaced by the character."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
