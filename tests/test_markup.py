"""core.inputs.markup and core.inputs.images: pool and project text shows without fetching anything, and renders fast,
as markdown (safe_markdown) and as HTML (to_html, the grading card's)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from core.inputs.images import shown_image
from core.inputs.markup import MAX_MARKDOWN_CHARS, has_image, one_line_plain, plain_text, safe_markdown, to_html

IMAGE_ATTACKS = [
    "see ![chart](https://tracker.example/p.png)",
    "![x][ref]\n\n[ref]: https://tracker.example/r.png",  # reference-style definition
    "![x]\n\n[x]: https://tracker.example/s.png",  # shortcut reference
    "![a ![b](https://tracker.example/inner.png) c](https://tracker.example/outer.png)",  # nested brackets
    "![a [b] c](https://tracker.example/n.png)",  # balanced brackets inside the alt text
    "\\\\![x](https://tracker.example/e.png)",  # an escaped backslash, then a real image
    "![a \\] b](https://tracker.example/esc.png)",  # an escaped bracket inside the alt text
    "[![badge](https://tracker.example/b.png)](https://example.org)",  # image inside a link
    "| a | b |\n|---|---|\n| ![t](https://tracker.example/t.png) | x |",  # inside a table cell
    "> quote\n> ![q](https://tracker.example/q.png)",
    "- item\n  - ![l](https://tracker.example/l.png)",
    "# ![h](https://tracker.example/h.png)",
    "line one\r![cr](https://tracker.example/cr.png)",  # a lone carriage return as the line break
    "![x](<https://tracker.example/angle brackets.png>)",
    "![x](https://tracker.example/t.png 'title')",
]


@pytest.mark.parametrize("text", IMAGE_ATTACKS)
def test_safe_markdown_leaves_no_image_of_any_form(text):
    assert has_image(text)  # the parser sees the attack: the test can fail
    assert not has_image(safe_markdown(text))


def test_text_without_images_and_code_are_unchanged():
    text = "**bold** [link](https://example.org)\n\n```rust\nlet v = vec![1, 2];\n```\n\n`vec![3]`"
    assert safe_markdown(text) == text


def test_only_the_paragraph_with_an_image_is_rewritten():
    text = "```\nvec![1]\n```\n\n![x](https://tracker.example/p.png)"
    assert safe_markdown(text).startswith("```\nvec![1]\n```")


def _shown(html_text: str) -> str:
    """What a reader sees of ``html_text``: its text, tags dropped and entities read."""
    return unescape(re.sub(r"<[^>]+>", "", html_text))


@pytest.mark.parametrize(
    "text",
    [
        r"Area: $\int_0^1 x^2\,dx = \frac{1}{3}$ exactly",
        r"the set $\{1,2\}$ and $a*b*c$ and $$a \\ b$$",
        "so \\(a*b*c\\) holds",
        "$$\nx_1 * y_1 * z\n$$",
        "\\[\n\\{x \\mid x > 0\\}\n\\]",
        r"$\text{<img src=x onerror=alert(1)>}$",
    ],
)
def test_html_shows_maths_exactly_as_written(text):
    html_text = to_html(text)
    assert "ag-math" in html_text and "<img" not in html_text
    assert "".join(_shown(html_text).split()) == "".join(text.split())  # every character, delimiters included


def test_html_keeps_a_gsm8k_answers_times_signs_and_lines():
    answer = "She sold 48/2 = <<48/2=24>>24 clips.\nHalf: <<5*1/2=2.5>>2.5 and 16 * $8 = $<<16*8=128>>128\nSo 72."
    html_text = to_html(answer)
    assert "<em>" not in html_text and "ag-math" not in html_text  # "$8 = $" is money, not maths
    assert _shown(html_text) == answer + "\n"  # every character, each step on its own line
    assert html_text.count("<br />") == 2
    assert to_html("(a+b)*(c+d)*2 and 2**3 + 4**5") == "<p>(a+b)*(c+d)*2 and 2**3 + 4**5</p>\n"
    money = "216*27=$<<216*27=5832>>5832\nThe average price per ticket is 5832/27=$<<5832/27=216>>216"
    assert "ag-math" not in to_html(money) and _shown(to_html(money)) == money + "\n"  # its line kept
    assert "<em>believ</em>" in to_html("un*believ*able") and "<strong>bold</strong>" in to_html("**bold** 3*4")


@pytest.mark.parametrize(
    "text",
    [
        ">" * 100_000 + " ![x](https://tracker.example/deep.png)",  # 100k nested quotes
        "\n".join("  " * depth + "- x" for depth in range(900)),  # a 900-level list
        "| a | b |\n|---|---|\n" + "| x | y |\n" * 3_000,  # a 6,000-cell table
        "word " * (MAX_MARKDOWN_CHARS // 5 + 1),
    ],
    ids=["nested-quotes", "deep-list", "huge-table", "huge-text"],
)
def test_pathological_markdown_is_shown_as_plain_text(text):
    shown = safe_markdown(text)
    assert shown == plain_text(text)
    assert not has_image(shown)


def test_plain_text_shows_every_character_literally():
    hostile = "# *x* ![i](https://tracker.example/i.png) <b>b</b> $x$ :red[y] 1. [l](javascript:x)"
    shown = plain_text(hostile)
    assert not has_image(shown)
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(shown)
    assert "<img" not in html and "<a " not in html and "<em>" not in html and "<h1>" not in html
    assert one_line_plain("a\nb\u202e") == plain_text("a b\\u202e")


def test_html_is_escaped_and_markdown_rendered():
    html = to_html("**bold** <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n```python\nprint('hi')\n```")
    assert "<strong>bold</strong>" in html and "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "<pre><code" in html


@pytest.mark.parametrize("text", IMAGE_ATTACKS)
def test_html_images_never_load(text):
    html = to_html(text)
    assert "<img" not in html and "tracker.example" not in html and "[image: " in html


def test_html_images_show_as_text_and_script_links_are_refused():
    html = to_html(
        "![inline](http://t.example/a.png) ![ref][r] [x](javascript:alert(1))\n\n[r]: http://t.example/b.png"
    )
    assert "<img" not in html and "t.example" not in html
    assert "[image: inline]" in html and "[image: ref]" in html
    assert 'href="javascript' not in html


def test_html_links_open_elsewhere_without_a_referrer():
    assert 'rel="noopener noreferrer nofollow"' in to_html("[site](https://example.org)")


@pytest.mark.parametrize(
    "text",
    [
        ">" * 100_000 + " <b>x</b> ![x](https://tracker.example/deep.png)",
        "\n".join("  " * depth + "- x" for depth in range(900)),
        "| a | b |\n|---|---|\n" + "| x | y |\n" * 3_000,
        "<i>word</i> " * (MAX_MARKDOWN_CHARS // 12 + 1),
    ],
    ids=["nested-quotes", "deep-list", "huge-table", "huge-text"],
)
def test_pathological_markdown_is_html_plain_text_under_the_same_limits(text):
    html = to_html(text)
    assert html.startswith("<p>") and "<blockquote>" not in html and "<li>" not in html and "<td>" not in html
    assert "<img" not in html and "<i>" not in html and "<b>" not in html


@pytest.mark.parametrize(
    "value, external, shown",
    [
        ("https://example.org/a.png", False, None),  # off by default: the grader's browser would fetch it
        ("https://example.org/a.png", True, "https://example.org/a.png"),
        ("https://", True, None),  # no host: st.image raised before the grade buttons
        ("http://[::1", True, None),  # broken IPv6 address: urlsplit raises ValueError
        ("http://example.org:99999/a.png", True, None),  # port out of range
        ("https://exa mple.org/a.png", True, None),
        ("data:image/png;base64,iVBORw0KGgo=", False, "data:image/png;base64,iVBORw0KGgo="),
        ("data:image/png;base64,@@@", False, None),
        ("data:image/svg+xml;base64,PHN2Zz4=", False, None),
        ("data:text/html,<script>alert(1)</script>", True, None),
        ("../../../../etc/passwd", True, None),  # st.image would open a file on the server
        ("file:///etc/shadow", True, None),
        ("javascript:alert(1)", True, None),
        ("", True, None),
        (None, True, None),
    ],
)
def test_shown_image_hands_the_widget_only_valid_allowed_values(value, external, shown):
    result = shown_image(value, external)
    assert result.url == shown
    assert (result.note == "") == (shown is not None or not value)


def test_no_text_after_display_maths_on_its_line_is_dropped():
    """texmath's block rule ate the rest of the line after ``\\]`` or its equation label: a response could carry
    words no grader was shown on the card, the review or the records pages (an attacker's review)."""
    from core.inputs.markup import to_html

    for text in ("\\[x\\] (1) hidden words", "\\[x\\] hidden words"):
        assert "hidden words" in to_html(text)
    assert to_html("\\[x\\] (1)") == '<pre class="ag-math"><code>\\[x\\] (1)</code></pre>\n'  # a whole line: a block
    assert to_html("\\[x\\]  \nafter") == '<pre class="ag-math"><code>\\[x\\]</code></pre>\n<p>after</p>\n'
