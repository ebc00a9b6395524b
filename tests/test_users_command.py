"""`python -m core users`: the password line read from standard input."""

from __future__ import annotations

import io

from core.cli import main
from core.services import auth
from core.store import Store


def test_a_password_piped_with_a_windows_line_end_signs_in(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\r\n"))
    assert main(["users", "--db", url, "add", "carol", "--role", "grader"]) == 0
    assert auth.sign_in(Store.open(url), "carol", "correct horse battery") is not None
