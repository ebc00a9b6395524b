"""Text from pools and projects made safe to show: markdown that fetches nothing and renders fast, and plain text.

A markdown image (``![alt](url)``, ``![alt][ref]`` with a ``[ref]: url``
definition, nested or after escaped brackets) makes every grader's browser
fetch its URL as soon as the text is shown, which tells that server who
looked at which item and when. Links are fetched only when clicked, so they stay.

``safe_markdown`` finds images with a CommonMark parser (markdown-it-py, the
parser behind MyST and mdformat; Streamlit's own renderer is CommonMark too)
and turns each image opener ``![`` of the paragraphs that hold one into
``!\\[``, a literal ``!`` and ``[``: whatever follows can no longer be an
image. It then parses the result again and falls back to plain text should
any image remain. Text too big or too deeply nested for a browser to render
in reasonable time (the review froze a tab for 30 to 85 s with 100,000 nested
quotes, a 900-level list and a huge table) is shown as plain text.
``plain_text`` is for ids, captions and names: every character means itself.

``to_html`` renders the same text as HTML for every page that shows an item's
text (the grading card, the side-by-side card, review, records) and the
guidelines: by the same parser and the same limits, raw HTML escaped (every
``<tag>`` shows as text), links with script or data URLs refused by the
parser's link validator and opening in a new tab without a referrer, and each
image shown as a plain ``[image: alt]`` text, so the browser fetches nothing
the text names. A grader judges the text as its writer typed it, so markdown
never takes a character of it away:

- a line break is a line break (markdown-it's ``breaks``): a worked answer's
  steps, one per line, ran together into one paragraph;
- maths is shown exactly as written, delimiters included (``$...$``,
  ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``, by mdit-py-plugins' dollarmath
  and texmath parsers, in pandoc's rules: ``$5 and $10`` is no maths), in a
  code face: read as markdown, ``$\\{1,2\\}$`` lost its backslashes and
  ``$a*b*c$`` its stars. It is not typeset: a LaTeX-to-MathML converter
  passes ``\\text{<img ...>}`` through as markup;
- a star between operands (``16*8``, ``5*1/2``, ``(a+b)*(c+d)``, ``2**3``:
  a digit or a bracket on one side) is a times sign, not emphasis: GSM8K's
  ``<<5*1/2=2.5>> ... <<16*8=128>>`` showed as ``<<51/2=2.5>> ... <<168=128>>``
  with the text between in italics (evaluation lead's review). A star between
  letters (``un*believ*able``) and every other star stay CommonMark's.
"""

from __future__ import annotations

import functools
import html
import string
from collections.abc import Callable, Iterator, Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath.index import applyRule, make_block_func, make_inline_func
from mdit_py_plugins.texmath.index import rules as texmath_rules

from core.errors import one_line

MAX_MARKDOWN_CHARS = 200_000
"""Longer texts are shown as plain text (the parse alone would take seconds in the browser)."""
MAX_NESTING = 32
"""Deepest nesting of blocks (quotes, lists, emphasis) rendered as markdown; deeper texts are shown plain."""
MAX_TABLE_CELLS = 5_000
"""Most table cells rendered as markdown (a 100 x 50 table); texts with more are shown plain."""


def _image_as_text(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image rendered as the plain text ``[image: alt]``: nothing for the browser to fetch."""
    alt = renderer.renderInlineAsText(tokens[idx].children or [], options, env)
    return f"[image: {html.escape(alt)}]"


def _link_elsewhere(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """Links open in a new tab, without telling the linked site where the reader came from."""
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, idx, options, env)


CLOSING = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
"""Each maths opener the parsers read, and its closer."""


def _math_as_written(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A maths span or block shown exactly as written, its delimiters included, in a code face; a span across a
    line break ("=$<<216*27=5832>>5832", a line, "5832/27=$<<...", in a GSM8K answer) as text, its break kept."""
    token = tokens[idx]
    number = f" ({token.info})" if token.type == "math_block_eqno" else ""  # \\[ ... \\] (1)
    written = html.escape(token.markup + token.content + CLOSING.get(token.markup, token.markup) + number)
    if not token.block and "\n" in token.content:  # no maths span crosses a line: two amounts of money, as text
        return written.replace("\n", "<br />\n")
    if token.block:
        return f'<pre class="ag-math"><code>{written}</code></pre>\n'
    return f'<code class="ag-math">{written}</code>'


OPERAND_BEFORE = frozenset(string.ascii_letters + string.digits + ")]")
OPERAND_AFTER = frozenset(string.ascii_letters + string.digits + "([")
NUMERIC = frozenset(string.digits + "()[]")


def _times_sign(state: StateInline, silent: bool) -> bool:
    """A run of one or two stars between operands, a digit or a bracket on one side at least, taken as text
    before the emphasis rule sees it (module docstring)."""
    start = state.pos
    end = start
    while end < state.posMax and state.src[end] == "*":
        end += 1
    before = state.src[start - 1] if start > 0 else ""
    after = state.src[end] if end < state.posMax else ""
    operands = before in OPERAND_BEFORE and after in OPERAND_AFTER and (before in NUMERIC or after in NUMERIC)
    if end == start or end - start > 2 or not before or not after or not operands:
        return False
    if not silent:
        state.pending += state.src[start:end]
    state.pos = end
    return True


_PARSER = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING + 2}).enable(["table", "strikethrough"])
"""safe_markdown's parser: CommonMark, as Streamlit's markdown reads the text it returns."""
_HTML = MarkdownIt("commonmark", {"html": False, "breaks": True, "maxNesting": MAX_NESTING + 2}).enable(
    ["table", "strikethrough"]
)
"""to_html's parser and renderer: CommonMark with line breaks kept, maths as written and times signs (module
docstring)."""
_HTML.use(dollarmath_plugin, allow_space=False, allow_digits=False, allow_labels=False, double_inline=True)


def _whole_line_block(rule: dict) -> Callable[[StateBlock, int, int, bool], bool]:
    """texmath's block rule ``rule`` (``\\[ ... \\]``, with or without an equation label) where its closing ends
    its line; where text follows it on that line, no block, and the line is read as a paragraph: the block
    rule dropped that text, so a response could carry words no grader was shown (an attacker's review)."""
    inner = make_block_func(rule)

    def block(state: StateBlock, begin_line: int, end_line: int, silent: bool) -> bool:
        begin = state.bMarks[begin_line] + state.tShift[begin_line]
        found = applyRule(rule, state.src, begin, state.parentType == "blockquote")
        if found is None:
            return False
        end = begin + found.end()
        line_end = state.src.find("\n", end)
        if state.src[end : len(state.src) if line_end < 0 else line_end].strip():
            return False
        return inner(state, begin_line, end_line, silent)

    return block


# mdit-py-plugins' texmath plugin, brackets' rules, as it registers them (its renderers are replaced below), each
# block rule kept to whole lines
for _rule in texmath_rules["brackets"]["inline"]:
    _HTML.inline.ruler.before("escape", _rule["name"], make_inline_func(_rule))
for _rule in texmath_rules["brackets"]["block"]:
    _HTML.block.ruler.before("fence", _rule["name"], _whole_line_block(_rule))
_HTML.inline.ruler.before("emphasis", "times_sign", _times_sign)
_HTML.add_render_rule("image", _image_as_text)
_HTML.add_render_rule("link_open", _link_elsewhere)
for _math in ("math_inline", "math_inline_double", "math_single", "math_block", "math_block_eqno"):
    _HTML.add_render_rule(_math, _math_as_written)
_ESCAPED = {ord(c): "\\" + c for c in string.punctuation}


def _tokens(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _tokens(token.children)


def _image_lines(tokens: list[Token]) -> set[int] | None:
    """0-based lines of the paragraphs (headings, table rows) holding an image; None: an image whose
    lines the parser does not give (rewrite every line)."""
    lines: set[int] = set()
    for block in tokens:
        if block.type == "inline" and any(t.type == "image" for t in _tokens(block.children or [])):
            if block.map is None:
                return None
            lines.update(range(*block.map))
    return lines


def _too_complex(tokens: list[Token]) -> bool:
    flat = list(_tokens(tokens))
    deepest = max((t.level for t in flat), default=0)
    return deepest >= MAX_NESTING or sum(t.type in ("td_open", "th_open") for t in flat) > MAX_TABLE_CELLS


def _has_image(tokens: list[Token]) -> bool:
    return any(t.type == "image" for t in _tokens(tokens))


def plain_text(text: str) -> str:
    """``text`` as markdown that shows it literally: every ASCII punctuation character backslash-escaped
    (CommonMark's escapes; no emphasis, link, image, HTML, list or heading can form) and line breaks kept."""
    return "  \n".join(line.translate(_ESCAPED) for line in text.splitlines())


def one_line_plain(text: str) -> str:
    """``text`` on one line (captions, ids, names), shown literally (see plain_text)."""
    return plain_text(one_line(text))


@functools.lru_cache(maxsize=512)
def safe_markdown(text: str) -> str:
    """``text`` as markdown that fetches nothing: images made literal text, links kept; plain text
    (see plain_text) when it is over MAX_MARKDOWN_CHARS, nested deeper than MAX_NESTING or holds more
    than MAX_TABLE_CELLS table cells. Text without images comes back unchanged."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return plain_text(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the parser's line numbers count these lines
    tokens = _PARSER.parse(text)
    if _too_complex(tokens):
        return plain_text(text)
    if not _has_image(tokens):
        return text
    lines = _image_lines(tokens)
    rewritten = "\n".join(
        line.replace("![", "!\\[") if lines is None or number in lines else line
        for number, line in enumerate(text.split("\n"))
    )
    return plain_text(text) if _has_image(_PARSER.parse(rewritten)) else rewritten


def _plain_html(text: str) -> str:
    """``text`` as HTML that shows every character as itself, line breaks kept (plain_text's HTML)."""
    return "<p>" + "<br />\n".join(html.escape(line) for line in text.splitlines()) + "</p>\n"


@functools.lru_cache(maxsize=512)
def to_html(text: str) -> str:
    """``text`` rendered as markdown into HTML that runs nothing and loads nothing (see the module docstring);
    plain text (every character as itself) when it is over MAX_MARKDOWN_CHARS, nested deeper than MAX_NESTING
    or holds more than MAX_TABLE_CELLS table cells, as safe_markdown shows it."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return _plain_html(text)
    env: EnvType = {}
    tokens = _HTML.parse(text, env)
    if _too_complex(tokens):
        return _plain_html(text)
    return _HTML.renderer.render(tokens, _HTML.options, env)


def has_image(text: str) -> bool:
    """Whether ``text`` holds a markdown image (by the CommonMark parser safe_markdown uses)."""
    return _has_image(_PARSER.parse(text))
