"""core.store.audit_chain: the audit trail's events, once sealed, form a hash chain whose first broken link
verify names, and `activegrade status --audit` reports."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, update

from core.cli import main
from core.store import Store, accounts, audit_chain
from core.store.models import AuditEvent
from tests.pg_schema import throwaway_schema_url

LATER = datetime.now(UTC) + timedelta(hours=1)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path):
    """A fresh database URL: SQLite, and PostgreSQL (the times come back aware there, naive on SQLite)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'a.db'}"
        return
    with throwaway_schema_url() as url:
        yield url


def trail(url: str, events: int = 5) -> Store:
    store = Store.open(url)
    for k in range(events):
        accounts.record_event(store, "ann", "settings_changed", project_id=1, detail={"seed": k, "note": "é"})
    return store


def test_a_sealed_trail_verifies_and_a_changed_event_breaks_its_link(database):
    store = trail(database)
    assert audit_chain.seal(store, LATER) == 5 and audit_chain.seal(store, LATER) == 0
    assert audit_chain.verify(store) is None
    with store.session() as s, s.begin():
        third = s.scalars(AuditEvent.__table__.select().with_only_columns(AuditEvent.id).order_by(AuditEvent.id)).all()[
            2
        ]
        s.execute(update(AuditEvent).where(AuditEvent.id == third).values(detail={"seed": 99, "note": "é"}))
    assert audit_chain.verify(store) == third


def test_a_removed_event_breaks_the_next_link(database):
    store = trail(database)
    audit_chain.seal(store, LATER)
    with store.session() as s, s.begin():
        order = s.scalars(AuditEvent.__table__.select().with_only_columns(AuditEvent.id).order_by(AuditEvent.id)).all()
        s.execute(delete(AuditEvent).where(AuditEvent.id == order[1]))
    assert audit_chain.verify(store) == order[2]


def test_young_events_wait_and_are_chained_on_after_the_sealed_ones(database):
    store = trail(database, events=2)
    assert audit_chain.seal(store) == 0  # younger than SEAL_AFTER
    assert audit_chain.seal(store, LATER) == 2
    accounts.record_event(store, "bob", "exported", project_id=1, detail={"what": "grades"})
    assert audit_chain.seal(store, LATER) == 1 and audit_chain.verify(store) is None


def test_status_audit_reports_the_chain(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = trail(url)
    audit_chain.seal(store, LATER)
    assert main(["status", "--db-url", url, "--audit", "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{") :])["audit"] == {"sealed": 0, "broken_at": None}
    with store.session() as s, s.begin():
        first = s.scalars(
            AuditEvent.__table__.select().with_only_columns(AuditEvent.id).order_by(AuditEvent.id)
        ).first()
        s.execute(update(AuditEvent).where(AuditEvent.id == first).values(actor="mallory"))
    assert main(["status", "--db-url", url, "--audit"]) == 1
    assert f"breaks at event {first}" in capsys.readouterr().out
