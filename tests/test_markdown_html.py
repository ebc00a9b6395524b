"""ui.markdown_html: item text as inert HTML for the grading card."""

from __future__ import annotations

from ui.markdown_html import MAX_CHARS, to_html


def test_html_is_escaped_and_markdown_rendered():
    html = to_html("**bold** <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n```python\nprint('hi')\n```")
    assert "<strong>bold</strong>" in html and "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "<pre><code" in html


def test_images_never_load_and_script_links_are_refused():
    html = to_html(
        "![inline](http://t.example/a.png) ![ref][r] [x](javascript:alert(1))\n\n[r]: http://t.example/b.png"
    )
    assert "<img" not in html and "t.example" not in html
    assert "[image: inline]" in html and "[image: ref]" in html
    assert 'href="javascript' not in html


def test_links_open_elsewhere_without_a_referrer_and_huge_text_is_cut():
    assert 'rel="noopener noreferrer nofollow"' in to_html("[site](https://example.org)")
    assert "cut after" in to_html("a" * (MAX_CHARS + 1))
