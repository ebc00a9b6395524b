"""`python -m core users`: the password line read from standard input."""

from __future__ import annotations

import io
import json
from datetime import timedelta

from core.cli import main
from core.services import auth, tokens
from core.store import Store


def test_a_password_piped_with_a_windows_line_end_signs_in(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\r\n"))
    assert main(["users", "--db", url, "add", "carol", "--role", "grader"]) == 0
    assert auth.sign_in(Store.open(url), "carol", "correct horse battery") is not None


def test_users_list_as_json_on_standard_output(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "--db-url", url, "add", "dan", "--role", "viewer", "--email", "dan@example.org", "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["users", "--db-url", url, "list", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["users"] == [
        {"name": "dan", "role": "viewer", "email": "dan@example.org", "active": True}
    ]
    assert "dan\tviewer" in captured.err


def test_an_api_token_is_printed_once_listed_without_its_secret_and_revoked(tmp_path, capsys):
    from core.services import tokens

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "--db-url", url, "add", "eve", "--role", "grader", "--email", "eve@example.org"]) == 0
    assert main(["users", "--db-url", url, "token", "create", "eve", "--name", "CI export"]) == 0
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    store = Store.open(url)
    assert tokens.resolve(store, secret).name == "eve"
    assert main(["users", "--db-url", url, "token", "list", "eve", "--json", "-"]) == 0
    listed = capsys.readouterr().out
    assert secret not in listed and json.loads(listed)["tokens"][0]["name"] == "CI export"
    assert main(["users", "--db-url", url, "token", "revoke", str(json.loads(listed)["tokens"][0]["id"])]) == 0
    assert tokens.resolve(store, secret) is None
    assert main(["users", "--db-url", url, "token", "revoke", "99"]) == 2
    far = str(2**64)  # past the database's integers: no such row, not an overflow's traceback
    assert main(["users", "--db-url", url, "token", "revoke", far]) == 2
    assert main(["status", far, "--db-url", url]) == 2 and "no project" in capsys.readouterr().err
    elsewhere = f"sqlite:///{tmp_path / 'typo' / 'db.sqlite'}"  # a mistyped --db-url: no new, empty database
    assert main(["status", "--db-url", elsewhere]) == 2 and "no database at" in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()
    assert main(["status", "--db-url", "notaurl::"]) == 2 and "cannot parse database URL" in capsys.readouterr().err


def test_tokens_create_prints_the_token_alone_on_its_last_line_once_and_it_authenticates(tmp_path, capsys):
    from core.services import tokens

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "--db-url", url, "add", "fay", "--role", "viewer", "--email", "fay@example.org", "-q"]) == 0
    assert main(["tokens", "--db-url", url, "create", "fay"]) == 0
    out = capsys.readouterr().out
    secret = out.splitlines()[-1]
    assert secret.startswith(tokens.PREFIX) and secret == secret.strip() and out.count(secret) == 1
    store = Store.open(url)
    assert tokens.resolve(store, secret).name == "fay"
    assert main(["tokens", "--db-url", url, "list", "fay", "--json", "-"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["tokens"]
    assert listed["name"] == "cli" and listed["expires_at"] and listed["active"]
    assert main(["tokens", "--db-url", url, "revoke", str(listed["id"])]) == 0
    assert tokens.resolve(store, secret) is None


def test_tokens_create_takes_the_days_a_token_answers_and_list_says_until_when(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "--db-url", url, "add", "fay", "--role", "viewer", "--email", "fay@example.org", "-q"]) == 0
    assert main(["tokens", "--db-url", url, "create", "fay", "--days", "30", "--json", "-"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert main(["tokens", "--db-url", url, "list", "fay"]) == 0
    assert f"active until {made['expires_at'][:19]}" in capsys.readouterr().out
    (info,) = tokens.listed(Store.open(url), auth.OPERATOR, "fay")
    assert info.expires_at - info.created_at == timedelta(days=30)
    assert main(["tokens", "--db-url", url, "create", "fay", "--days", "400"]) == 2
    assert "a token's life is 400 days" in capsys.readouterr().err


def test_python_m_core_tokens_create_takes_a_label(tmp_path):
    import subprocess
    import sys

    from core.services import tokens

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "--db-url", url, "add", "gil", "--role", "grader", "--email", "gil@example.org", "-q"]) == 0
    command = [sys.executable, "-m", "core", "tokens", "--db-url", url, "create", "gil", "--name", "CI export"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert tokens.resolve(Store.open(url), done.stdout.splitlines()[-1]).name == "gil"
    assert [t.name for t in tokens.listed(Store.open(url), auth.OPERATOR, "gil")] == ["CI export"]


def test_the_database_may_follow_the_action(tmp_path, capsys):
    """`users assign bob 2 --db-url URL` was argparse's "unrecognized arguments": the option went before the
    action only. Given before, it still holds when the action leaves it out."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["users", "add", "fay", "--role", "viewer", "--email", "fay@example.org", "--db-url", url, "-q"]) == 0
    assert main(["users", "--db-url", url, "list", "--json", "-"]) == 0
    assert [u["name"] for u in json.loads(capsys.readouterr().out)["users"]] == ["fay"]
    assert main(["tokens", "revoke", "99", "--db-url", url]) == 2
    assert "no API token 99: list the account's tokens for their ids" in capsys.readouterr().err


def test_an_operator_disables_enables_and_resets_a_password_and_sees_a_disabled_accounts_tokens(
    tmp_path, monkeypatch, capsys
):
    """The CLI could not disable an account or reset a forgotten password, and a disabled account's tokens could
    be neither listed nor revoked, though they answer again once it is enabled (an operator's review)."""
    from core.services import tokens

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    monkeypatch.setattr("sys.stdin", io.StringIO("first long password\n"))
    assert main(["users", "add", "gil", "--role", "grader", "--db-url", url, "-q"]) == 0
    store = Store.open(url)
    _, secret = tokens.create(store, auth.OPERATOR, "gil", "ci")
    assert main(["users", "disable", "gil", "--db-url", url, "-q"]) == 0
    assert tokens.resolve(store, secret) is None and auth.sign_in(store, "gil", "first long password") is None
    assert main(["tokens", "list", "gil", "--db-url", url, "--json", "-"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["tokens"]
    assert main(["tokens", "revoke", str(listed["id"]), "--db-url", url, "-q"]) == 0
    assert main(["tokens", "create", "gil", "--db-url", url]) == 2
    assert "the account 'gil' is disabled" in capsys.readouterr().err
    assert main(["users", "enable", "gil", "--db-url", url, "-q"]) == 0
    assert tokens.resolve(store, secret) is None  # revoked while disabled: it stays so
    monkeypatch.setattr("sys.stdin", io.StringIO("second long password\n"))
    assert main(["users", "password", "gil", "--db-url", url, "-q"]) == 0
    assert auth.sign_in(store, "gil", "second long password") is not None
