"""core.services.showings on the database (core.store.showings): a token names one showing of one grader's
item, is spent once, outlives the reservation's hold and expires after showings.TTL, is purged afterwards, and
is the same token for the Grade page and the HTTP API, on any Store of the database (a restart, another
replica). On SQLite, and on PostgreSQL when the test server runs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core import api
from core.services import auth, grade_actions, reservations, showings, team, tokens
from core.services.outcome import Outcome, Refused
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from core.store import showings as table
from core.store.models import utcnow
from tests.pg_schema import throwaway_schema_url

DATA = Path(__file__).parent / "data" / "app"
PASSWORD = "correct horse battery"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'showings.db'}"
    else:
        with throwaway_schema_url() as pg_url:
            yield pg_url


@pytest.fixture
def project(url) -> Iterator[tuple[Store, int]]:
    store = Store.open(url)
    pid = create_project(
        store,
        "P",
        *[(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")],
        {"min_view_s": 0},
        start=False,
    )
    yield store, pid
    store.engine.dispose()


@pytest.fixture
def later(monkeypatch):
    """Move the showings' clock forward by a timedelta."""

    def move(by: timedelta) -> None:
        moved = utcnow() + by
        monkeypatch.setattr("core.services.showings.utcnow", lambda: moved)

    return move


def test_a_token_names_one_showing_of_one_grader_and_is_spent_once(project):
    store, pid = project
    first = showings.current(store, pid, "ann", 3, "a", False)
    assert showings.current(store, pid, "ann", 3, "a", False) == first  # the same item still on screen
    assert showings.match(store, pid, "ann", first.token, 3, "a") == first
    assert showings.match(store, pid, "ann", first.token, 4, "a") is None
    assert showings.match(store, pid, "ann", first.token, 3, "b") is None
    assert showings.match(store, pid, "bob", first.token, 3, "a") is None  # issued to another grader
    assert showings.find(store, pid + 1, "ann", first.token, "a") is None  # on another project
    for forged in ("forged", None, "", 7):
        assert showings.match(store, pid, "ann", forged, 3, "a") is None
    assert not showings.use(store, pid, "bob", first.token)  # another grader cannot spend it either
    assert showings.use(store, pid, "ann", first.token)
    assert not showings.use(store, pid, "ann", first.token)
    assert showings.match(store, pid, "ann", first.token, 3, "a") is None  # a second press of a spent token
    again = showings.current(store, pid, "ann", 3, "a", False)
    assert again.token != first.token  # the item shown anew (after an undo) is a new showing
    assert showings.current(store, pid, "ann", 3, "a", True).token != again.token  # reopened for review: another
    showings.current(store, pid, "ann", 7, "b", False)
    assert showings.match(store, pid, "ann", again.token, 3, "a") == again  # an older, unspent one names its item
    assert showings.current(store, pid, "bob", 7, "b", False).token != again.token  # each grader their own


def test_of_presses_sent_at_once_with_one_token_one_acts_and_a_press_that_stores_nothing_gives_it_back(project):
    """The token is spent before the press acts: a second press arriving while the first is acting (two requests
    at once) is refused, where spending after the act let both store a grade."""
    store, pid = project
    card = showings.current(store, pid, "ann", 3, "a", False)
    acted: list[str] = []

    def first() -> Outcome:
        acted.append("first")
        with pytest.raises(Refused, match="pressed already"):  # the second request, while the first acts
            showings.press_once(store, pid, "ann", card.token, lambda: acted.append("second"), lambda _: True)
        return Outcome("saved", "saved")

    assert showings.press_once(store, pid, "ann", card.token, first, lambda o: o.status == "saved").status == "saved"
    assert acted == ["first"] and showings.match(store, pid, "ann", card.token, 3, "a") is None
    other = showings.current(store, pid, "ann", 4, "b", False)
    too_fast = showings.press_once(store, pid, "ann", other.token, lambda: Outcome("too_fast", "wait"), lambda _: False)
    assert too_fast.status == "too_fast" and showings.match(store, pid, "ann", other.token, 4, "b") == other

    def broken() -> Outcome:
        raise OSError("disk full")

    with pytest.raises(OSError):
        showings.press_once(store, pid, "ann", other.token, broken, lambda _: True)
    assert showings.match(store, pid, "ann", other.token, 4, "b") == other  # not stored: the card is still good


def test_the_release_time_is_the_servers_and_old_tokens_are_refused_then_purged(project, later):
    store, pid = project
    shown = showings.current(store, pid, "ann", 3, "a", False)
    assert 0 <= shown.seconds_since_released() < 5
    later(timedelta(seconds=90))
    assert 89 < shown.seconds_since_released() < 95  # the bound core.services.grading.viewing_seconds uses
    assert showings.match(store, pid, "ann", shown.token, 3, "a") == shown
    later(reservations.DEFAULT_TTL + timedelta(minutes=1))  # a long read, past the item's hold
    assert showings.match(store, pid, "ann", shown.token, 3, "a") == shown  # grade_actions decides if it is hers
    later(showings.TTL + timedelta(seconds=1))
    assert showings.match(store, pid, "ann", shown.token, 3, "a") is None  # older than a showing's life
    fresh = showings.current(store, pid, "ann", 3, "a", False)  # the same item: a new token
    assert fresh.token != shown.token and table.find(store, shown.token) is None  # the expired row is gone
    assert showings.match(store, pid, "ann", fresh.token, 3, "a") == fresh


def test_a_token_outlives_the_process_that_issued_it(project, url):
    store, pid = project
    shown = showings.current(store, pid, "ann", 3, "a", False)
    restarted = Store.open(url)  # a new process, or another replica, on the same database
    try:
        assert showings.match(restarted, pid, "ann", shown.token, 3, "a") == shown
        assert showings.current(restarted, pid, "ann", 3, "a", False) == shown
        assert showings.use(restarted, pid, "ann", shown.token)
        assert showings.match(store, pid, "ann", shown.token, 3, "a") is None
    finally:
        restarted.engine.dispose()


def test_a_deleted_projects_showings_go_with_it(project):
    store, pid = project
    shown = showings.current(store, pid, "ann", 3, "a", False)
    store.delete_project(pid)
    assert table.find(store, shown.token) is None


def test_the_grade_page_and_the_api_check_each_others_tokens(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'both.db'}")
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "P", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "ann", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    secret = tokens.create(store, auth.OPERATOR, "ann", "tests")[1]
    client = TestClient(Starlette(routes=api.routes(lambda: store)))

    def call(method: str, path: str, **kwargs):
        headers = {"Authorization": f"Bearer {secret}"}
        return client.request(method, f"{api.PREFIX}/projects/{pid}{path}", headers=headers, **kwargs)

    item = call("GET", "/next").json()["item"]
    # the Grade page (app_pages/grade.py) shows the same reserved item: the API's token, not a second one
    on_page = showings.current(store, pid, "ann", item["position"], item["item_id"], False)
    assert on_page.token == item["token"]
    assert showings.match(store, pid, "ann", item["token"], item["position"], item["item_id"]) == on_page
    body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
    assert call("POST", "/grades", json=body).json()["status"] == "saved"
    assert showings.match(store, pid, "ann", item["token"], item["position"], item["item_id"]) is None  # spent
    following = call("GET", "/next").json()["item"]
    labels = [label["label"] for label in following["labels"]]
    ann = auth.user_of(accounts.user_by_name(store, "ann"))
    pressed = showings.press_once(  # a press on the Grade page spends the token for the API too
        store,
        pid,
        "ann",
        following["token"],
        lambda: grade_actions.grade(store, ann, pid, following["position"], labels[1], seconds=1.0),
        lambda outcome: True,
    )
    assert pressed.status == "saved"
    body = {"item_id": following["item_id"], "token": following["token"], "label": labels[0]}
    refused = call("POST", "/grades", json=body)  # another press on it: refused, saying what the page stored
    assert refused.status_code == 409 and refused.json()["error"]["field"] == "token"
    assert f"stored already, as {labels[1]}" in refused.json()["message"]
