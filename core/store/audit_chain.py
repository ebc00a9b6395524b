"""The audit trail as a hash chain: each sealed event holds SHA-256 over the previous event's chain hash and its
own fields, so an earlier event changed, removed or slipped in afterwards breaks every later link.

Events are sealed after they are written (``seal``), not in the transaction that writes them: a grade, a
sign-in or a settings change never waits for a lock on the whole trail, and replicas writing at once cannot
fork the chain. ``seal`` takes the unsealed events older than SEAL_AFTER in id order (a transaction still
open then would be one that holds its event for longer than any write here does), so an event committed
late with a lower id is never skipped. ``verify`` recomputes the chain and names the first event whose
link does not hold. `activegrade status --audit` does both.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from core.store.models import AuditEvent
from core.store.store import Store

SEAL_AFTER = timedelta(minutes=1)
"""Events younger than this stay unsealed (their transaction's neighbours may not be committed yet)."""
GENESIS = "0" * 64
"""The chain hash before the first event."""


def _utc(at: datetime) -> datetime:
    """The event's time in UTC, the same whether the database returns it aware (PostgreSQL) or naive UTC (SQLite)."""
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def link(previous: str, event: AuditEvent) -> str:
    """SHA-256 (hex) of ``previous`` and the event's id, time, actor, action, project and detail, as canonical JSON."""
    fields = [previous, event.id, _utc(event.at).isoformat(), event.actor, event.action, event.project_id, event.detail]
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(store: Store, now: datetime | None = None) -> int:
    """Give every unsealed event older than SEAL_AFTER its chain hash, in id order, up to the first younger
    one; returns how many were sealed. Two sealers at once write the same hashes."""
    cutoff = (now or datetime.now(UTC)) - SEAL_AFTER
    with store.session() as s, s.begin():
        last = s.execute(
            select(AuditEvent.id, AuditEvent.chain_hash)
            .where(AuditEvent.chain_hash.is_not(None))
            .order_by(AuditEvent.id.desc())
            .limit(1)
        ).first()
        previous = last.chain_hash if last else GENESIS
        pending = s.scalars(
            select(AuditEvent).where(AuditEvent.id > (last.id if last else 0)).order_by(AuditEvent.id)
        ).all()
        sealed = 0
        for event in pending:
            if _utc(event.at) > _utc(cutoff):
                break
            previous = link(previous, event)
            s.execute(update(AuditEvent).where(AuditEvent.id == event.id).values(chain_hash=previous))
            sealed += 1
    return sealed


def verify(store: Store) -> int | None:
    """The id of the first sealed event whose chain hash does not follow from the events before it (one changed,
    removed or inserted); None when the sealed chain holds."""
    previous = GENESIS
    with store.session() as s:
        for event in s.scalars(select(AuditEvent).where(AuditEvent.chain_hash.is_not(None)).order_by(AuditEvent.id)):
            if event.chain_hash != link(previous, event):
                return event.id
            previous = event.chain_hash
    return None
