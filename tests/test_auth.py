"""core.services.auth: password hashing, accounts, sign-in (password and OIDC), open demo switch, audit of sign-ins."""

from __future__ import annotations

import threading
from datetime import timedelta
from types import SimpleNamespace

import pytest
from argon2 import PasswordHasher

from core import config
from core.errors import InputError
from core.services import account_writes, auth
from core.store import Store, accounts
from core.testing.waiting import until

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
    with pytest.raises(InputError, match="the password has 11 characters, fewer than 12"):
        auth.hash_password("elevenchars")  # OWASP ASVS 4, 2.1.1
    assert auth.hash_password("twelve chars")


def test_sign_in_checks_name_password_and_active_flag(store):
    account_writes.create_account(store, "  Ann ", auth.GRADER, password=PASSWORD)
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
    assert trail["actor"].tolist() == ["ann", "ann", auth.NO_ACCOUNT, "ann"]  # never what was typed (a review)


def test_refresh_applies_a_role_change_and_a_disabled_account_at_once(store):
    signed_in = account_writes.create_account(store, "cy", auth.ADMIN, password=PASSWORD)
    account_writes.set_role(store, "cy", auth.VIEWER)
    assert auth.refresh(store, signed_in) == auth.User("cy", auth.VIEWER, signed_in.id)
    accounts.set_active(store, "cy", False)
    assert auth.refresh(store, signed_in) is None
    assert auth.refresh(store, auth.User("never-created", auth.ADMIN, 999)) is None


def test_sign_in_upgrades_a_hash_made_with_older_parameters(store):
    weak = PasswordHasher(time_cost=1, memory_cost=8192).hash(PASSWORD)
    account_writes.create_account(store, "bob", auth.ADMIN, password=PASSWORD)
    accounts.set_password_hash(store, "bob", weak)
    assert auth.sign_in(store, "bob", PASSWORD) is not None
    upgraded = accounts.user_by_name(store, "bob").password_hash
    assert upgraded != weak and auth.verify_password(upgraded, PASSWORD)


def test_accounts_refuse_bad_roles_duplicates_and_no_credentials(store):
    account_writes.create_account(store, "ann", auth.VIEWER, password=PASSWORD)
    with pytest.raises(InputError, match="already exists"):
        account_writes.create_account(store, "ANN", auth.VIEWER, password=PASSWORD)
    with pytest.raises(InputError, match="unknown role 'owner'"):
        account_writes.create_account(store, "cy", "owner", password=PASSWORD)
    with pytest.raises(InputError, match="neither a password nor an e-mail"):
        account_writes.create_account(store, "cy", auth.VIEWER)
    with pytest.raises(InputError, match="no account named 'zed'"):
        account_writes.set_role(store, "zed", auth.ADMIN)
    account_writes.set_role(store, "ann", auth.GRADER)
    assert accounts.user_by_name(store, "ann").role == auth.GRADER


def test_oidc_identity_maps_to_an_account_by_verified_email(store):
    account_writes.create_account(store, "dee", auth.GRADER, email="Dee@Example.org")
    user = auth.sign_in_oidc(store, {"is_logged_in": True, "email": "dee@example.org", "email_verified": True})
    assert (user.name, user.role) == ("dee", "grader")
    with pytest.raises(auth.AccessDenied, match="no active ActiveGrade account has the e-mail eve@example.org"):
        auth.sign_in_oidc(store, {"email": "eve@example.org", "email_verified": True})
    with pytest.raises(auth.AccessDenied, match="not verified"):
        auth.sign_in_oidc(store, {"email": "dee@example.org", "email_verified": False})
    # a provider that does not say it verified the e-mail (whose users may set their own) signs no one in by it
    with pytest.raises(auth.AccessDenied, match="did not say it verified dee@example.org"):
        auth.sign_in_oidc(store, {"email": "DEE@example.org", "iss": "https://other-idp", "sub": "attacker"})
    with pytest.raises(auth.AccessDenied, match="did not send an e-mail"):
        auth.sign_in_oidc(store, {"name": "Dee"})
    assert auth.sign_in(store, "dee", "") is None  # an OIDC-only account has no password


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
    assert auth.visible_projects(
        store, auth.sign_in_oidc(store, {"email": "bob@example.org", "email_verified": True})
    ) == {pid}
    assert main(["users", "--db", url, "assign", "bob", "nope"]) == 2
    assert "no project 'nope' in the database" in capsys.readouterr().err
    assert main(["users", "--db", url, "unassign", "bob", str(pid)]) == 0  # by id, as every other command
    assert (
        auth.visible_projects(store, auth.sign_in_oidc(store, {"email": "bob@example.org", "email_verified": True}))
        == set()
    )
    assert main(["users", "--db", url, "assign", "bob", str(pid)]) == 0
    capsys.readouterr()
    assert main(["users", "--db", url, "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["alice\tadmin\t\tactive", "bob\tgrader\tbob@example.org\tactive"]
    assert set(accounts.events(store)["action"]) >= {"account_created", "member_added"}


def test_audit_trail_records_actor_action_project_and_exports_inert_csv(store):
    from core.services import audit

    admin = account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    audit.record(store, admin, audit.SETTINGS_CHANGED, 7, guidelines='=HYPERLINK("http://evil")')
    audit.record(store, admin, audit.UNDO, 8, position=3)
    trail = audit.trail(store)
    assert trail[["actor", "action", "project_id"]].values.tolist() == [
        ["root", "settings_changed", 7],
        ["root", "undo", 8],
    ]
    assert audit.trail(store, 8)["detail"].tolist() == [{"position": 3}]
    assert audit.trail(store, last=1)["action"].tolist() == ["undo"] and audit.trail_size(store) == 2
    audit.record(store, auth.demo_user(""), audit.PROJECT_CREATED, 9)  # an open-demo visitor with no name typed
    assert audit.trail(store, last=1)["actor"].tolist() == [audit.OPEN_DEMO_VISITORS]  # not blank (a review)
    text = audit.trail_csv(trail).decode()
    assert "undo" in text and '"{""position"": 3}"' in text
    accounts.record_event(store, "=cmd|' /C calc'!A0", "sign_in_failed")  # a name typed at the sign-in form
    assert "'=cmd" in audit.trail_csv(audit.trail(store)).decode()  # a formula-looking actor is made inert


def _age_failures(store, seconds: float) -> None:
    """Move every recorded failure ``seconds`` into the past (instead of waiting)."""
    from sqlalchemy import select

    with store.session() as s, s.begin():
        for row in s.scalars(select(accounts.SignInFailure)):
            row.last_failed_at = row.last_failed_at - timedelta(seconds=seconds)


def test_failures_back_off_per_name_and_address_and_never_lock_anyone_out(store):
    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    for _ in range(auth.FREE_FAILURES):
        assert auth.sign_in(store, "ann", "guess guess guess", address="203.0.113.9") is None
    with pytest.raises(auth.SignInThrottled, match="try again in 1 s"):
        auth.sign_in(store, "ann", PASSWORD, address="203.0.113.9")  # the attacker's address waits
    assert auth.sign_in(store, "ann", PASSWORD, address="198.51.100.1") is not None  # the admin does not
    _age_failures(store, 1.5)
    assert auth.sign_in(store, "ann", PASSWORD, address="203.0.113.9") is not None  # the wait ends by itself
    assert accounts.failures(store, "ann", "203.0.113.9")[0] == 0  # and a success clears it
    assert accounts.events(store)["detail"].tolist()[-1] == {"address": "203.0.113.9"}


def test_the_back_off_doubles_up_to_its_cap():
    waits = [auth.back_off(n).total_seconds() for n in range(auth.FREE_FAILURES + 30)]
    assert waits[: auth.FREE_FAILURES] == [0] * auth.FREE_FAILURES
    assert waits[auth.FREE_FAILURES : auth.FREE_FAILURES + 3] == [1, 2, 4]
    assert max(waits) == auth.MAX_BACK_OFF.total_seconds()


def test_an_admin_unlocks_an_account_from_the_cli(store, tmp_path, monkeypatch, capsys):
    from core.cli import main

    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    for _ in range(auth.FREE_FAILURES + 3):
        _age_failures(store, 3600)  # an hour between tries: each one is checked and fails
        assert auth.sign_in(store, "ann", "guess guess guess", address="203.0.113.9") is None
    with pytest.raises(auth.SignInThrottled):
        auth.sign_in(store, "ann", PASSWORD, address="203.0.113.9")
    assert main(["users", "--db", str(store.engine.url), "unlock", "Ann"]) == 0
    assert "ann may sign in again" in capsys.readouterr().out
    assert auth.sign_in(store, "ann", PASSWORD, address="203.0.113.9") is not None
    assert "account_unlocked" in accounts.events(store)["action"].tolist()


def test_over_long_names_and_passwords_fail_without_hashing_or_storing_them(store, monkeypatch):
    account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    hashed = []
    monkeypatch.setattr(auth, "_hasher", SimpleNamespace(verify=lambda *a: hashed.append(1) or False))
    assert auth.sign_in(store, "ann", "p" * 2_000_000) is None
    assert hashed == []
    assert auth.sign_in(store, "x" * 2_000_000, PASSWORD) is None
    assert max(accounts.events(store)["actor"].str.len()) <= 200  # no 2 MB name in the audit trail
    with pytest.raises(InputError, match="more than the 1,024 allowed"):
        auth.hash_password("p" * 1025)


def test_argon2_hashing_runs_at_most_max_concurrent_hashes_at_once(monkeypatch):
    running, peak, lock = [0], [0], threading.Lock()
    release = threading.Event()

    def slow_verify(encoded, password):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        release.wait()  # held until the test has seen the slots taken
        with lock:
            running[0] -= 1
        return False

    monkeypatch.setattr(auth, "_hasher", SimpleNamespace(verify=slow_verify))
    threads = [threading.Thread(target=auth.verify_password, args=("$argon2id$x", "pw")) for _ in range(16)]
    for t in threads:
        t.start()
    try:  # every slot taken (a peak above the limit shows below); then the waiting threads may go
        until(lambda: running[0] >= auth.MAX_CONCURRENT_HASHES, timeout=60, what="the hash slots to be taken")
    finally:
        release.set()
    for t in threads:
        t.join()
    assert peak[0] == auth.MAX_CONCURRENT_HASHES


def test_an_oidc_only_account_costs_a_hash_like_any_other_name(store, monkeypatch):
    account_writes.create_account(store, "olga", auth.GRADER, email="olga@example.org")  # no password
    checked = []
    real = auth._hasher
    spy = SimpleNamespace(verify=lambda encoded, pw: checked.append(encoded) or real.verify(encoded, pw))
    monkeypatch.setattr(auth, "_hasher", spy)
    assert auth.sign_in(store, "olga", PASSWORD) is None
    assert auth.sign_in(store, "nobody", PASSWORD) is None
    assert len(checked) == 2 and checked[0] == checked[1]  # the same throw-away hash for both: same time


@pytest.mark.parametrize(
    "name, problem",
    [
        ("\u0430dmin", "mixes the scripts"),  # Cyrillic a + Latin dmin
        ("\u3164", "holds the character"),  # Hangul filler: blank-looking
        ("\u2800\u2800", "no letter or digit"),  # Braille blanks
        ("a\u200bb", "holds the character"),  # zero-width space
        ("ann  lee", "two spaces"),
        ("   ", "no letter or digit"),
        ("\u0640\u0640\u0640", "no letter or digit"),  # Arabic tatweels: a line, no letter
        ("-ann", "starts with '-'"),  # a formula, where a spreadsheet opens an export of the names
        ("@bob", "starts with '@'"),
        ("x" * 201, "more than the 200 allowed"),
    ],
)
def test_look_alike_and_blank_account_names_are_refused(store, name, problem):
    with pytest.raises(InputError, match=problem):
        account_writes.create_account(store, name, auth.GRADER, password=PASSWORD)


def test_accented_and_non_latin_names_are_fine(store):
    for name in ("jos\u00e9", "\u5c71\u7530\u305f\u308d\u3046", "\u0438\u0432\u0430\u043d", "o'neil-smith.2"):
        account_writes.create_account(store, name, auth.GRADER, password=PASSWORD)


def test_an_all_space_password_is_refused():
    with pytest.raises(InputError, match="only spaces"):
        auth.hash_password(" " * 12)


def test_open_demo_refuses_a_database_with_accounts_and_never_manages_accounts(store):
    auth.check_open_demo(store)  # empty: fine
    demo = auth.demo_user("visitor")
    assert auth.may(store, demo, auth.CREATE_PROJECT) and not auth.may(store, demo, auth.MANAGE_USERS)
    account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)
    with pytest.raises(InputError, match="has accounts"):
        auth.check_open_demo(store)


def test_the_open_demo_grader_name_is_a_name_with_its_case_kept():
    assert auth.demo_user(" Kim ").name == "Kim" and auth.demo_user("").name == ""
    assert auth.demo_user("\u0639\u0644\u064a\u0661").name == "\u0639\u0644\u064a\u0661"  # Arabic, its own digit
    for bad, why in [
        ("=SUM(A1)", "holds the character '='"),
        ("a\u202eb", "holds the character"),
        ("x" * 201, "201"),
        ("admin\u0661", "mixes the scripts"),  # an Arabic-Indic one looks like admin1
    ]:
        with pytest.raises(InputError, match=why):
            auth.demo_user(bad)


def test_recheck_reads_account_role_assignment_and_project_again(store, monkeypatch):
    pid = store.create_project("p", {}, {"pool": ("pool.jsonl", b"{}\n")})
    gina = account_writes.create_account(store, "gina", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, gina.id)
    assert auth.recheck(store, gina, auth.GRADE, pid).name == "gina"
    accounts.unassign(store, pid, gina.id)
    with pytest.raises(auth.AccessDenied, match="not assigned"):
        auth.recheck(store, gina, auth.GRADE, pid)
    accounts.assign(store, pid, gina.id)
    account_writes.set_role(store, "gina", auth.VIEWER)
    with pytest.raises(auth.AccessDenied, match="viewer role may not grade"):
        auth.recheck(store, gina, auth.GRADE, pid)
    accounts.set_active(store, "gina", False)
    with pytest.raises(auth.AccessDenied, match="disabled"):
        auth.recheck(store, gina, auth.VIEW_DASHBOARD, pid)
    with pytest.raises(auth.AccessDenied, match="signed out"):
        auth.recheck(store, None, auth.VIEW_DASHBOARD, pid)
    store.delete_project(pid)
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    with pytest.raises(auth.AccessDenied, match="deleted"):
        auth.recheck(store, auth.demo_user("x"), auth.VIEW_DASHBOARD, pid)
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    with pytest.raises(auth.AccessDenied, match="signed out"):  # the demo's user, once the demo is off
        auth.recheck(store, auth.demo_user("x"), auth.VIEW_PROJECTS)


def test_a_refused_sign_in_says_where_it_came_from(store, caplog):
    """A sign-in from this machine was logged as from "an unknown address": Streamlit gives no loopback address."""
    caplog.set_level("INFO", logger="core.services.auth")
    account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    auth.sign_in(store, "ann", "wrong password", address="203.0.113.9")
    auth.sign_in(store, "ann", "wrong password", address=None)
    auth.sign_in(store, "Hunter2-MyRealPassword!", "x", address="203.0.113.9")  # a password in the name field
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("sign-in refused")]
    assert refused == [
        "sign-in refused for 'ann' from 203.0.113.9",
        "sign-in refused for 'ann' from an address not known (this machine, or a proxy not named in "
        "$ACTIVEGRADE_TRUSTED_PROXIES)",
        f"sign-in refused for {auth.NO_ACCOUNT} from 203.0.113.9",  # what was typed is not logged
    ]


def test_unknown_addresses_share_no_long_wait_so_five_guesses_lock_no_one_out(store):
    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    for _ in range(auth.FREE_FAILURES + 3):  # someone else on localhost, or behind an untrusted proxy
        assert auth.sign_in(store, "ann", "guess guess guess", address=None) is None
    assert auth.sign_in(store, "ann", PASSWORD, address=None) is not None  # ann is not refused


def test_guesses_sent_together_take_turns_so_one_back_off_window_lets_one_through(store, monkeypatch):
    """The back-off was read, the password checked, then the failure written: guesses sent together all passed
    the read before the first failure was written (12 checked in one window where 1 may be)."""
    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    for _ in range(auth.FREE_FAILURES - 1):  # the next failure starts this address's back-off
        assert auth.sign_in(store, "ann", "guess guess guess", address="198.51.100.7") is None
    ten_minutes = timedelta(minutes=10)  # a back-off no slow machine outlasts
    monkeypatch.setattr(auth, "back_off", lambda failures, free=0, cap=None: ten_minutes * (failures >= free))
    checked, start = [], threading.Barrier(12)
    verify = auth.verify_password
    monkeypatch.setattr(auth, "verify_password", lambda *a: checked.append(1) or verify(*a))

    def guess() -> None:
        start.wait()
        try:
            auth.sign_in(store, "ann", "guess guess guess", address="198.51.100.7")
        except auth.SignInThrottled:
            pass

    threads = [threading.Thread(target=guess) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(checked) == 1


def test_the_account_back_off_slows_guessing_spread_over_addresses_and_is_audited(store):
    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    for n in range(auth.ACCOUNT_FREE_FAILURES):
        assert auth.sign_in(store, "ann", "guess guess guess", address=f"203.0.113.{n}") is None
    with pytest.raises(auth.SignInThrottled, match=r"too many failed sign-ins for 'ann': try again in 1 s"):
        auth.sign_in(store, "ann", "guess guess guess", address="198.51.100.77")  # a fresh address waits too
    events = accounts.events(store)
    throttled = events[events["action"] == auth.THROTTLED]
    assert throttled["detail"].tolist() == [{"failures": auth.ACCOUNT_FREE_FAILURES, "address": "203.0.113.19"}]
    _age_failures(store, 1.5)
    assert auth.sign_in(store, "ann", PASSWORD, address="198.51.100.77") is not None
    assert accounts.failures(store, "ann", auth.ACCOUNT)[0] == 0  # the success clears the account's back-off


def test_whoever_knows_a_name_cannot_keep_its_owner_out_from_where_they_sign_in(store):
    """The account's back-off held every sign-in at the name: a wrong password a minute from anywhere kept the
    owner out for good (a security note). An address the account signed in from lately is held by its own
    back-off alone; any other address still by the account's."""
    account_writes.create_account(store, "ann", auth.ADMIN, password=PASSWORD)
    assert auth.sign_in(store, "ann", PASSWORD, address="192.0.2.10") is not None  # ann's office
    for n in range(auth.ACCOUNT_FREE_FAILURES):  # someone else, from many addresses
        assert auth.sign_in(store, "ann", "guess guess guess", address=f"203.0.113.{n}") is None
    with pytest.raises(auth.SignInThrottled, match="too many failed sign-ins for 'ann'"):
        auth.sign_in(store, "ann", PASSWORD, address="198.51.100.77")  # an address ann never signed in from
    assert auth.sign_in(store, "ann", PASSWORD, address="192.0.2.10") is not None  # her office: not held
    assert auth.sign_in(store, "ann", PASSWORD, address="::ffff:192.0.2.10") is not None  # the same, IPv4-mapped
    with pytest.raises(auth.SignInThrottled):  # and her sign-ins gave the guesser no fresh tries elsewhere
        auth.sign_in(store, "ann", "guess guess guess", address="203.0.113.99")
    for _ in range(auth.FREE_FAILURES + 1):  # guessing from her office meets that address's own back-off
        try:
            auth.sign_in(store, "ann", "guess guess guess", address="192.0.2.10")
        except auth.SignInThrottled:
            break
    else:
        pytest.fail("guesses from a known address were never held back")


def test_the_account_back_off_never_keeps_the_right_password_out_longer_than_a_minute():
    waits = [auth.back_off(n, auth.ACCOUNT_FREE_FAILURES, auth.MAX_ACCOUNT_BACK_OFF) for n in range(10_000)]
    assert max(waits) == auth.MAX_ACCOUNT_BACK_OFF == timedelta(minutes=1)
    assert waits[: auth.ACCOUNT_FREE_FAILURES] == [timedelta(0)] * auth.ACCOUNT_FREE_FAILURES


@pytest.mark.parametrize(
    ("trusted", "peer", "forwarded", "client"),
    [
        ("", None, "203.0.113.5", None),  # no proxy is trusted: the header is anyone's to write
        ("", "198.51.100.2", "203.0.113.5", "198.51.100.2"),
        ("127.0.0.1", None, "203.0.113.5", "203.0.113.5"),  # a local reverse proxy (Streamlit: None on loopback)
        ("127.0.0.1", None, "6.6.6.6, 203.0.113.5", "203.0.113.5"),  # what the client wrote itself is ignored
        ("127.0.0.1,10.0.0.0/8", None, "203.0.113.5, 10.1.2.3", "203.0.113.5"),  # two proxies in a row
        ("10.0.0.0/8", "198.51.100.2", "203.0.113.5", "198.51.100.2"),  # the peer is no trusted proxy
        ("127.0.0.1", "::ffff:127.0.0.1", "203.0.113.5", "203.0.113.5"),  # the proxy seen through IPv6
        ("127.0.0.1", None, "not-an-address", None),
        ("127.0.0.1", None, None, None),
    ],
)
def test_the_client_address_comes_from_a_trusted_proxys_header_only(monkeypatch, trusted, peer, forwarded, client):
    monkeypatch.setenv("ACTIVEGRADE_TRUSTED_PROXIES", trusted)
    assert auth.client_address(peer, forwarded) == client


def _short_password_account(store, name: str, password: str) -> None:
    """An account whose password was set before the minimum grew (its hash made directly)."""
    accounts.create_user(store, name, auth.GRADER, password_hash=PasswordHasher().hash(password), email=None)


def test_a_short_password_signs_in_once_more_only_to_be_changed(store):
    from core.services import sessions

    _short_password_account(store, "ann", "ten chars!")
    user = auth.sign_in(store, "ann", "ten chars!")
    assert user is not None and user.must_change_password
    with pytest.raises(auth.AccessDenied, match="choose a new password first"):
        sessions.start(store, user)  # no session, so no page, with the short password
    with pytest.raises(InputError, match="fewer than 12"):
        auth.replace_short_password(store, user, "still short")
    with pytest.raises(InputError, match="fewer than 12"):
        auth.replace_short_password(store, user, "ten chars!")  # the old one
    changed = auth.replace_short_password(store, user, PASSWORD)
    assert not changed.must_change_password and sessions.resume(store, sessions.start(store, changed)).name == "ann"
    assert auth.sign_in(store, "ann", "ten chars!") is None
    assert not auth.sign_in(store, "ann", PASSWORD).must_change_password
    assert "password_changed" in accounts.events(store)["action"].tolist()
    with pytest.raises(auth.AccessDenied, match="no password change is pending"):
        auth.replace_short_password(store, changed, "another long password")


def test_the_open_demo_does_not_answer_through_a_proxy_nobody_named(monkeypatch):
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    auth.check_open_demo_request({"Host": "127.0.0.1:8501", "User-Agent": "x"}, None)  # a direct local client
    for header in ("X-Forwarded-For", "x-real-ip", "Forwarded"):
        with pytest.raises(auth.AccessDenied, match="reached through a reverse proxy"):
            auth.check_open_demo_request({"Host": "demo.example", header: "203.0.113.5"}, None)
    monkeypatch.setenv("ACTIVEGRADE_TRUSTED_PROXIES", "127.0.0.1")
    auth.check_open_demo_request({"Host": "demo.example", "X-Forwarded-For": "203.0.113.5"}, None)  # on purpose


@pytest.mark.parametrize("peer", [None, "127.0.0.1", "127.0.1.1", "::1", "::ffff:127.0.0.1"])
def test_the_open_demo_answers_a_direct_client_on_this_machine(monkeypatch, peer):
    """::ffff:127.0.0.1 is how a server listening on every interface of both families sees a local IPv4 client
    (it was refused as 'another' machine)."""
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    auth.check_open_demo_request({"Host": "127.0.0.1:8501"}, peer)


@pytest.mark.parametrize(
    "peer, named",
    [
        ("192.168.1.20", True),
        ("::ffff:192.168.1.20", True),
        ("203.0.113.5", False),
        ("2001:db8::1", False),
        ("not an address", False),
    ],
)
def test_the_open_demo_answers_a_client_elsewhere_only_from_the_networks_named(monkeypatch, peer, named):
    """Served on 0.0.0.0 and reached from the network: refused, unless the client's address lies in a network
    ACTIVEGRADE_TRUSTED_PROXIES names (any value once let every address in)."""
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    with pytest.raises(auth.AccessDenied, match="answers only on this machine.*ACTIVEGRADE_TRUSTED_PROXIES"):
        auth.check_open_demo_request({"Host": "192.168.1.10:8501"}, peer)
    monkeypatch.setenv("ACTIVEGRADE_TRUSTED_PROXIES", "192.168.1.0/24")
    if named:
        auth.check_open_demo_request({"Host": "192.168.1.10:8501"}, peer)  # exposed on purpose
    else:
        with pytest.raises(auth.AccessDenied, match="answers only on this machine"):
            auth.check_open_demo_request({"Host": "192.168.1.10:8501"}, peer)
        with pytest.raises(auth.AccessDenied, match="reached through a reverse proxy"):  # claims a named address
            auth.check_open_demo_request({"Host": "192.168.1.10:8501", "X-Forwarded-For": "192.168.1.20"}, peer)


@pytest.mark.parametrize("host", ["localhost:8501", "127.0.0.1:8501", "[::1]:8501", "demo.localhost", "LOCALHOST", ""])
def test_the_open_demo_answers_its_local_names(monkeypatch, host):
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    auth.check_open_demo_request({"Host": host}, "127.0.0.1")


@pytest.mark.parametrize("host", ["rebind.attacker.example:8501", "evil.example", "192.168.1.10:8501", "[2001:db8::1]"])
def test_the_open_demo_refuses_a_local_connection_that_names_another_host(monkeypatch, host):
    """DNS rebinding: a page of another site whose name now points at 127.0.0.1 connects from this machine, and
    sends its own name as Host (and as Origin, so the same-origin check passes)."""
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    with pytest.raises(auth.AccessDenied, match="answers only to its local names"):
        auth.check_open_demo_request({"Host": host, "Origin": f"http://{host}"}, "127.0.0.1")


def test_every_action_is_refused_in_words():
    """A refusal names what the role may not do in words ('create a project'), never an action's code."""
    assert set(auth.ACTION_WORDS) == set(auth.ACTIONS)
    assert all("_" not in words for words in auth.ACTION_WORDS.values())


def test_one_address_spraying_many_names_is_slowed_as_at_one_name(store):
    """The buckets were per name: one address tried 5 passwords at each of any number of names, held back at
    none (an attacker's review, 25 guesses at 5 accounts and 20 unknown names)."""
    for k in range(5):
        account_writes.create_account(store, f"user{k}", auth.GRADER, password=PASSWORD)
    sprayer, colleague = "203.0.113.9", "198.51.100.1"
    names = [f"user{k % 5}" if k % 2 else f"nobody{k}" for k in range(auth.ADDRESS_FREE_FAILURES)]
    for name in names:  # at most 4 tries at any one name: no per-name back-off starts
        assert auth.sign_in(store, name, "Spring2026!", address=sprayer) is None
    with pytest.raises(auth.SignInThrottled, match="too many failed sign-ins from here: try again in 1 s"):
        auth.sign_in(store, "user3", PASSWORD, address=sprayer)  # checked nothing, so a right password waits too
    assert auth.sign_in(store, "user3", PASSWORD, address=colleague) is not None  # elsewhere, nobody waits
    (held,) = [t for t in auth.throttled(store) if t.name == auth.ANY_NAME]
    assert held.address == sprayer and held.failures == auth.ADDRESS_FREE_FAILURES
    _age_failures(store, auth.MAX_BACK_OFF.total_seconds() + 1)  # a quiet spell: the count starts again
    assert auth.sign_in(store, "user3", PASSWORD, address=sprayer) is not None
    assert accounts.failures(store, auth.ANY_NAME, sprayer)[0] == 0


def test_an_ipv6_sprayer_rotating_through_its_network_is_slowed_as_from_one_address(store):
    """The back-offs counted each IPv6 address apart: rotating through one /64, which every IPv6 client holds,
    60 guesses passed with none held back (an attacker's review)."""
    account_writes.create_account(store, "user0", auth.GRADER, password=PASSWORD)
    for k in range(auth.ADDRESS_FREE_FAILURES):
        assert auth.sign_in(store, f"nobody{k}", "Spring2026!", address=f"2001:db8:1:2::{k + 1:x}") is None
    with pytest.raises(auth.SignInThrottled, match="from here"):
        auth.sign_in(store, "user0", PASSWORD, address="2001:db8:1:2:ffff::7")  # the same /64
    assert auth.sign_in(store, "user0", PASSWORD, address="2001:db8:1:3::1") is not None  # another network
    assert auth.address_bucket("2001:db8:1:2::9f") == "2001:db8:1:2::/64"
    assert (
        auth.address_bucket("203.0.113.9") == "203.0.113.9"
        and auth.address_bucket("::ffff:1.2.3.4") == "1.2.3.4"  # an IPv4 client's address, as IPv4
    )
