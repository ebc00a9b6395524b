"""`python -m core users`: the password line read from standard input."""

from __future__ import annotations

import io
import json

from core.cli import main
from core.services import auth
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
