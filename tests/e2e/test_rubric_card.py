"""The rubric card in Chromium against the served app (open demo): three criteria on one card, graded with the
keyboard only (scale keys, arrows, Tab through the buttons, Enter); every card's grades are stored on the item on screen at the
press, in one transaction; and an app server killed with SIGKILL between presses leaves whole cards only."""

from __future__ import annotations

import signal

import pytest

from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import ITEM_SHOWN, MIN_VIEW_S, NEXT_ITEM_READY, ROOT, TIMEOUT_MS, Server, shown_for

pytestmark = pytest.mark.e2e
DATA = ROOT / "tests" / "data" / "app"
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the final number right?"},
    {"name": "helpful", "scale": {"kind": "likert"}, "guidelines": "1 useless, 5 exemplary."},
    {"name": "clarity", "scale": {"kind": "custom", "labels": [["muddled", 0], ["plain", 0.5], ["crisp", 1]]}},
]
LABELS = {"correct": {"Y": "Correct", "N": "Incorrect"}, "clarity": {"1": "muddled", "2": "plain", "3": "crisp"}}
# (keys, answers): the order of the keys moves the focus differently; each ends with Enter
ROUTES = [
    (["Y", "4", "2"], {"correct": "Y", "helpful": "4", "clarity": "2"}),  # in order: each answer moves on
    (["ArrowDown", "5", "3", "N"], {"correct": "N", "helpful": "5", "clarity": "3"}),  # then wraps to the first
    (["ArrowDown", "ArrowDown", "1", "Y", "2"], {"correct": "Y", "helpful": "2", "clarity": "1"}),
    (["N", "3", "ArrowUp", "1", "3"], {"correct": "N", "helpful": "1", "clarity": "3"}),  # helpful changed
    (["ArrowDown", "ArrowDown", "ArrowUp", "2", "3", "Y"], {"correct": "Y", "helpful": "2", "clarity": "3"}),
]
ANSWERS = """() => Object.fromEntries([...document.querySelectorAll('.ag-card .ag-criterion')]
  .map((b) => [b.dataset.agCriterion, b.dataset.agAnswer]))"""
KEY_CHIPS = """() => Object.fromEntries([...document.querySelectorAll('.ag-card .ag-criterion')]
  .map((b) => [b.dataset.agCriterion, [...b.querySelectorAll('.ag-button kbd')].map((k) => k.textContent)]))"""
SENT = "() => Number(document.querySelector('.ag-host').dataset.agSent || 0)"


def label(criterion: str, key: str) -> str:
    return LABELS.get(criterion, {}).get(key, key)  # helpful's labels are its keys, 1-5


def rubric_project(store: Store, name: str) -> int:
    """The app tests' 40-item pool, prepared, with the three criteria; anytime: the queue never closes."""
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, name, *files, {"criteria": CRITERIA, "regime": "anytime"}, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    return pid


def open_card(browser, server: Server, pid: int, grader: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server.url}/grade?project={pid}&grader={grader}")
    shown_for(page, MIN_VIEW_S)
    return page


def card_item(page) -> str:
    """The id of the item on the card (no press in flight), read from the page."""
    return page.locator(".ag-card").get_attribute("data-ag-item")


def answer(page, keys: list[str]) -> None:
    """Press ``keys`` on the card once its item has been on screen for the minimum viewing time."""
    shown_for(page, MIN_VIEW_S)
    for key in keys:
        page.keyboard.press(key)


def submit(page, item: str) -> None:
    """Enter, then wait for the next item on the card (the grade committed)."""
    page.keyboard.press("Enter")
    page.wait_for_function(NEXT_ITEM_READY, arg=f"Item {item}", polling="raf", timeout=TIMEOUT_MS)


def positions(store: Store, pid: int) -> dict[str, int]:
    return {str(item): position for position, item in store.load_items(pid)["id"].items()}


def test_thirty_cards_graded_by_keyboard_store_every_criterion_on_the_item_shown(browser, shared_server, artifacts):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(store, "Rubric keys")
    where = positions(store, pid)
    page = open_card(browser, shared_server, pid, "rubric-keys")
    assert page.locator(".ag-criterion.ag-focused").get_attribute("data-ag-criterion") == "correct"
    # Enter with criteria unanswered: nothing sent, the card says which, and the focus goes to the first of them
    page.keyboard.press("Y")
    page.keyboard.press("Enter")
    page.locator(".ag-notice").filter(has_text="no answer yet for helpful, clarity").wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate(SENT) == 0 and store.rubric_grades(pid).empty
    assert page.locator(".ag-criterion.ag-focused").get_attribute("data-ag-criterion") == "helpful"
    page.keyboard.press("?")  # every criterion's keys are listed
    keys = page.locator(".ag-help")
    assert keys.is_visible() and "clarity: muddled, plain, crisp" in keys.inner_text()
    page.keyboard.press("?")
    assert not keys.is_visible()
    page.keyboard.press("ArrowUp")  # back to correct: the first card's route starts from there
    page.screenshot(path=artifacts / "grade-rubric.png")
    for n in range(30):
        keys, expected = ROUTES[n % len(ROUTES)]
        item = card_item(page)
        answer(page, keys)
        shown = {c: label(c, k) for c, k in expected.items()}
        assert page.evaluate(ANSWERS) == shown, (n, keys)
        submit(page, item)
        card = store.rubric_grades(pid)
        card = card[card["position"] == where[item]]
        assert dict(zip(card["criterion"], card["label"])) == shown, (n, item)
        assert card["grader"].eq("rubric-keys").all() and card["created_at"].nunique() == 1  # one transaction
    grades = store.rubric_grades(pid)
    assert len(grades) == 90 and grades.groupby("position").size().eq(3).all()
    assert len(store.grades(pid)) == 30  # the primary criterion's: 30 items graded

    # B: the last card again, filled in with its answers; one changed and Enter replaces the card
    page.keyboard.press("B")
    page.wait_for_function(f"() => ({ITEM_SHOWN})() === 'Item {item}'", timeout=TIMEOUT_MS)
    assert page.evaluate(ANSWERS) == shown and "Reviewing your earlier card" in page.locator(".ag-banner").inner_text()
    page.screenshot(path=artifacts / "grade-rubric-review.png")
    answer(page, ["ArrowDown", "1"])
    submit(page, item)
    card = store.rubric_grades(pid)
    card = card[card["position"] == where[item]]
    assert dict(zip(card["criterion"], card["label"])) == {**shown, "helpful": "1"}
    assert len(store.rubric_grades(pid)) == 90

    # U on a card holding answers not saved: the first press says what it would drop, the second leaves them (U
    # dropped them without a word: a grader's review)
    answer(page, ["N"])
    sent = page.evaluate(SENT)
    page.keyboard.press("U")
    page.locator(".ag-notice").filter(has_text="U not taken: your answers to correct are not saved").wait_for(
        timeout=TIMEOUT_MS
    )
    assert page.evaluate(SENT) == sent and page.evaluate(ANSWERS)["correct"] == "Incorrect"
    page.keyboard.press("U")
    page.wait_for_function(f"() => ({SENT})() === {sent + 1}", timeout=TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('.ag-card')?.dataset.agState === 'note'", timeout=TIMEOUT_MS)
    assert page.locator(".ag-card .ag-status").inner_text().startswith("undone")  # the last change taken back
    card = store.rubric_grades(pid)
    assert dict(zip(*card[card["position"] == where[item]][["criterion", "label"]].T.values)) == shown


def test_the_real_focus_is_the_criterions_and_tab_goes_through_the_buttons(browser, shared_server):
    """The criterion in focus was a class alone, and Tab moved it while the real focus stayed on the page (an
    accessibility review): now an answer moves the real focus to the next criterion's group, a Tab goes on to its
    buttons (the criterion they are in keeps the keys), and Enter on a choice's button saves the card."""
    store = Store.open(shared_server.db_url)
    pid = rubric_project(store, "Rubric focus")
    page = open_card(browser, shared_server, pid, "rubric-focus")
    item = card_item(page)
    answer(page, ["Y", "4"])
    page.keyboard.press("Enter")  # refused: clarity has no answer yet, which the notice says until it has one
    notice = page.locator(".ag-notice")
    notice.filter(has_text="no answer yet for clarity").wait_for(timeout=TIMEOUT_MS)
    focused = "() => document.activeElement.closest('.ag-criterion')?.dataset.agCriterion"
    assert page.evaluate(focused) == "clarity"
    assert page.locator('.ag-criterion[aria-current="true"]').get_attribute("data-ag-criterion") == "clarity"
    page.keyboard.press("Tab")  # onto clarity's first button, still clarity's keys
    assert page.evaluate("() => document.activeElement.tagName") == "BUTTON" and page.evaluate(focused) == "clarity"
    page.keyboard.press("2")
    assert not notice.is_visible()  # answered: the refusal no longer holds, so it is not left on screen
    submit(page, item)
    card = store.rubric_grades(pid)
    assert dict(zip(card["criterion"], card["label"])) == {"correct": "Correct", "helpful": "4", "clarity": "plain"}


def test_every_criterions_buttons_show_their_key_chips_likert_too(browser, shared_server):
    """A Likert label is its own key, and its buttons show the key chip all the same, like Y/N and 1/2/3."""
    store = Store.open(shared_server.db_url)
    page = open_card(browser, shared_server, rubric_project(store, "Rubric chips"), "rubric-chips")
    chips = page.evaluate(KEY_CHIPS)
    assert chips == {"correct": ["Y", "N"], "helpful": ["1", "2", "3", "4", "5"], "clarity": ["1", "2", "3"]}


def whole_cards(store: Store, pid: int) -> int:
    """The number of graded items, after checking each has exactly its three grades (never one or two)."""
    sizes = store.rubric_grades(pid).groupby("position")["criterion"].agg(sorted)
    assert all(names == sorted(c["name"] for c in CRITERIA) for names in sizes), sizes.to_dict()
    return len(sizes)


def kill(server: Server) -> None:
    server.process.send_signal(signal.SIGKILL)
    assert server.process.wait(30) == -signal.SIGKILL


def test_a_server_killed_between_presses_leaves_whole_cards_only(browser, server, tmp_path):
    store = Store.open(server.db_url)
    pid = rubric_project(store, "Rubric crash")
    page = open_card(browser, server, pid, "rubric-crash")
    for _ in range(3):
        item = card_item(page)
        answer(page, ["Y", "4"])
        answer(page, ["2"])
        submit(page, item)
    held = card_item(page)
    answer(page, ["N", "3"])  # two of three criteria chosen, then the server dies before Enter
    assert page.evaluate(ANSWERS) == {"correct": "Incorrect", "helpful": "3", "clarity": ""}
    kill(server)
    page.close()
    assert whole_cards(store, pid) == 3

    restarted = Server(server.db_url, DATA, tmp_path / "streamlit-restarted.log")
    try:
        page = open_card(browser, restarted, pid, "rubric-crash")
        assert card_item(page) == held  # the item reserved for the grader, its answers not stored
        assert page.evaluate(ANSWERS) == {"correct": "", "helpful": "", "clarity": ""}
        answer(page, ["Y", "5", "3"])
        sent = page.evaluate(SENT)
        page.keyboard.press("Enter")  # the server dies right after the press left the page
        page.wait_for_function(f"() => ({SENT})() > {sent}", timeout=TIMEOUT_MS)
        kill(restarted)
        page.close()
    finally:
        restarted.stop()
    assert whole_cards(store, pid) in (3, 4)

    again = Server(server.db_url, DATA, tmp_path / "streamlit-again.log")
    try:
        page = open_card(browser, again, pid, "rubric-crash")
        for _ in range(2):
            item = card_item(page)
            answer(page, ["N", "1", "1"])
            submit(page, item)
    finally:
        again.stop()
    assert whole_cards(store, pid) in (5, 6)
