"""core.auth: password hashing, accounts, sign-in (password and OIDC), open demo switch, audit of sign-ins."""

from __future__ import annotations

from datetime import timedelta

import pytest
from argon2 import PasswordHasher

from core import auth
from core.errors import InputError
from core.store import Store, accounts

PASSWORD = "correct horse battery"


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'auth.db'}")


def test_hashes_are_salted_argon2_and_verify():
    first, second = auth.hash_password(PASSWORD), auth.hash_password(PASSWORD)
    assert first.startswith("$argon2id$") and first != second  # a fresh salt each time
    assert PASSWORD not in first
    assert auth.verify_password(first, PASSWORD) and auth.verify_password(second, PASSWORD)
    assert not auth.verify_password(first, PASSWORD + "!")
    assert not auth.verify_password(None, PASSWORD)
    assert not auth.verify_password("not a hash", PASSWORD)


def test_short_password_is_refused_with_the_fix():
    with pytest.raises(InputError, match="at least 10 characters"):
        auth.hash_password("short")


def test_sign_in_checks_name_password_and_active_flag(store):
    auth.create_account(store, "  Ann ", auth.GRADER, password=PASSWORD)
    stored = accounts.user_by_name(store, "ann")
    assert stored.password_hash.startswith("$argon2id$")
    user = auth.sign_in(store, "ANN", PASSWORD)  # names are case-insensitive
    assert (user.name, user.role) == ("ann", "grader")
    assert auth.sign_in(store, "ann", "wrong password") is None
    assert auth.sign_in(store, "nobody", PASSWORD) is None
    accounts.set_active(store, "ann", False)
    assert auth.sign_in(store, "ann", PASSWORD) is None
    trail = accounts.events(store)
    assert trail["action"].tolist() == ["sign_in", "sign_in_failed", "sign_in_failed", "sign_in_failed"]
    assert trail["actor"].tolist() == ["ann", "ann", "nobody", "ann"]


def test_refresh_applies_a_role_change_and_a_disabled_account_at_once(store):
    signed_in = auth.create_account(store, "cy", auth.ADMIN, password=PASSWORD)
    auth.set_role(store, "cy", auth.VIEWER)
    assert auth.refresh(store, signed_in) == auth.User("cy", auth.VIEWER, signed_in.id)
    accounts.set_active(store, "cy", False)
    assert auth.refresh(store, signed_in) is None
    assert auth.refresh(store, auth.User("never-created", auth.ADMIN, 999)) is None


def test_sign_in_upgrades_a_hash_made_with_older_parameters(store):
    weak = PasswordHasher(time_cost=1, memory_cost=8192).hash(PASSWORD)
    auth.create_account(store, "bob", auth.ADMIN, password=PASSWORD)
    accounts.set_password_hash(store, "bob", weak)
    assert auth.sign_in(store, "bob", PASSWORD) is not None
    upgraded = accounts.user_by_name(store, "bob").password_hash
    assert upgraded != weak and auth.verify_password(upgraded, PASSWORD)


def test_accounts_refuse_bad_roles_duplicates_and_no_credentials(store):
    auth.create_account(store, "ann", auth.VIEWER, password=PASSWORD)
    with pytest.raises(InputError, match="already exists"):
        auth.create_account(store, "ANN", auth.VIEWER, password=PASSWORD)
    with pytest.raises(InputError, match="unknown role 'owner'"):
        auth.create_account(store, "cy", "owner", password=PASSWORD)
    with pytest.raises(InputError, match="neither a password nor an e-mail"):
        auth.create_account(store, "cy", auth.VIEWER)
    with pytest.raises(InputError, match="no account named 'zed'"):
        auth.set_role(store, "zed", auth.ADMIN)
    auth.set_role(store, "ann", auth.GRADER)
    assert accounts.user_by_name(store, "ann").role == auth.GRADER


def test_oidc_identity_maps_to_an_account_by_verified_email(store):
    auth.create_account(store, "dee", auth.GRADER, email="Dee@Example.org")
    user = auth.sign_in_oidc(store, {"is_logged_in": True, "email": "dee@example.org", "email_verified": True})
    assert (user.name, user.role) == ("dee", "grader")
    with pytest.raises(auth.AccessDenied, match="no active ActiveGrade account has the e-mail eve@example.org"):
        auth.sign_in_oidc(store, {"email": "eve@example.org"})
    with pytest.raises(auth.AccessDenied, match="not verified"):
        auth.sign_in_oidc(store, {"email": "dee@example.org", "email_verified": False})
    with pytest.raises(auth.AccessDenied, match="did not send an e-mail"):
        auth.sign_in_oidc(store, {"name": "Dee"})
    assert auth.sign_in(store, "dee", "") is None  # an OIDC-only account has no password


@pytest.mark.parametrize(
    ("value", "enabled"), [("1", True), (" 1 ", True), ("", False), ("0", False), ("true", False), ("yes", False)]
)
def test_open_demo_is_on_only_when_switched_on_explicitly(value, enabled):
    assert auth.open_demo_enabled({auth.OPEN_DEMO_ENV: value}) is enabled
    assert auth.open_demo_enabled({}) is False


def test_users_command_creates_assigns_and_lists_accounts(tmp_path, monkeypatch, capsys):
    import io

    from core.cli import main

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store.open(url)
    pid = store.create_project("P", {}, {"pool": ("pool.jsonl", b"{}\n")})
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert main(["users", "--db", url, "add", "Alice", "--role", "admin"]) == 0
    assert auth.sign_in(store, "alice", PASSWORD).role == auth.ADMIN
    assert main(["users", "--db", url, "add", "bob", "--role", "grader", "--email", "bob@example.org"]) == 0
    assert main(["users", "--db", url, "assign", "bob", "P"]) == 0
    assert auth.visible_projects(store, auth.sign_in_oidc(store, {"email": "bob@example.org"})) == {pid}
    assert main(["users", "--db", url, "assign", "bob", "nope"]) == 2
    assert "no project named 'nope'" in capsys.readouterr().err
    assert main(["users", "--db", url, "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["alice\tadmin\t\tactive", "bob\tgrader\tbob@example.org\tactive"]
    assert set(accounts.events(store)["action"]) >= {"account_created", "member_added"}


def test_audit_trail_records_actor_action_project_and_exports_inert_csv(store):
    from core import audit

    admin = auth.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    audit.record(store, admin, audit.SETTINGS_CHANGED, 7, guidelines='=HYPERLINK("http://evil")')
    audit.record(store, admin, audit.UNDO, 8, position=3)
    trail = audit.trail(store)
    assert trail[["actor", "action", "project_id"]].values.tolist() == [
        ["root", "settings_changed", 7],
        ["root", "undo", 8],
    ]
    assert audit.trail(store, 8)["detail"].tolist() == [{"position": 3}]
    text = audit.trail_csv(trail).decode()
    assert "undo" in text and '"{""position"": 3}"' in text
    accounts.record_event(store, "=cmd|' /C calc'!A0", "sign_in_failed")  # a name typed at the sign-in form
    assert "'=cmd" in audit.trail_csv(audit.trail(store)).decode()  # a formula-looking actor is made inert


def test_repeated_failures_lock_the_name_for_a_while(store, monkeypatch):
    auth.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    monkeypatch.setattr(auth, "MAX_FAILURES", 3)
    for _ in range(3):
        assert auth.sign_in(store, "ann", "guess guess guess") is None
    assert auth.sign_in(store, "ann", PASSWORD) is None  # locked: even the right password waits
    assert accounts.events(store)["action"].tolist()[-1] == "sign_in_locked"
    monkeypatch.setattr(auth, "LOCKOUT", timedelta(0))  # the window has passed
    assert auth.sign_in(store, "ann", PASSWORD) is not None
