"""A rubric project from setup to report in Chromium (issue 31), on the served app (open demo): created and
prepared from the command line as an admin would (`projects create --criteria`, `worker --once`), four cards
graded with the keyboard on the Grade page, each criterion's panel on the Dashboard, the Markdown report and the
estimates export from the Export page naming each criterion with its estimate (the stratified mean of its
grades, recomputed here), and the Records page filtered by a criterion. Then the rubric card's clear key
(Backspace or Delete), on the Grade page and the fast grading page: an optional answer cleared is left out of
the card, so a changed card withdraws it; a required one keeps its answer and the card says why. A mouse clears
an optional answer with its Clear button, which a required criterion has none of, and Enter on that button
clears the answer without saving the card."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.store import Store
from core.testing.appserver import ITEM_SHOWN, MIN_VIEW_S, TIMEOUT_MS
from core.testing.waiting import prepared, until
from tests.e2e.test_app_e2e import open_page
from tests.e2e.test_fast_grading import CARD_READY
from tests.e2e.test_fast_grading_rubric import STATE
from tests.e2e.test_rubric_card import ANSWERS, DATA, answer, card_item, open_card, positions, submit
from tests.markdown_text import shown

pytestmark = pytest.mark.e2e
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the final number right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {
        "name": "tone",
        "scale": {"kind": "custom", "labels": [["curt", 0], ["neutral", 0.5], ["warm", 1]]},
        "required": False,
    },
]
NAMES = [c["name"] for c in CRITERIA]
# (keys, labels stored): each answer moves the focus to the next unanswered criterion, wrapping around
CARDS = [
    (["Y", "4", "3"], {"correct": "Correct", "helpful": "4", "tone": "warm"}),
    (["N", "2", "1"], {"correct": "Incorrect", "helpful": "2", "tone": "curt"}),
    (["ArrowDown", "5", "2", "Y"], {"correct": "Correct", "helpful": "5", "tone": "neutral"}),
    (["Y", "1", "3"], {"correct": "Correct", "helpful": "1", "tone": "warm"}),
]
FOCUSED = "() => document.querySelector('.ag-card .ag-criterion.ag-focused').dataset.agCriterion"
REQUIRED = (
    "{key} not taken: correct is required, so its answer cannot be cleared; press another of its keys to change it"
)


def rubric_project(url: str, name: str, folder: Path) -> int:
    """The app tests' 40-item pool with the three criteria, created and prepared by the command line."""
    rubric = folder / f"{name}.json"
    rubric.write_text(json.dumps(CRITERIA), encoding="utf-8")
    files = ["--pool", str(DATA / "pool.jsonl"), "--samples", str(DATA / "samples.jsonl")]
    rubric_options = ["--criteria", str(rubric), "--primary-criterion", "correct", "--allocate-for", "all"]
    assert main(["projects", "create", name, *files, *rubric_options, "--db-url", url, "--quiet"]) == 0
    # the app's own worker may take the job first: then this one finds none, and the wait below covers it
    assert main(["worker", "--once", "--db-url", url]) == 0
    store = Store.open(url)
    pid = store.project_by_name(name).id
    assert prepared(store, pid) == "ready", store.project(pid).error
    return pid


def card_labels(store: Store, pid: int, position: int) -> dict[str, str]:
    """The stored (active) grades of the item at ``position``: {criterion: label}."""
    grades = store.rubric_grades(pid)
    grades = grades[grades["position"] == position]
    return dict(zip(grades["criterion"], grades["label"]))


def stratified_means(store: Store, pid: int) -> dict[str, float]:
    """Each criterion's estimate recomputed from its grades: sum over strata of W_h times the stratum's mean."""
    sizes = pd.Series(store.stratum_sizes(pid))
    grades = store.rubric_grades(pid)
    grades["stratum"] = store.load_items(pid)["stratum"].loc[grades["position"]].to_numpy()
    means = grades.groupby(["criterion", "stratum"])["value"].mean()
    return {c: float(sum(sizes[h] / sizes.sum() * means[c, h] for h in sizes.index)) for c in NAMES}


def download(page, button: str) -> bytes:
    with page.expect_download() as started:
        page.get_by_role("button", name=button).click()
    return started.value.path().read_bytes()


def choose(page, key: str, option: str) -> None:
    """Choose ``option`` in the select box of widget key ``key``, once the page has drawn it (a box drawn
    only after a rerun, such as a criterion's grade filter, is not clicked in its old place)."""
    box = page.locator(f".st-key-{key}[data-stale=false] [role=combobox]")
    wanted = page.get_by_role("option", name=option, exact=True)
    # a click during a rerun can open the old box, which the rerun then closes: click until the list is open
    until(lambda: wanted.is_visible() or box.click() or wanted.is_visible(), timeout=TIMEOUT_MS / 1000, what=option)
    wanted.click()


def dashboard_panels(page) -> dict[str, str]:
    """The Dashboard's criterion panels, {title: estimate}, once all three are drawn."""
    page.locator(f".st-key-criterion-{len(NAMES) - 1} [data-testid=stMetricValue]").wait_for(timeout=TIMEOUT_MS)
    panels = {}
    for k in range(len(NAMES)):
        panel = page.locator(f".st-key-criterion-{k}")
        title = panel.locator("[data-testid=stMetricLabel]").inner_text().strip()
        panels[title] = panel.locator("[data-testid=stMetricValue]").inner_text().strip()
    return panels


def report_rows(markdown: str) -> dict[str, list[str]]:
    """The report's criteria table, {criterion: its cells}, from its Markdown."""
    table = markdown.split("\n## Criteria\n", 1)[1].split("\n## ", 1)[0]  # up to the next section
    rows = [line.strip("|").split(" | ") for line in table.splitlines() if line.startswith("| ")]
    rows = [[shown(c.strip()) for c in cells] for cells in rows]  # each cell as a reader sees it
    return {cells[0].removesuffix(" (primary)"): cells for cells in rows[1:]}


def test_a_rubric_from_the_command_line_to_the_report(browser, shared_server, tmp_path, artifacts):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric walk-through", tmp_path)
    where = positions(store, pid)
    page = open_card(browser, shared_server, pid, "walker")
    for keys, labels in CARDS:
        item = card_item(page)
        answer(page, keys)
        submit(page, item)
        assert card_labels(store, pid, where[item]) == labels, (item, keys)
    grades = store.rubric_grades(pid)
    assert len(grades) == 12 and set(grades["grader"]) == {"walker"}
    expected = stratified_means(store, pid)

    open_page(page, "Dashboard")
    page.get_by_text("Stopping rule and forecast: criterion 'correct' (the primary)").wait_for(timeout=TIMEOUT_MS)
    panels = dashboard_panels(page)
    page.screenshot(path=artifacts / "rubric-dashboard.png", full_page=True)
    assert panels == {
        "correct (primary)": f"{expected['correct']:.3f}",
        "helpful": f"{expected['helpful']:.3f}",
        "tone": f"{expected['tone']:.3f}",
    }

    open_page(page, "Export")
    estimates = pd.read_csv(io.BytesIO(download(page, "Estimates (CSV, one row per criterion)")))
    assert estimates["criterion"].tolist() == NAMES and estimates["graded_items"].tolist() == [4, 4, 4]
    for name, estimate in zip(estimates["criterion"], estimates["estimate"]):
        assert estimate == pytest.approx(expected[name], abs=1e-12), name
    report = report_rows(download(page, "Report (Markdown)").decode("utf-8"))
    assert list(report) == NAMES
    for name, cells in report.items():
        assert cells[2] == f"{expected[name]:.4f}" and cells[5] == "4 of 4", cells

    open_page(page, "Records")
    choose(page, "records_criterion", "tone")
    choose(page, "records_label_tone", "warm")  # the grade filter on tone's scale
    warm = {item for item, position in where.items() if card_labels(store, pid, position).get("tone") == "warm"}
    page.get_by_text(f"{len(warm)} items match").wait_for(timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Prepare the CSV of these items (with prompt and response)").click()
    records = pd.read_csv(io.BytesIO(download(page, "Download records (CSV)")), dtype={"item": str})
    page.screenshot(path=artifacts / "rubric-records.png", full_page=True)
    assert set(records["item"]) == warm and set(records["criterion"]) == {"tone"}


def test_an_optional_answer_cleared_is_left_out_of_the_card(browser, shared_server, tmp_path):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric clear", tmp_path)
    where = positions(store, pid)
    page = open_card(browser, shared_server, pid, "clearer")
    item = card_item(page)
    answer(page, ["Y", "4", "3"])  # every criterion answered: the focus stays on tone, the last answered
    assert page.evaluate(FOCUSED) == "tone"
    page.keyboard.press("Backspace")
    assert page.evaluate(ANSWERS) == {"correct": "Correct", "helpful": "4", "tone": ""}
    submit(page, item)
    assert card_labels(store, pid, where[item]) == {"correct": "Correct", "helpful": "4"}

    # a stored tone, withdrawn by a changed card: B back to it, Delete on tone, Enter
    item = card_item(page)
    answer(page, ["N", "2", "1"])
    submit(page, item)
    assert card_labels(store, pid, where[item]) == {"correct": "Incorrect", "helpful": "2", "tone": "curt"}
    page.keyboard.press("B")
    page.wait_for_function(f"() => ({ITEM_SHOWN})() === 'Item {item}'", timeout=TIMEOUT_MS)
    answer(page, ["ArrowDown", "ArrowDown", "Delete"])
    assert page.evaluate(ANSWERS) == {"correct": "Incorrect", "helpful": "2", "tone": ""}
    submit(page, item)
    assert card_labels(store, pid, where[item]) == {"correct": "Incorrect", "helpful": "2"}
    assert set(store.rubric_grades(pid)["criterion"]) == {"correct", "helpful"}


def test_a_required_answer_is_not_cleared(browser, shared_server, tmp_path):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric keep", tmp_path)
    page = open_card(browser, shared_server, pid, "keeper")
    page.keyboard.press("?")
    assert (
        "clear the focused criterion's answer (optional criteria only; or its Clear button)"
        in page.locator(".ag-help").inner_text()
    )
    page.keyboard.press("?")
    item = card_item(page)
    answer(page, ["Y", "ArrowUp", "Backspace"])
    page.locator(".ag-notice").filter(has_text=REQUIRED.format(key="Backspace")).wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate(ANSWERS) == {"correct": "Correct", "helpful": "", "tone": ""}
    assert page.locator(".ag-host").get_attribute("data-ag-refused") == "1"
    answer(page, ["ArrowDown", "5"])
    submit(page, item)  # tone never answered: the card saves without it
    assert card_labels(store, pid, positions(store, pid)[item]) == {"correct": "Correct", "helpful": "5"}


FAST_SHOWN_FOR = """(ms) => { const c = document.getElementById('card');
  return c.dataset.state === 'ready' && performance.now() - Number(c.dataset.shownAt) > ms; }"""


def open_fast_card(browser, server, pid: int, grader: str):
    """The fast grading page of project ``pid`` for ``grader``, its first card shown; (page, the card's item)."""
    page = browser.new_page()
    page.goto(f"{server.url}/grade-fast?project={pid}&grader={grader}")
    page.wait_for_function(CARD_READY, arg="", timeout=TIMEOUT_MS)
    return page, page.get_attribute("#card", "data-item")


def test_the_fast_page_clears_an_optional_answer_and_keeps_a_required_one(browser, shared_server, tmp_path):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric fast clear", tmp_path)
    page, shown = open_fast_card(browser, shared_server, pid, "fast-clearer")
    for key in ("1", "4", "3"):
        page.keyboard.press(key)
    assert page.evaluate(STATE) == {"focus": 2, "answers": ["Correct", "4", "warm"], "notice": ""}
    page.keyboard.press("Backspace")
    assert page.evaluate(STATE)["answers"] == ["Correct", "4", ""]
    for key in ("ArrowUp", "ArrowUp", "Delete"):
        page.keyboard.press(key)
    assert page.evaluate(STATE) == {
        "focus": 0,
        "answers": ["Correct", "4", ""],
        "notice": REQUIRED.format(key="Delete"),
    }
    page.wait_for_function(FAST_SHOWN_FOR, arg=MIN_VIEW_S * 1000, timeout=TIMEOUT_MS)
    page.keyboard.press("Enter")
    page.wait_for_function(CARD_READY, arg=shown, timeout=TIMEOUT_MS)
    assert card_labels(store, pid, positions(store, pid)[shown]) == {"correct": "Correct", "helpful": "4"}


def test_a_mouse_clears_an_optional_answer_with_its_clear_button(browser, shared_server, tmp_path, artifacts):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric mouse clear", tmp_path)
    page = open_card(browser, shared_server, pid, "mouse-clearer")
    item = card_item(page)
    clear = page.locator(".ag-card .ag-clear")
    assert clear.count() == 1 and clear.get_attribute("data-ag-clear") == "tone"  # none on a required criterion
    assert not clear.is_visible()  # nothing to clear yet
    for name, chosen in CARDS[0][1].items():
        page.locator(f'.ag-criterion[data-ag-criterion={name}] [data-ag-label="{chosen}"]').click()
    assert page.evaluate(ANSWERS) == CARDS[0][1]
    page.locator(".ag-criteria").screenshot(path=artifacts / "rubric-clear-button.png")
    clear.click()
    assert page.evaluate(ANSWERS) == {"correct": "Correct", "helpful": "4", "tone": ""} and not clear.is_visible()
    page.locator(".ag-criterion[data-ag-criterion=tone] [data-ag-label=curt]").click()
    clear.focus()
    page.keyboard.press("Enter")  # on the button: it clears, and the card is not saved
    assert page.evaluate(ANSWERS)["tone"] == "" and page.locator(".ag-host").get_attribute("data-ag-sent") is None
    submit(page, item)
    assert card_labels(store, pid, positions(store, pid)[item]) == {"correct": "Correct", "helpful": "4"}


def test_the_fast_pages_clear_button_is_for_a_mouse_and_the_tab_key(browser, shared_server, tmp_path):
    store = Store.open(shared_server.db_url)
    pid = rubric_project(shared_server.db_url, "Rubric fast mouse clear", tmp_path)
    page, shown = open_fast_card(browser, shared_server, pid, "fast-mouse-clearer")
    clear = page.locator("#labels button.clear")
    assert clear.count() == 1 and not clear.is_visible()  # tone's alone, and nothing to clear yet
    for name, chosen in (("correct", "Correct (1)"), ("helpful", "4 (4)"), ("tone", "warm (3)")):
        page.locator(f"#labels .criterion[data-criterion={name}]").get_by_role("button", name=chosen).click()
    clear.click()
    assert page.evaluate(STATE) == {"focus": 2, "answers": ["Correct", "4", ""], "notice": ""}
    page.get_by_role("button", name="curt (1)").click()
    page.get_by_role("button", name="5 (5)").focus()  # helpful's last choice: Tab goes on to tone's Clear
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == "Clear the answer to tone"
    page.keyboard.press("Enter")  # clears, does not save the card
    assert page.evaluate(STATE)["answers"] == ["Correct", "4", ""]
    assert page.get_attribute("#card", "data-sent") is None
    page.wait_for_function(FAST_SHOWN_FOR, arg=MIN_VIEW_S * 1000, timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Save the card (Enter)").click()
    page.wait_for_function(CARD_READY, arg=shown, timeout=TIMEOUT_MS)
    assert card_labels(store, pid, positions(store, pid)[shown]) == {"correct": "Correct", "helpful": "4"}
