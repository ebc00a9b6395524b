"""API tokens on the app's pages: an admin makes one for another account on Team, a grader makes and revokes
their own in the sidebar; the secret is shown once and then works as a bearer token."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core import config
from core.services import account_writes, auth, tokens
from core.store import Store
from tests.app.test_security_pages import DATA, PASSWORD, _run


@pytest.fixture
def world(tmp_path, monkeypatch) -> Store:
    """A signed-in app's database (no open demo)."""
    url = f"sqlite:///{tmp_path / 'tokens.db'}"
    monkeypatch.setenv(config.DB_URL, url)
    monkeypatch.setenv(config.DEMO_DIR, str(DATA))
    monkeypatch.delenv(config.OPEN_DEMO, raising=False)
    return Store.open(url)


def _shown_secret(at) -> str:
    return next(c.value for c in at.code if c.value.startswith(tokens.PREFIX))


def test_an_admin_creates_a_token_for_a_grader_on_team(world):
    root = account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    account_writes.create_account(world, "ann", auth.GRADER, password=PASSWORD)
    team = _run(root, "app_pages/team.py")
    team.selectbox(key="tokens_account").select("ann").run()
    team.text_input(key="token-name-team").input("CI export")
    team.number_input(key="token-days-team").set_value(30)
    team.button(key="FormSubmitter:new-token-team-Create API token").click().run()
    secret = _shown_secret(team)
    assert tokens.resolve(world, secret).name == "ann"
    (made,) = tokens.listed(world, auth.OPERATOR, "ann")
    assert made.expires_at - made.created_at == timedelta(days=30)  # the form's days, not the default
    team.run()  # shown once
    assert not [c for c in team.code if c.value.startswith(tokens.PREFIX)]
    assert [t.created_by for t in tokens.listed(world, auth.OPERATOR, "ann")] == ["root"]


def test_a_grader_creates_and_revokes_their_own_token_in_the_sidebar(world):
    account_writes.create_account(world, "root", auth.ADMIN, password=PASSWORD)
    ann = account_writes.create_account(world, "ann", auth.GRADER, password=PASSWORD)
    at = _run(ann)
    at.sidebar.text_input(key="token-name-own").input("notebook")
    at.sidebar.button(key="FormSubmitter:new-token-own-Create API token").click().run()
    secret = _shown_secret(at)
    assert tokens.resolve(world, secret).name == "ann"
    at.sidebar.button(key="revoke-own").click().run()
    assert tokens.resolve(world, secret) is None
