"""Every page's URL names its project (issue 28), in Streamlit's AppTest with real sign-in: with no project
in the URL the only one the user may see opens, else the one they used last; a row of the Projects table
opens its project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import config
from core.services import account_writes, auth, sessions
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from tests.card_press import card_data
from ui import signin

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "app"
PASSWORD = "a long enough password"


@pytest.fixture
def world(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'links.db'}"
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(DATA))
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    store = Store.open(url)
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    ids = []
    for name in ("First", "Second"):
        ids.append(create_project(store, name, *files, start=False))
        start_preparation(store, ids[-1], wait=True)
    return store, ids


def run(store: Store, user: auth.User, page: str | None = None) -> AppTest:
    """The app as a new tab opens it: signed in, no project in the URL."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[signin.TOKEN_KEY] = sessions.start(store, user)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def url_project(at: AppTest) -> str:
    """The URL's ?project= (AppTest keeps a value set by the script as a string, one from the URL as a list)."""
    value = at.query_params["project"]
    return value if isinstance(value, str) else value[-1]


def test_a_grader_with_one_project_lands_on_it(world):
    store, (first, second) = world
    gina = account_writes.create_account(store, "gina", auth.GRADER, password=PASSWORD)
    accounts.assign(store, second, gina.id)
    at = run(store, gina, "app_pages/grade.py")
    assert card_data(at)["card"] is not None  # her item, not "choose a project"
    assert url_project(at) == str(second)
    assert accounts.held(store, second, "gina") is not None


def test_with_several_projects_the_last_used_opens(world):
    store, (first, second) = world
    root = account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    assert not opened(run(store, root))  # nothing used yet: the admin chooses
    accounts.record_event(store, "root", "exported", project_id=second)
    assert opened(run(store, root)) == ["Second"]
    accounts.record_event(store, "root", "settings_changed", project_id=first)
    assert opened(run(store, root)) == ["First"]


def opened(at: AppTest) -> list[str]:
    """The open project's heading on the Projects page, none where no project is open (the list's own heading,
    "All projects", is of the same level)."""
    return [h.value for h in at.header if h.value not in ("All projects", "Your projects")][:1]


def choose_row(at: AppTest, key: str, row: int) -> None:
    """Run the app as the browser does after a click on ``row`` of the dataframe whose key starts with ``key``
    (AppTest cannot select rows itself): the selection is added to the widget states of one run."""
    element = next(d for d in at.dataframe if key in d.proto.id)
    tree = at._tree
    plain = tree.get_widget_states

    def with_selection():
        states = plain()
        state = states.widgets.add()
        state.id = element.proto.id
        state.string_value = json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})
        return states

    tree.get_widget_states = with_selection
    at.run()
    tree.get_widget_states = plain
    assert not at.exception, at.exception


def test_a_row_of_the_projects_table_opens_its_project(world):
    store, (first, second) = world
    vic = account_writes.create_account(store, "vic", auth.VIEWER, password=PASSWORD)
    for pid in (first, second):
        accounts.assign(store, pid, vic.id)
    at = run(store, vic)
    assert not opened(at)
    table = at.dataframe[-1].value
    choose_row(at, "projects-table", int(table.index[table["id"] == second][0]))
    assert opened(at) == ["Second"] and url_project(at) == str(second)


def sidebar_links(at: AppTest) -> dict[str, str]:
    """The sidebar's page links: label -> the address's query (``project=ID``, or "" when it names none)."""
    return {link.proto.label: link.proto.query_string for link in at.sidebar.get("page_link")}


def test_the_sidebar_links_name_the_project_shown(world):
    store, (first, second) = world
    root = account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    accounts.record_event(store, "root", "exported", project_id=second)  # her last used: not the one shown
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[signin.TOKEN_KEY] = sessions.start(store, root)
    at.query_params["project"] = str(first)
    at.run()
    links = sidebar_links(at)
    assert list(links)[:3] == ["Projects", "Grade", "Dashboard"]
    assert set(links.values()) == {f"project={first}"}
    vic = account_writes.create_account(store, "vic", auth.VIEWER, password=PASSWORD)
    accounts.assign(store, first, vic.id)
    assert set(sidebar_links(run(store, vic))) == {"Projects", "Dashboard", "Presenter view", "Records"}


def opened_bare(page: str, project_id: int | None = None, **state) -> AppTest:
    """The app at ``page`` in a new tab (with ``?project=project_id`` when given, and ``state`` set)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    if project_id is not None:
        at.query_params["project"] = str(project_id)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_a_project_opened_is_the_last_used_one(world):
    store, (first, second) = world
    vic = account_writes.create_account(store, "vic", auth.VIEWER, password=PASSWORD)
    for pid in (first, second):
        accounts.assign(store, pid, vic.id)
    opened_bare("app_pages/dashboard.py", second, **{signin.TOKEN_KEY: sessions.start(store, vic)})
    at = opened_bare("app_pages/dashboard.py", **{signin.TOKEN_KEY: sessions.start(store, vic)})
    assert url_project(at) == str(second)
    assert "Choose a project" not in " ".join(i.value for i in at.info)


def test_in_the_open_demo_a_project_opened_is_the_last_used_one(world, monkeypatch):
    store, (first, second) = world
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    opened_bare("app_pages/dashboard.py", first)
    assert url_project(opened_bare("app_pages/dashboard.py")) == str(first)


def test_in_the_open_demo_the_links_carry_the_graders_name(world, monkeypatch):
    """A tab has its own session: a link opened in a new tab keeps the name typed, not only the project."""
    store, (first, second) = world
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    at = opened_bare("app_pages/dashboard.py", first)
    assert set(sidebar_links(at).values()) == {f"project={first}"}  # no name typed yet
    at.sidebar.text_input(key="grader").set_value("ann").run()
    assert set(sidebar_links(at).values()) == {f"project={first}&grader=ann"}


def opened_at(page: str, asked: str, user_token: str) -> AppTest:
    """``page`` opened in a new tab from an address naming ``?project=asked``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[signin.TOKEN_KEY] = user_token
    at.query_params["project"] = asked
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("asked", ["99", "abc"])
def test_an_address_naming_an_unknown_project_says_so_and_shows_the_fallback(world, asked):
    store, (first, second) = world
    root = account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    accounts.record_event(store, "root", "exported", project_id=second)
    at = opened_at("app_pages/dashboard.py", asked, sessions.start(store, root))
    assert [w.value for w in at.warning] == [f"Project {asked} does not exist or is not yours; showing Second."]
    assert at.title[0].value == "Dashboard" and at.caption[0].value == "Project **Second**"
    assert url_project(at) == str(second)


def test_a_grader_at_a_project_not_hers_is_told_and_grades_her_own(world):
    store, (first, second) = world
    gina = account_writes.create_account(store, "gina", auth.GRADER, password=PASSWORD)
    accounts.assign(store, second, gina.id)
    at = opened_at("app_pages/grade.py", str(first), sessions.start(store, gina))
    assert [w.value for w in at.warning] == [f"Project {first} does not exist or is not yours; showing Second."]
    assert at.caption[0].value == "Project **Second**" and card_data(at)["card"] is not None


def test_a_user_with_no_project_is_told_whom_to_ask(world):
    store, _ = world
    for name, role, page in (
        ("nell", auth.GRADER, "app_pages/grade.py"),
        ("vera", auth.VIEWER, "app_pages/dashboard.py"),
    ):
        user = account_writes.create_account(store, name, role, password=PASSWORD)
        said = [i.value for i in run(store, user, page).info]
        assert said == ["No project is assigned to you yet: ask an admin to assign you (**Team** page)."], said
    root = account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    said = [i.value for i in run(store, root, "app_pages/dashboard.py").info]
    assert said == ["Choose a project in the sidebar, or on the **Projects** page, first."]  # an admin has some
