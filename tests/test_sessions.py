"""core.services.sessions: sign-in sessions stored hashed, their limits, and every way they end."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import select

from core import config
from core.services import account_writes, auth, sessions
from core.store import Store, accounts
from core.store.models import utcnow
from core.store.sessions import SignInSession
from tests.pg_schema import throwaway_schema_url

PASSWORD = "correct horse battery"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield Store.open(f"sqlite:///{tmp_path / 'sessions.db'}")
        return
    with throwaway_schema_url() as url:
        store = Store.open(url)
        yield store
        store.engine.dispose()


@pytest.fixture
def ann(store) -> auth.User:
    return account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)


def test_a_session_resumes_with_the_current_role_and_stores_only_a_hash(store, ann):
    token = sessions.start(store, ann)
    assert sessions.resume(store, token) == ann
    with store.session() as s:
        stored = s.scalars(select(SignInSession.token_hash)).all()
    assert stored == [hashlib.sha256(token.encode()).hexdigest()] and token not in stored[0]
    assert sessions.resume(store, token + "x") is None and sessions.resume(store, None) is None
    assert sessions.start(store, ann) != token  # random, one per sign-in


def test_sign_out_ends_only_that_session(store, ann):
    first, second = sessions.start(store, ann), sessions.start(store, ann)
    sessions.end(store, first)
    assert sessions.resume(store, first) is None and sessions.resume(store, second) == ann


@pytest.mark.parametrize(
    "change",
    [
        lambda store: account_writes.set_password(store, "ann", "another long password"),
        lambda store: accounts.set_active(store, "ann", False),
        lambda store: account_writes.set_role(store, "ann", auth.VIEWER),
    ],
    ids=["password change", "disabling", "role change"],
)
def test_account_changes_end_every_session_of_the_account(store, ann, change):
    other = account_writes.create_account(store, "bob", auth.GRADER, password=PASSWORD)
    tokens, kept = [sessions.start(store, ann), sessions.start(store, ann)], sessions.start(store, other)
    change(store)
    assert all(sessions.resume(store, t) is None for t in tokens)
    assert accounts.user_by_name(store, "ann") is not None and sessions.resume(store, kept) == other


def test_saving_an_unchanged_role_keeps_the_session(store, ann):
    token = sessions.start(store, ann)
    account_writes.set_role(store, "ann", auth.GRADER)
    accounts.set_active(store, "ann", True)
    assert sessions.resume(store, token) == ann


def test_idle_and_absolute_limits(store, ann):
    limit = sessions.Limits(idle=timedelta(hours=12), absolute=timedelta(days=7))
    token = sessions.start(store, ann)
    now = utcnow()
    assert sessions.resume(store, token, now=now + timedelta(hours=11), limit=limit) == ann  # and it counts as use
    assert sessions.resume(store, token, now=now + timedelta(hours=22), limit=limit) == ann  # 11 h after that use
    assert sessions.resume(store, token, now=now + timedelta(hours=35), limit=limit) is None  # 13 h idle
    assert sessions.resume(store, token, now=now, limit=limit) is None  # and the row is gone
    token = sessions.start(store, ann)
    day = now
    for _ in range(6):  # used every day, never idle, yet ended after 7 days in all
        day += timedelta(days=1)
        with store.session() as s, s.begin():  # the last use, as a grader active all day would leave it
            s.execute(SignInSession.__table__.update().values(last_seen_at=day - timedelta(hours=1)))
        assert sessions.resume(store, token, now=day, limit=limit) == ann
    assert sessions.resume(store, token, now=now + timedelta(days=7, minutes=1), limit=limit) is None


def test_limits_come_from_the_configuration(monkeypatch):
    monkeypatch.delenv(config.SESSION_IDLE_HOURS, raising=False)
    monkeypatch.delenv(config.SESSION_MAX_DAYS, raising=False)
    assert sessions.limits() == sessions.Limits()
    monkeypatch.setenv(config.SESSION_IDLE_HOURS, "0.5")
    monkeypatch.setenv(config.SESSION_MAX_DAYS, "1")
    assert sessions.limits() == sessions.Limits(timedelta(minutes=30), timedelta(days=1))
