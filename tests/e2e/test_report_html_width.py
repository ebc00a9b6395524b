"""The one-page HTML report on a phone (issue 28): opened on its own in Chromium 390 px wide, the page does
not scroll sideways (a wide table scrolls inside its own box); at a phone's and a laptop's width no setting's
name, no word of a table's header and no number in a table (the strata's sd: "0. / 52 / 7") is broken."""

from __future__ import annotations

import pytest

from core.exports.report_html import report_html
from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import ROOT
from tests.app.test_report_exports import _grade, _report

pytestmark = pytest.mark.e2e
BROKEN_NAMES = """() => [...document.querySelectorAll('.settings td:first-child')].filter((td) => {
  const text = document.createRange();
  text.selectNodeContents(td);
  return text.getClientRects().length > 1;  // one rectangle a line
}).map((td) => td.textContent)"""

BROKEN_NUMBERS = """() => [...document.querySelectorAll('td')].filter((td) => {
  if (!/^[-+]?[0-9][0-9.,]*%?$/.test(td.textContent.trim())) return false;
  const text = document.createRange();
  text.selectNodeContents(td);
  return new Set([...text.getClientRects()].map((r) => Math.round(r.top))).size > 1;
}).map((td) => td.textContent)"""

SPLIT_HEADER_WORDS = """() => [...document.querySelectorAll('th')].flatMap((th) => {
  const words = [];
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.data.matchAll(/\\S+/g)) {
      const word = document.createRange();
      word.setStart(node, match.index);
      word.setEnd(node, match.index + match[0].length);
      const lines = new Set([...word.getClientRects()].map((r) => Math.round(r.top)));
      const right = word.getBoundingClientRect().right, edge = th.getBoundingClientRect().right;
      if (lines.size > 1 || right > edge + 0.5) words.push(match[0]);  // split over lines, or past the cell
    }
  }
  return words;
})"""


def test_the_html_report_fits_a_phone(browser, tmp_path, artifacts):
    store = Store.open(f"sqlite:///{tmp_path / 'report.db'}")
    files = [(name, (ROOT / "tests" / "data" / "app" / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "A project name long enough to wrap on a phone", *files, start=False)
    start_preparation(store, pid, wait=True)
    _grade(store, pid)
    html = report_html(_report(store, pid)[0])
    for width in (390, 1000):
        page = browser.new_page(viewport={"width": width, "height": 844})
        page.set_content(html)
        page.screenshot(path=artifacts / f"report-html-{width}.png", full_page=True)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        assert page.locator("svg").count() == 2 and page.locator("svg").first.bounding_box()["width"] <= width
        assert page.locator(".settings td:first-child").count() > 20
        assert page.evaluate(BROKEN_NAMES) == [], width
        assert page.locator("th").count() > 20
        assert page.evaluate(SPLIT_HEADER_WORDS) == [], width
        assert page.locator("td", has_text="0.472").count() == 1  # the strata's sd, a number among many
        assert page.evaluate(BROKEN_NUMBERS) == [], width
        page.close()
