"""Two app replicas (`streamlit run` twice) on one PostgreSQL, 1,000 grades in all.

Two signed-in Chromium sessions per replica grade through the grading card
while core-level graders (core.testing.workload, the grade page's functions)
grade beside them; a last core grader finishes the pool. No item is graded
twice outside the double-grading share (the reservation is the database's
claim, core.store.accounts.try_reserve, so the replicas share no lock), no
grade is lost, and both replicas' dashboards show the same numbers, those of
the grades in the database.
"""

from __future__ import annotations

import threading

import pytest

from core import config
from core.services import account_writes, auth
from core.services.progress import counts
from core.services.reservations import overlap_positions
from core.services.tracking import current_estimate
from core.store import Store, accounts
from core.testing.appserver import ITEM_SHOWN, PAGE_LINK, TIMEOUT_MS, Server, press_grade_key
from core.testing.workload import Grader, expected_grades, synthetic_project
from tests.pg_schema import throwaway_schema_url

from .conftest import PASSWORD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

N_ITEMS = 909
OVERLAP = 0.1  # 91 items double-graded: 1,000 grades in all
GRADES = 1000
SESSIONS_PER_REPLICA = 2
PRESSES = 10  # per browser session
CORE_GRADERS = 4
CORE_SHARE = 150  # grades per core grader beside the browsers; a last core grader finishes the pool


def _open_grade_page(page, server: Server, pid: int, name: str) -> None:
    sign_in(page, f"{server.url}/?project={pid}", name)
    page.locator(PAGE_LINK).filter(has_text="Grade").click()
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    page.get_by_role("heading", name="Grade", exact=True, level=1).click()  # the card owns the keys


DASHBOARD_METRICS = 8  # estimate, interval, graded items, saving; grades, throughput, items still needed, ETA


def _dashboard(browser, server: Server, pid: int) -> dict[str, str]:
    """The dashboard's metrics (label -> value) on ``server``, signed in there, once every one shows every grade."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    sign_in(page, f"{server.url}/?project={pid}", "vera")
    page.locator(PAGE_LINK).filter(has_text="Dashboard").click()
    page.wait_for_function(
        f"""() => {{
          const values = [...document.querySelectorAll('[data-testid=stMetricValue]')].map(e => e.innerText);
          return values.length === {DASHBOARD_METRICS} && values.includes('1,000')
            && values.includes('{N_ITEMS:,} of {N_ITEMS:,}');
        }}""",
        timeout=TIMEOUT_MS,
    )
    metrics = page.locator('[data-testid="stMetric"]')
    shown = {
        m.locator('[data-testid="stMetricLabel"]').inner_text(): m.locator('[data-testid="stMetricValue"]').inner_text()
        for m in metrics.all()
    }
    page.close()
    return shown


def _start(crew: list[Grader], store: Store, pid: int, limit: int | None) -> tuple[list, list[BaseException]]:
    """Each grader in a thread of its own, grading until ``limit`` grades or the pool's last grade."""
    errors: list[BaseException] = []

    def work(grader: Grader) -> None:
        try:
            grader.run(lambda: len(store.grades(pid)) >= GRADES, limit=limit)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(g,), daemon=True) for g in crew]
    for t in threads:
        t.start()
    return threads, errors


def _join(started: tuple[list, list[BaseException]]) -> None:
    threads, errors = started
    for t in threads:
        t.join(TIMEOUT_MS / 1000)
        assert not t.is_alive(), "a core grader is stuck"
    assert not errors, errors


@pytest.fixture
def pg_url():
    with throwaway_schema_url() as url:
        yield url


def test_two_replicas_on_one_postgres_grade_1000_with_no_item_twice_and_equal_dashboards(
    browser, pg_url, tmp_path, monkeypatch
):
    assert expected_grades(N_ITEMS, OVERLAP) == GRADES
    monkeypatch.setenv(config.OPEN_DEMO, "0")
    store = Store.open(pg_url)
    # anytime: a queue the stopping rule never closes, so that every item gets its grades
    pid, design = synthetic_project(store, N_ITEMS, settings={"overlap": OVERLAP, "regime": "anytime"})
    people = [f"web-{r}{s}" for r in "ab" for s in range(SESSIONS_PER_REPLICA)] + ["vera"]
    for name in people:
        role = auth.VIEWER if name == "vera" else auth.GRADER
        accounts.assign(store, pid, account_writes.create_account(store, name, role, password=PASSWORD).id)
    replicas = [Server(pg_url, tmp_path, tmp_path / f"streamlit-{r}.log") for r in "ab"]
    try:
        pages = {}
        for name in people[:-1]:
            pages[name] = browser.new_page(viewport={"width": 1400, "height": 1000})
            _open_grade_page(pages[name], replicas["ab".index(name[4])], pid, name)

        crew = [Grader(store, pid, design, f"core-{k}", OVERLAP) for k in range(CORE_GRADERS)]
        beside = _start(crew, store, pid, limit=CORE_SHARE)
        for _round in range(PRESSES):  # the browsers grade while the core graders do
            for page in pages.values():
                press_grade_key(page, "y")
        _join(beside)
        for name, page in pages.items():  # the browsers leave; what they held lapses (the TTL), here at once
            page.close()
            accounts.release(store, pid, name)
        finishers = [Grader(store, pid, design, f"core-last-{k}", OVERLAP) for k in range(2)]  # second grades need two
        _join(_start(finishers, store, pid, limit=None))
        crew += finishers

        rows = store.grades(pid, include_retracted=True)
        assert len(rows) == GRADES and rows["retracted_at"].isna().all()
        sent = {(gid, pos, g.name) for g in crew for gid, pos in g.graded}
        assert sent <= set(zip(rows["id"], rows["position"], rows["grader"]))  # the core graders' grades, as sent
        by_grader = rows["grader"].value_counts()
        assert all(by_grader[name] == PRESSES for name in pages)  # every press of every browser session saved
        double = overlap_positions(N_ITEMS, OVERLAP, 3)
        per_item = rows.groupby("position")["grader"].agg(["size", "nunique"])
        assert set(per_item.index) == set(range(N_ITEMS))  # every item graded
        assert (per_item.loc[sorted(double), "nunique"] == 2).all()  # double graded by two different graders
        assert (per_item.drop(index=sorted(double))["size"] == 1).all()  # every other item exactly once
        assert accounts.reserved(store, pid) == {}

        shown = [_dashboard(browser, server, pid) for server in replicas]
        assert len(shown[0]) == DASHBOARD_METRICS and shown[0] == shown[1]
        e = current_estimate(design, store.graded_positions(pid))
        assert shown[0]["Grades"] == f"{counts(store.grades(pid)).grades:,}" == "1,000"
        assert shown[0]["Graded items"] == f"{N_ITEMS:,} of {N_ITEMS:,}"
        assert shown[0]["Estimated mean grade"] == f"{e.value:.3f}"
    finally:
        for server in replicas:
            server.stop()
