"""The grading card in a real Chromium against a real server: a key press grades exactly the item
on screen, no card ever mixes two items, and sign-in sessions survive a reload and a new tab but
not a sign-out, disabling or a password change."""

from __future__ import annotations

import os
import random
import signal

import pandas as pd
import pytest

from core.services import account_writes, auth, grading
from core.store import Store, accounts
from core.store.store import SKIP, UNDO
from core.testing.appserver import TIMEOUT_MS, shown_for
from tests import browser_sign_in

pytestmark = pytest.mark.e2e
PASSWORD = "e2e-test-password"
N_ITEMS = 80


def distinct_pool(n: int) -> pd.DataFrame:
    """Items whose every text names its own id, with long responses (several screens' worth)."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    rng = random.Random(7)
    return pd.DataFrame(
        {
            "id": [f"it{k:03d}" for k in range(n)],
            "prompt": [f"PROMPT-OF-it{k:03d}: explain item {k}." for k in range(n)],
            "response": [
                f"RESPONSE-OF-it{k:03d} " + " ".join(rng.choice(words) for _ in range(400)) + f" END-OF-it{k:03d}"
                for k in range(n)
            ],
            "semantic_entropy": [(k % 3) * 0.4 + rng.random() * 0.1 for k in range(n)],
            "agreement": [1 - (k % 3) / 3 for k in range(n)],
            "stratum": [k % 3 for k in range(n)],
        }
    )


# Installed before the app's scripts: a keydown listener on window (capture) that runs before the
# card's own, logging what was on screen at each press; and a DOM observer that checks, after every
# change, that the card's id, prompt and response all belong to one item.
CLOCKS_MS = 20
"""How far apart this page's key watcher and the grading card's own key handler may read the clock."""

WATCH = """
window.__presses = []; window.__mixed = []; window.__cards = 0;
window.addEventListener('keydown', (e) => {
  const card = document.querySelector('.ag-card');
  window.__presses.push({key: e.key, t: performance.now(), item: card ? card.dataset.agItem : null,
    state: card ? card.dataset.agState : null, shownAt: card && card.dataset.agShownAt ? Number(card.dataset.agShownAt) : null});
}, true);
const check = () => {
  for (const card of document.querySelectorAll('.ag-card')) {
    const item = card.dataset.agItem; if (!item) continue;
    const id = card.querySelector('.ag-id').textContent;
    const prompt = card.querySelector('.ag-prompt').textContent;
    const response = card.querySelector('.ag-response').textContent;
    const owners = [id, prompt, response].map((t) => (t.match(/it\\d{3}/) || [null])[0]);
    if (owners.some((o) => o !== item)) window.__mixed.push({item, owners});
  }
  if (document.querySelectorAll('.ag-card').length > 1) window.__mixed.push({two_cards: true});
};
new MutationObserver(() => { window.__cards += 1; check(); }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
"""


@pytest.fixture
def pool_project(shared_server, request):
    store = Store.open(shared_server.db_url)
    # anytime: a queue the stopping rule never closes, so every test here grades until the pool runs out
    settings = {"seed": 1, "regime": "anytime"}
    pid = store.create_project(f"Pairs {request.node.name}", settings, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, distinct_pool(N_ITEMS))
    return store, pid


def test_presses_in_pairs_grade_only_items_seen_and_no_card_is_mixed(browser, shared_server, pool_project, artifacts):
    server = shared_server
    store, pid = pool_project
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(WATCH)
    page.goto(f"{server.url}/grade?project={pid}&grader=pairs")
    min_view_ms = grading.MIN_VIEW_S * 1000
    rng = random.Random(12)
    for pair in range(30):  # 60 presses: Y,Y and Y,N, the second 50-400 ms after the first
        shown_for(page, (min_view_ms + rng.randint(20, 300)) / 1000)
        page.keyboard.press("y")
        page.wait_for_timeout(rng.randint(50, 400))  # the interval under test, not a wait for a condition
        page.keyboard.press("y" if pair % 2 else "n")
    page.wait_for_function("() => document.querySelector('.ag-card').dataset.agState !== 'sending'", timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "grade-pairs.png")
    presses = page.evaluate("window.__presses")
    mixed = page.evaluate("window.__mixed")
    assert len(presses) == 60 and page.evaluate("window.__cards") > 30
    assert mixed == [], mixed[:5]

    def seen(margin_ms: float) -> set[str]:
        """Items pressed while shown, not in flight, for at least the minimum viewing time plus ``margin_ms``.
        The card times a press in its own key handler, a few ms after this page's watcher: a press within
        CLOCKS_MS of the minimum may fall either side of it (the grade's stored seconds are the card's)."""
        return {
            p["item"]
            for p in presses
            if p["item"]
            and p["shownAt"] is not None
            and p["state"] != "sending"
            and p["t"] - p["shownAt"] >= min_view_ms + margin_ms
        }

    grades = store.grades(pid)
    ids = store.load_items(pid)["id"]
    graded = [ids[p] for p in grades["position"]]
    pressed_before = {p["item"] for p in presses}
    assert set(graded) <= pressed_before  # every grade's item was on screen at a press
    assert len(graded) == len(set(graded)), sorted(graded)  # one grade per item
    assert seen(CLOCKS_MS) <= set(graded) <= seen(-CLOCKS_MS), (sorted(graded), sorted(seen(0)))
    assert len(seen(CLOCKS_MS)) > 15  # the pairs' first presses at least
    assert (grades["seconds"] >= grading.MIN_VIEW_S).all()


def test_keys_scroll_a_long_response_from_the_card(browser, shared_server):
    """The response scrolls in its own box, which the card's focus does not reach: PageDown, Space, ArrowDown
    and End scroll it from the card (Shift+Space and Home back), and a grade is still one key away. A list's
    markers are drawn inside the box. At 1280 x 720 the box starts in the window's upper part."""
    store = Store.open(shared_server.db_url)
    pid = store.create_project("Long responses", {"seed": 1, "regime": "anytime"}, {"pool": ("pool.jsonl", b"{}\n")})
    items = distinct_pool(6)
    long = "- a first point\n- a second point\n\n" + items["response"].str.repeat(6)  # about ten boxes' worth
    store.save_items(pid, items.assign(response=long))
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{shared_server.url}/grade?project={pid}&grader=scroller")
    page.wait_for_function("() => document.querySelector('.ag-card[data-ag-item]')", timeout=TIMEOUT_MS)
    top = "() => document.querySelector('.ag-response').scrollTop"
    # a list's markers lie inside the box, not on its border (they sit left of each item's text)
    inset = "() => document.querySelector('.ag-response li').getBoundingClientRect().left - document.querySelector('.ag-response').getBoundingClientRect().left"
    assert page.evaluate(inset) >= 20
    # on this laptop's window the card starts high enough that the response box shows a good part of itself
    shown = "() => { const r = document.querySelector('.ag-response').getBoundingClientRect(); return Math.min(r.bottom, innerHeight) - r.top; }"
    assert page.evaluate(shown) >= 320, page.evaluate(shown)  # 252 px under Streamlit's own title and padding
    assert page.evaluate(
        "() => { const b = document.querySelector('.ag-response'); return b.scrollHeight > b.clientHeight; }"
    )
    steps = []
    for key in ("PageDown", "Space", "ArrowDown", "Shift+Space", "End", "Home"):
        page.keyboard.press(key)
        steps.append(page.evaluate(top))
    assert steps[0] > 100 and steps[1] > steps[0] and steps[2] > steps[1] and steps[3] < steps[2], steps
    at_end = page.evaluate(
        "() => { const b = document.querySelector('.ag-response'); return b.scrollHeight - b.clientHeight; }"
    )
    assert abs(steps[4] - at_end) <= 1 and steps[5] == 0, steps
    item = page.evaluate("() => document.querySelector('.ag-card').dataset.agItem")
    shown_for(page, grading.MIN_VIEW_S + 0.1)
    page.keyboard.press("y")
    page.wait_for_function(f"() => document.querySelector('.ag-card').dataset.agItem !== '{item}'", timeout=TIMEOUT_MS)
    ids = store.load_items(pid)["id"]
    assert [ids[p] for p in store.grades(pid)["position"]] == [item]


def long_prompt_card(browser, server, name: str, viewport: dict[str, int]):
    """A page on the grading card of a new project ``name`` whose items have long prompts and responses."""
    store = Store.open(server.db_url)
    pid = store.create_project(name, {"seed": 1, "regime": "anytime"}, {"pool": ("pool.jsonl", b"{}\n")})
    items = distinct_pool(6)
    store.save_items(pid, items.assign(prompt=items["prompt"].str.repeat(60), response=items["response"].str.repeat(6)))
    page = browser.new_page(viewport=viewport)
    page.goto(f"{server.url}/grade?project={pid}&grader=reader")
    page.wait_for_function("() => document.querySelector('.ag-card[data-ag-item]')", timeout=TIMEOUT_MS)
    return page


def test_shift_and_the_scroll_keys_scroll_a_long_prompt(browser, shared_server):
    """A long prompt's box scrolls with Shift and the arrows or PageDown/PageUp, the response's staying put (only
    the mouse could scroll it: grader's review)."""
    page = long_prompt_card(browser, shared_server, "Long prompts", {"width": 1280, "height": 720})
    tops = "() => ['.ag-prompt', '.ag-response'].map((s) => document.querySelector(s).scrollTop)"
    page.keyboard.press("Shift+PageDown")
    prompt, response = page.evaluate(tops)
    assert prompt > 50 and response == 0
    page.keyboard.press("Shift+ArrowUp")
    assert 0 < page.evaluate(tops)[0] < prompt
    page.keyboard.press("PageDown")  # without Shift, the response's as before
    assert page.evaluate(tops)[1] > 0


def test_on_a_short_window_the_scroll_keys_bring_the_response_into_view_first(browser, shared_server):
    """At 1024 x 700 a long prompt left one line of the response above the window's foot, and PageDown scrolled
    the box unseen, the page never moving (a grader's review): the first key brings the box into view."""
    page = long_prompt_card(browser, shared_server, "Short window", {"width": 1024, "height": 560})
    visible = "() => { const r = document.querySelector('.ag-response').getBoundingClientRect(); return Math.min(r.bottom, innerHeight) - Math.max(r.top, 0); }"
    assert page.evaluate(visible) < 100, page.evaluate(visible)  # the response under the fold
    page.keyboard.press("PageDown")
    page.wait_for_function(f"() => ({visible})() >= 150", timeout=TIMEOUT_MS)
    page.keyboard.press("PageDown")  # in view now: the next key scrolls the box itself
    page.wait_for_function("() => document.querySelector('.ag-response').scrollTop > 0", timeout=TIMEOUT_MS)


# After each key, once the card's own handler ran (a task later): the card's state at the press, the card
# host's counters before and after (ui/grading_card.js: data-ag-sent, -queued, -refused) and the notice on screen.
BURST_WATCH = """
window.__burst = [];
window.addEventListener('keydown', (e) => {
  const counts = () => { const h = document.querySelector('.ag-host'); return h ? {...h.dataset} : {}; };
  const card = document.querySelector('.ag-card');
  const entry = {key: e.key, state: card ? card.dataset.agState : null, before: counts()};
  setTimeout(() => {
    const notice = document.querySelector('.ag-notice');
    window.__burst.push({...entry, after: counts(), notice: notice && !notice.hidden ? notice.textContent : null});
  }, 0);
}, true);
"""
BURST_KEYS = "y" * 7 + "n" * 7 + "s" * 3 + "u" * 3  # grades, and commands whose effect the database shows


def test_a_burst_of_presses_is_each_stored_or_refused_on_screen(browser, shared_server, pool_project, artifacts):
    """Four presses at once, then 100 presses 50-400 ms apart: each is sent (at once, or kept while another was in flight and sent after
    its answer) or refused with a message on screen; each press sent is one change in the database."""
    store, pid = pool_project
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(BURST_WATCH)
    page.goto(f"{shared_server.url}/grade?project={pid}&grader=burst")
    shown_for(page, grading.MIN_VIEW_S)
    # a grade, then a grade, a skip and an undo pressed while it is saved; each press's own entry is logged (the
    # watcher's timeout runs before this one) before the next. The server is paused meanwhile, so the first press
    # is still in flight at the others however fast the server answers and however slow a loaded browser is
    os.kill(shared_server.process.pid, signal.SIGSTOP)
    try:
        for k, key in enumerate("yysu", start=1):
            page.keyboard.press(key)
            assert page.evaluate("k => new Promise(done => setTimeout(() => done(window.__burst.length >= k), 0))", k)
    finally:
        os.kill(shared_server.process.pid, signal.SIGCONT)
    rng = random.Random(28)
    presses = 4 + 100
    for _ in range(presses - 4):
        page.keyboard.press(rng.choice(BURST_KEYS))
        page.wait_for_timeout(rng.randint(50, 400))  # the interval under test, not a wait for a condition
    settled = """(n) => { const h = document.querySelector('.ag-host'), c = document.querySelector('.ag-card');
      return c && c.dataset.agState !== 'sending' && Number(h.dataset.agSent || 0) + Number(h.dataset.agRefused || 0) === n; }"""
    page.wait_for_function(settled, arg=presses, timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "grade-burst.png")
    log = page.evaluate("window.__burst")
    host = page.evaluate("({...document.querySelector('.ag-host').dataset})")
    assert len(log) == presses

    def moved(entry: dict, counter: str) -> int:
        return int(entry["after"].get(counter, 0)) - int(entry["before"].get(counter, 0))

    for entry in log:  # each press is taken (sent or kept) or refused at once, and a refusal is on screen
        assert moved(entry, "agSent") + moved(entry, "agQueued") + moved(entry, "agRefused") >= 1, entry
        if moved(entry, "agRefused"):
            assert entry["notice"] and "not taken" in entry["notice"], entry
    in_flight = [e for e in log if e["state"] == "sending"]
    assert any(moved(e, "agQueued") for e in in_flight) and any(moved(e, "agRefused") for e in in_flight)
    assert any(e["notice"] and "kept" in e["notice"] for e in in_flight)
    # a skip would act on a card not yet on screen: refused at once (a kept S was refused later as "too fast")
    assert all(moved(e, "agRefused") for e in in_flight if e["key"] == "s"), in_flight
    sent = int(host["agSent"])
    grades = store.grades(pid, include_retracted=True)
    events = accounts.events(store, pid)
    changes = len(grades) + int(events["action"].isin([SKIP, UNDO]).sum())
    assert sent == changes, (host, len(grades), events["action"].value_counts().to_dict())
    assert int(host["agQueued"]) > 0 and changes > 20


def sign_in(page, url: str, name: str) -> None:
    """Open ``url`` and sign in as ``name`` with PASSWORD (tests.browser_sign_in.sign_in)."""
    browser_sign_in.sign_in(page, url, name, PASSWORD)


def card_item(page, shown_s: float = 0) -> str:
    """The id of the item on the card, once it has been shown for ``shown_s`` seconds."""
    shown_for(page, shown_s)
    return page.locator(".ag-card").get_attribute("data-ag-item")


def signed_out(page) -> None:
    page.get_by_role("button", name="Sign in").wait_for(timeout=TIMEOUT_MS)


def test_sessions_survive_reload_and_new_tab_and_end_when_they_must(browser, shared_signed_in_server):
    server = shared_signed_in_server
    store = Store.open(server.db_url)
    pid = store.create_project("Distinct", {"seed": 1}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, distinct_pool(N_ITEMS))
    account_writes.create_account(store, "sessions-admin", auth.ADMIN, password=PASSWORD)
    gina = account_writes.create_account(store, "gina", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, gina.id)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    first = context.new_page()
    sign_in(first, f"{server.url}/grade?project={pid}", "gina")
    assert first.url.split("?")[0].endswith("/grade")  # back on the page and project asked for
    item = card_item(first)
    first.reload()
    assert card_item(first) == item  # a reload keeps the session (and the item)
    second = context.new_page()
    second.goto(f"{server.url}/grade?project={pid}")
    assert card_item(second) == item  # so does a new tab
    cookie = next(c for c in context.cookies() if c["name"] == "activegrade_session")
    assert cookie["sameSite"] == "Strict"

    first.get_by_role("button", name="Sign out").click()
    signed_out(first)
    card_item(second, grading.MIN_VIEW_S)
    second.keyboard.press("y")  # the other tab's next press: refused, and that tab is signed out too
    signed_out(second)
    assert store.grades(pid).empty
    second.reload()
    signed_out(second)

    for end in (
        lambda: accounts.set_active(store, "gina", False),
        lambda: account_writes.set_password(store, "gina", PASSWORD),  # a reset (to the same text) still ends sessions
    ):
        sign_in(first, f"{server.url}/grade?project={pid}", "gina")
        card_item(first)
        end()
        accounts.set_active(store, "gina", True)
        card_item(first, grading.MIN_VIEW_S)
        first.keyboard.press("y")
        signed_out(first)
        assert store.grades(pid).empty
    context.close()


def test_the_open_list_of_my_items_follows_each_grade(browser, shared_server):
    """With "My graded and skipped items" open, a grade or a skip shows in the list at once, no Refresh pressed
    (a grader's review: it kept the count it had when opened)."""
    store = Store.open(shared_server.db_url)
    pid = store.create_project("Listed", {"seed": 1, "regime": "anytime"}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, distinct_pool(6))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{shared_server.url}/grade?project={pid}&grader=lister")
    page.wait_for_function("() => document.querySelector('.ag-card[data-ag-item]')", timeout=TIMEOUT_MS)
    page.get_by_text("My graded and skipped items").click()
    caption = page.get_by_text("choose a row to open it on the card")
    caption.filter(has_text="0 items").wait_for(timeout=TIMEOUT_MS)
    for key, count in (("y", "1 item ·"), ("s", "2 items")):
        item = page.evaluate("() => document.querySelector('.ag-card').dataset.agItem")
        page.locator(".ag-card").focus()
        shown_for(page, grading.MIN_VIEW_S + 0.1)
        page.keyboard.press(key)
        page.wait_for_function(
            f"() => document.querySelector('.ag-card').dataset.agItem !== '{item}'", timeout=TIMEOUT_MS
        )
        caption.filter(has_text=count).wait_for(timeout=TIMEOUT_MS)
