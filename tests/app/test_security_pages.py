"""Security findings in the app (issue 14), each through Streamlit's AppTest: open demo on a real database,
what graders see on Projects, a 10-item pool, the database password, sign-in back-off and unlock."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import config
from core.scales import BINARY
from core.services import account_writes, auth, reservations, sessions
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from ui import signin

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DATA = ROOT / "tests" / "data" / "app"
PASSWORD = "a long enough password"


def upload(name: str, lines: int | None = None) -> tuple[str, bytes]:
    content = (DATA / name).read_bytes()
    if lines is not None:
        content = b"".join(content.splitlines(keepends=True)[:lines])
    return name, content


@pytest.fixture
def world(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'security.db'}"
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(DATA))
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    return Store.open(url)


def _ready_project(store: Store, name: str = "Arithmetic", pool_lines: int | None = None) -> int:
    samples = upload("samples.jsonl", None if pool_lines is None else pool_lines * 6)  # 6 samples per item
    pid = create_project(store, name, upload("pool.jsonl", pool_lines), samples, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    return pid


def _run(user: auth.User | None = None, page: str | None = None, project: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.session_state[signin.TOKEN_KEY] = sessions.start(Store.open(), user)
    if project is not None:
        at.query_params["project"] = str(project)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    parts = [
        e.value
        for kind in ("markdown", "error", "warning", "info", "caption", "title", "header", "subheader")
        for e in getattr(at, kind)
    ]
    return "\n".join(str(p) for p in parts)


def test_open_demo_refuses_a_database_with_accounts(world, monkeypatch):
    account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    at = _run()
    assert "has accounts" in at.error[0].value
    assert not at.text_input  # no form at all: nobody reaches Team to reset the admin's password
    assert accounts.users(world)[0].password_hash == accounts.user_by_name(world, "root").password_hash


def test_open_demo_shows_a_banner_and_hides_team(world, monkeypatch):
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    at = _run()
    assert "Open demo" in _text(at)
    with pytest.raises(ValueError, match="Could not find a navigation page"):  # no Team page in the demo:
        at.switch_page("app_pages/team.py")  # its anonymous admins never manage accounts


def test_graders_do_not_see_strata_entropy_or_predicted_means(world):
    pid = _ready_project(world)
    grader = account_writes.create_account(world, "gina", auth.GRADER, password=PASSWORD)
    viewer = account_writes.create_account(world, "vic", auth.VIEWER, password=PASSWORD)
    for user in (grader, viewer):
        accounts.assign(world, pid, user.id)
    seen = _text(_run(grader, project=pid))
    for hidden in ("Strata", "Semantic entropy", "Planned allocation"):
        assert hidden not in seen
    at = _run(grader, project=pid)
    assert len(at.dataframe) == 1 and not at.slider  # the list of projects only
    assert "Planned allocation" in _text(_run(viewer, project=pid))  # viewers see what the dashboard shows


def test_a_pool_of_exactly_ten_items_opens_on_projects(world):
    admin = account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    pid = _ready_project(world, "Ten", pool_lines=10)
    at = _run(admin, project=pid)
    assert "all 10 items" in _text(at)


def test_the_database_password_is_never_shown(tmp_path, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", "postgres ql://bob:hunter2secret@db.example/app")
    at = AppTest.from_file(APP, default_timeout=60).run()
    shown = _text(at)
    assert "Cannot open the database" in shown and "hunter2secret" not in shown
    assert "bob" not in shown and "db.example" not in shown  # where it is: the operator's, in the log
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", "postgresql+psycopg://bob:hunter2secret@127.0.0.1:1/app")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert "Cannot open the database" in _text(at) and "hunter2secret" not in _text(at)


def _sign_in(at: AppTest, name: str, password: str) -> AppTest:
    at.text_input(key="sign_in_name").input(name)
    at.text_input(key="sign_in_password").input(password)
    return at.button[0].click().run()


def test_failed_sign_ins_back_off_and_an_admin_unlocks_from_team(world):
    root = account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    account_writes.create_account(world, "ann", auth.GRADER, password=PASSWORD)
    at = _run()
    for _ in range(auth.ACCOUNT_FREE_FAILURES - 1):  # guesses from elsewhere
        accounts.add_failure(world, "ann", auth.ACCOUNT)
    _sign_in(at, "ann", "wrong password guess")
    assert "Wrong name or password" in at.error[0].value
    _sign_in(at, "ann", PASSWORD)
    assert "too many failed sign-ins" in at.error[0].value  # even the right password waits (at most a minute)
    for _ in range(5):  # a wait of 32 s, not the 1 s that may end while the Team page loads
        accounts.add_failure(world, "ann", auth.ACCOUNT)
    team = _run(root, "app_pages/team.py")
    [held] = [t.value for t in team.dataframe if "until" in t.value.columns]
    assert held[["name", "from", "failures"]].values.tolist() == [
        ["ann", "every address", auth.ACCOUNT_FREE_FAILURES + 5]
    ]
    team.selectbox(key="change_account_name").select("ann").run()
    team.button(key=f"unlock_{accounts.user_by_name(world, 'ann').id}").click().run()
    assert "No sign-in is held back" in _text(team)
    assert accounts.failures(world, "ann", auth.ACCOUNT)[0] == 0
    assert "account_unlocked" in accounts.events(world)["action"].tolist()
    _sign_in(at, "ann", PASSWORD)
    assert sessions.resume(world, at.session_state[signin.TOKEN_KEY]).name == "ann"


def test_error_details_are_not_shown_to_users_nor_tables_exported_raw():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
    # Streamlit's "Download as CSV" wrote a grader's comment into a reviewer's spreadsheet as a formula (review)
    assert config["client"]["disableDataExport"] is True


def test_every_download_is_in_the_audit_trail(world):
    root = account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    pid = _ready_project(world)
    for position in range(3):
        reservations.submit(world, pid, position, BINARY, "Correct", "root")
    at = _run(root, "app_pages/export.py", project=pid)
    labels = [b.label for b in at.download_button]
    assert len(labels) >= 6, labels  # grades and reports in each format
    for k in range(len(labels)):
        at.download_button[k].click().run()
        assert not at.exception, at.exception
    exported = accounts.events(world, pid)
    exported = exported[exported["action"] == "exported"]
    assert len(exported) == len(labels) and set(exported["actor"]) == {"root"}
    assert len({str(d["what"]) for d in exported["detail"]}) == len(labels)  # each names what was taken


def test_a_short_password_signs_in_only_to_choose_a_new_one(world):
    from argon2 import PasswordHasher

    account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    accounts.create_user(world, "ann", auth.GRADER, password_hash=PasswordHasher().hash("ten chars!"), email=None)
    at = _run()
    _sign_in(at, "ann", "ten chars!")
    assert "shorter than 12 characters" in at.warning[0].value
    assert signin.TOKEN_KEY not in at.session_state  # no session yet: no page
    at.text_input(key="new_password").input("still short")
    at.text_input(key="new_password_repeat").input("still short")
    at.button(key="FormSubmitter:new_password-Save and sign in").click().run()
    assert "fewer than 12" in at.error[0].value and signin.TOKEN_KEY not in at.session_state
    at.text_input(key="new_password").input("a brand new long password")
    at.text_input(key="new_password_repeat").input("a brand new long password")
    at.button(key="FormSubmitter:new_password-Save and sign in").click().run()
    assert sessions.resume(world, at.session_state[signin.TOKEN_KEY]).name == "ann"
    assert auth.sign_in(world, "ann", "ten chars!") is None
