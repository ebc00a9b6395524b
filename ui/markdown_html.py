"""Item text (markdown) as inert HTML for the grading card.

markdown-it-py in CommonMark mode with raw HTML off: every ``<tag>`` in the
text is escaped, links with script or data URLs are refused by its link
validator, and images are rendered as a plain ``[image: alt]`` text, so the
grader's browser fetches nothing the pool's text names.
"""

from __future__ import annotations

import functools
import html

from markdown_it import MarkdownIt

MAX_CHARS = 100_000
"""Longer texts are cut (with a note), so a pathological item cannot freeze the grader's tab."""


def _image_as_text(self, tokens, idx, options, env) -> str:  # noqa: ANN001 - markdown-it renderer signature
    alt = self.renderInlineAsText(tokens[idx].children or [], options, env)
    return f"[image: {html.escape(alt)}]"


def _link_elsewhere(self, tokens, idx, options, env) -> str:  # noqa: ANN001 - markdown-it renderer signature
    """Links open in a new tab, without telling the linked site where the grader came from."""
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.add_render_rule("image", _image_as_text)
    md.add_render_rule("link_open", _link_elsewhere)
    return md


def to_html(text: str) -> str:
    """``text`` rendered as markdown into HTML that runs nothing and loads nothing."""
    note = ""
    if len(text) > MAX_CHARS:
        text, note = text[:MAX_CHARS], f"<p><em>(cut after {MAX_CHARS:,} characters)</em></p>"
    return _parser().render(text) + note
