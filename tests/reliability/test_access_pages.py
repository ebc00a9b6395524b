"""Access in the app: every page under each role and signed out (Streamlit AppTest).

Only the pages and controls a role allows appear, a grader or viewer sees
only the projects assigned to them, and a signed-out visitor sees nothing
but the sign-in form, whichever page they ask for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import config
from core.inputs.markup import one_line_plain
from core.services import account_writes, auth, sessions, team
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from tests.card_press import press, shown
from ui import signin

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DATA = ROOT / "tests" / "data" / "app"
PAGES = {
    "Projects": "app_pages/projects.py",
    "Grade": "app_pages/grade.py",
    "Dashboard": "app_pages/dashboard.py",
    "Export": "app_pages/export.py",
    "Simulate": "app_pages/simulate.py",
    "Team": "app_pages/team.py",
    "Review": "app_pages/review.py",
    "Records": "app_pages/records.py",
}
ALLOWED = {  # from the issue: admin everything; grader grades; viewer dashboard only (both list their projects)
    auth.ADMIN: set(PAGES),
    auth.GRADER: {"Projects", "Grade"},  # not the dashboard: grading stays blind to the running estimate
    auth.VIEWER: {"Projects", "Dashboard", "Records"},
    auth.REVIEWER: {"Projects", "Review", "Records"},  # blind to the estimate, as graders
}
PASSWORD = "a long enough password"


def upload(name: str) -> tuple[str, bytes]:
    return name, (DATA / name).read_bytes()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('pages') / 'pages.db'}"
    store = Store.open(url)
    pid = create_project(store, "Arithmetic", upload("pool.jsonl"), upload("samples.jsonl"), start=False)
    start_preparation(store, pid, wait=True)
    other = create_project(store, "Other", upload("pool.jsonl"), upload("samples.jsonl"), start=False)
    start_preparation(store, other, wait=True)
    users = {role: account_writes.create_account(store, f"{role}-1", role, password=PASSWORD) for role in auth.ROLES}
    for role in (auth.GRADER, auth.VIEWER, auth.REVIEWER):
        accounts.assign(store, pid, users[role].id)
    return url, store, pid, other, users


@pytest.fixture
def open_as(world, monkeypatch):
    url = world[0]
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(DATA))
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    # AppTest presses at once: the server's viewing time is milliseconds (core.services.grading.viewing_seconds)
    monkeypatch.setattr("core.services.grading.min_view_s", lambda settings: 0.0)

    def run(user: auth.User | None, page: str | None = None, project: int | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        if user is not None:  # signed in: a server-side session, as the sign-in form starts it
            at.session_state[signin.TOKEN_KEY] = sessions.start(Store.open(url), user)
        if project is not None:
            at.query_params["project"] = str(project)
        at.run()
        if page is not None:
            at.switch_page(PAGES[page]).run()
        assert not at.exception, at.exception
        return at

    return run


def titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def buttons(at: AppTest) -> set[str]:
    return {b.label for b in at.button}


@pytest.mark.parametrize("page", [None, *PAGES])
def test_signed_out_sees_only_the_sign_in_form(open_as, world, page):
    at = open_as(None, page, project=world[2])
    assert titles(at) == ["ActiveGrade"]
    assert "Sign in" in {b.label for b in at.button} | {f.label for f in at.get("form_submit_button")} or at.get("form")
    assert not at.dataframe and not at.metric
    assert at.text_input(key="sign_in_password") is not None
    # a saved account is filled in by the browser, not a new password made up
    assert at.text_input(key="sign_in_password").proto.autocomplete == "current-password"
    assert at.text_input(key="sign_in_name").proto.autocomplete == "username"


def test_a_session_loses_what_an_admin_takes_away(open_as, world):
    _, store, pid, _, _ = world
    signed_in = account_writes.create_account(store, "demoted", auth.ADMIN, password=PASSWORD)
    account_writes.set_role(store, "demoted", auth.VIEWER)  # after they signed in
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        open_as(signed_in, "Team", project=pid)
    accounts.set_active(store, "demoted", False)
    at = open_as(signed_in, "Projects", project=pid)
    assert titles(at) == ["ActiveGrade"] and signin.TOKEN_KEY not in at.session_state  # signed out


@pytest.mark.parametrize("role", auth.ROLES)
@pytest.mark.parametrize("page", PAGES)
def test_each_role_reaches_only_its_pages(open_as, world, role, page):
    _, _, pid, _, users = world
    if page in ALLOWED[role]:
        assert page in titles(open_as(users[role], page, project=pid))
    else:  # not in the navigation: no link, and a URL to it opens the default page instead
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            open_as(users[role], page, project=pid)


@pytest.mark.parametrize("role", auth.ROLES)
def test_project_controls_follow_the_role(open_as, world, role):
    _, _, pid, other, users = world
    at = open_as(users[role], "Projects", project=pid)
    admin_controls = {"Create project", "Delete", "Open the demo", "Save settings"}
    assert (admin_controls <= buttons(at)) is (role == auth.ADMIN)
    assert (admin_controls & buttons(at) == set()) is (role != auth.ADMIN)
    assert [h.value for h in at.header][:1] == ["Arithmetic"]
    # a project they are not assigned to stays closed to graders and viewers
    at = open_as(users[role], "Projects", project=other)
    assert ("Other" in [h.value for h in at.header]) is (role == auth.ADMIN)


def test_a_grader_grades_under_their_account_name(open_as, world):
    _, store, pid, _, users = world
    at = open_as(users[auth.GRADER], "Grade", project=pid)
    before = len(store.grades(pid))
    position = accounts.held(store, pid, users[auth.GRADER].name).position  # the page reserved its item
    assert shown(at)["position"] == position
    assert press(at, "grade", label="Correct")["status"] == "saved"
    grades = store.grades(pid)
    assert len(grades) == before + 1
    assert grades.iloc[-1]["grader"] == users[auth.GRADER].name and grades.iloc[-1]["position"] == position


def test_a_changed_grade_and_an_undo_are_in_the_audit_trail(open_as, world):
    _, store, pid, _, users = world
    grader = users[auth.GRADER]
    at = open_as(grader, "Grade", project=pid)
    position = accounts.held(store, pid, grader.name).position
    press(at, "grade", label="Correct")
    press(at, "back")  # review the grade just given
    press(at, "grade", label="Incorrect")
    press(at, "undo")
    trail = accounts.events(store, pid)
    mine = trail[trail["actor"] == grader.name]
    assert mine["action"].tolist()[-2:] == ["grade_changed", "undo"]
    assert mine.iloc[-2]["detail"] == {"position": position, "before": "Correct", "after": "Incorrect"}
    assert mine.iloc[-1]["detail"] == {"position": position, "restored": 1}  # the change undone: Correct stands
    assert store.grade_of(pid, position, grader.name)["label"] == "Correct"


def test_a_press_after_the_session_ended_is_not_stored(open_as, world):
    _, store, pid, _, _ = world
    kim = account_writes.create_account(store, "kim", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, kim.id)
    at = open_as(kim, "Grade", project=pid)
    before = len(store.grades(pid))
    sessions.end(store, at.session_state[signin.TOKEN_KEY])  # signed out in another tab
    press(at, "grade", label="Correct")
    assert len(store.grades(pid)) == before
    assert titles(at) == ["ActiveGrade"]  # the fragment sent the tab to the sign-in page


CHANGES = {
    "demoted": (
        lambda store, pid, user: account_writes.set_role(store, user.name, auth.VIEWER),
        "Your role changed from grader to viewer, so you were signed out.",
    ),
    "disabled": (
        lambda store, pid, user: accounts.set_active(store, user.name, False),
        "Your account was disabled, so you were signed out.",
    ),
}
"""What an admin does to a grader mid-session that signs her out, and what the sign-in page then says of it. An
unassignment leaves her signed in: the grading card's fragment says it (tests/e2e/test_role_change.py), which
AppTest, rerunning the whole page, cannot show."""


def said(at: AppTest) -> list[str]:
    return [w.value for w in at.warning] + [e.value for e in at.error]


def grading(open_as, world, name: str):
    """(store, project, a new grader assigned to it, her Grade page open) of the ``world``."""
    _, store, pid, _, _ = world
    grader = account_writes.create_account(store, name, auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)
    return store, pid, grader, open_as(grader, "Grade", project=pid)


NEXT = {
    "demoted": "Sign in again to go on with the viewer role (an admin can change it on the Team page).",
    "disabled": "It cannot sign in again until an admin enables it (Team page).",
}
"""What the sign-in page then tells her to do: a disabled account cannot sign in, a demoted one signs in as a viewer."""


@pytest.mark.parametrize("change", CHANGES)
def test_a_grader_changed_mid_session_is_told_what_happened_to_her_next_press(open_as, world, change):
    store, pid, grader, at = grading(open_as, world, f"next-{change}")
    item = shown(at)["item_id"]
    act, reason = CHANGES[change]
    act(store, pid, grader)
    before = len(store.grades(pid))
    press(at, "grade", label="Correct")
    assert len(store.grades(pid)) == before
    note = f"Your last {one_line_plain(f'grade (Correct) of item {item}')} was not saved."  # shown literally
    assert any(text.endswith(f"{reason} {note} {NEXT[change]}") for text in said(at)), said(at)


@pytest.mark.parametrize("change", CHANGES)
def test_a_grader_changed_after_her_press_is_told_it_was_saved(open_as, world, change):
    store, pid, grader, at = grading(open_as, world, f"last-{change}")
    item = shown(at)["item_id"]
    assert press(at, "grade", label="Correct")["status"] == "saved"
    act, reason = CHANGES[change]
    act(store, pid, grader)
    at.run()  # her next rerun: a reload, a click, the fragment's own
    note = f"Your last {one_line_plain(f'grade (Correct) of item {item}')} was saved before the change."
    assert any(reason in text and note in text for text in said(at)), said(at)
    at.run()
    assert titles(at) == ["ActiveGrade"] and not said(at)  # said once


def test_signing_out_by_choice_says_nothing_of_it(open_as, world):
    _, _, _, at = grading(open_as, world, "leaves")
    press(at, "grade", label="Correct")
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert titles(at) == ["ActiveGrade"] and not said(at)


def test_an_admin_manages_the_team_and_exports_the_trail(open_as, world):
    _, store, pid, _, users = world
    at = open_as(users[auth.ADMIN], "Team", project=pid)
    at.text_input(key="new_account_name").input("Zoe")
    at.selectbox(key="new_account_role").select(auth.VIEWER)
    at.text_input(key="new_account_password").input("short")
    next(b for b in at.button if b.label == "Create account").click().run()
    assert at.error and at.text_input(key="new_account_name").value == "Zoe"  # refused: what was typed stays
    at.text_input(key="new_account_password").input(PASSWORD)
    next(b for b in at.button if b.label == "Create account").click().run()
    assert not at.exception, at.exception
    assert accounts.user_by_name(store, "zoe").role == auth.VIEWER
    assert at.text_input(key="new_account_name").value == ""  # made: the form is empty for the next
    at.multiselect(key=f"members_choice_{pid}").select("zoe")
    at.slider(key=f"overlap_{pid}").set_value(0.2)
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception, at.exception
    assert "zoe" in {u.name for u in accounts.members(store, pid)}
    assert store.project(pid).settings.overlap == pytest.approx(0.2)
    actions = set(accounts.events(store)["action"])
    assert {"account_created", "member_added", "settings_changed"} <= actions
    assert any(b.label == "Audit trail (CSV)" for b in at.get("download_button"))
    store.update_settings(pid, {"overlap": 0.0})


def test_changing_an_account_keeps_what_the_admin_left_alone(open_as, world):
    _, store, pid, _, users = world
    pat = account_writes.create_account(store, "pat", auth.GRADER, password=PASSWORD)
    at = open_as(users[auth.ADMIN], "Team", project=pid)
    at.selectbox(key="change_account_name").select("pat").run()  # the form below now shows pat's values
    assert at.selectbox(key=f"change_account_role_{pat.id}_grader_1").value == auth.GRADER
    at.text_input(key=f"change_account_password_{pat.id}_grader_1").input("another long password")
    next(b for b in at.button if b.label == "Save account").click().run()
    assert not at.exception, at.exception
    pat = accounts.user_by_name(store, "pat")
    assert (pat.role, pat.active) == (auth.GRADER, True)  # only the password changed
    assert auth.verify_password(pat.password_hash, "another long password")


OIDC = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "x" * 32,
    "client_id": "id",
    "client_secret": "secret",
    "server_metadata_url": "https://idp.example/.well-known/openid-configuration",
}


def test_oidc_sign_in_maps_the_identity_to_an_account(world, monkeypatch):
    url, store, pid, _, _ = world
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    if accounts.user_by_email(store, "olga@example.org") is None:
        olga = account_writes.create_account(store, "olga", auth.VIEWER, email="olga@example.org")
        accounts.assign(store, pid, olga.id)

    def visit(user: dict) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.secrets["auth"] = OIDC
        at.user = user
        at.query_params["project"] = str(pid)
        at.run()
        assert not at.exception, at.exception
        return at

    out = visit({"is_logged_in": False})
    assert "Sign in with your identity provider" in buttons(out) and "Projects" not in titles(out)
    known = visit({"is_logged_in": True, "email": "olga@example.org", "email_verified": True})
    assert "Projects" in titles(known) and "Signed in as **olga** (viewer)" in [c.value for c in known.caption]
    stranger = visit({"is_logged_in": True, "email": "eve@example.org", "email_verified": True})
    assert "Projects" not in titles(stranger)
    assert "no active ActiveGrade account has the e-mail eve@example.org" in stranger.error[0].value


def test_the_first_visitor_of_an_empty_database_creates_the_admin(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path))
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.text_input(key="first_admin_code").input(team.setup_code())  # the app's and the test's process: one
    at.text_input(key="first_admin_name").input("Root")
    at.text_input(key="first_admin_password").input(PASSWORD)
    at.text_input(key="first_admin_repeat").input(PASSWORD + "!")
    next(b for b in at.button if b.label == "Create the admin account").click().run()
    assert "The two passwords differ." in [e.value for e in at.error]
    at.text_input(key="first_admin_repeat").input(PASSWORD)
    next(b for b in at.button if b.label == "Create the admin account").click().run()
    assert not at.exception, at.exception
    assert "Projects" in titles(at)
    store = Store.open(url)
    assert [(u.name, u.role) for u in accounts.users(store)] == [("root", auth.ADMIN)]
    # from now on, a new visitor must sign in
    again = AppTest.from_file(APP, default_timeout=60)
    again.run()
    assert again.text_input(key="sign_in_password") is not None and "Projects" not in titles(again)
