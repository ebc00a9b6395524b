"""What one grading press costs the database: the statements and connections of ``POST grades?then=next`` (the
grade and the next card in one round trip, the fast grading page's and the API's press), counted with
SQLAlchemy's events on a prepared project through the API's own handlers. Issue 28's goal is server CPU per
grade, and every statement costs about 0.05-0.1 ms of it: these counts fail when a change adds one."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from sqlalchemy import event
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core import api
from core.services import auth, team, tokens
from core.services.project import create_project, start_preparation
from core.store import Store
from tests.test_api import PASSWORD, upload

PRESS_STATEMENTS = 24
"""Statements of one ``then=next`` press with nothing unusual (a first grade, the next item free): the token's
row, its account and its address's failures; the assignment and the project, read once; the showing; the
item count, the earlier grade and the hold; the grade and its reservation's release (one transaction); the
token spent; the reservations, the grades and skips added since, and their counts; the reservation of the
next item (three statements, one transaction); the item; the grader's latest showing and the new one (a purge
and an insert)."""
PRESS_CONNECTIONS = 5
"""Connections taken from the pool per press: one for every read (Store.shared_reads) and one per write
transaction (the grade, the token spent, the next item's reservation, its showing)."""


@pytest.fixture(scope="module")
def grading(tmp_path_factory):
    """A prepared 40-item project (no minimum viewing time), a grader assigned to it, their token, a client."""
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('press') / 'press.db'}")
    pid = create_project(
        store, "Arithmetic", upload("pool.jsonl"), upload("samples.jsonl"), {"min_view_s": 0}, start=False
    )
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "ann", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    secret = tokens.create(store, auth.OPERATOR, "ann", "tests")[1]
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    client.headers["Authorization"] = f"Bearer {secret}"
    return store, pid, client


def _table(statement: str) -> str:
    """The statement's kind and first table: 'SELECT users', 'INSERT grades', ..."""
    verb = statement.split(None, 1)[0].upper()
    found = re.search(r"\b(?:FROM|INTO|UPDATE)\s+(\w+)", statement, re.IGNORECASE)
    return f"{verb} {found.group(1) if found else '?'}"


def _press(client: TestClient, pid: int, card: dict) -> dict:
    body = {"item_id": card["item_id"], "token": card["token"], "label": card["labels"][0]["label"]}
    answer = client.post(f"{api.PREFIX}/projects/{pid}/grades?then=next", json=body)
    assert answer.status_code == 200 and answer.json()["status"] == "saved", answer.text
    return answer.json()["next"]["item"]


def test_a_press_reads_the_account_assignment_and_project_once_and_runs_its_statements(grading):
    store, pid, client = grading
    card = client.get(f"{api.PREFIX}/projects/{pid}/next").json()["item"]
    card = _press(client, pid, card)  # the queue's copy of the grades and the stopping rule's replay are warm
    statements: Counter[str] = Counter()
    checkouts = []

    def executed(conn, cursor, statement, parameters, context, executemany) -> None:
        statements[_table(statement)] += 1

    def checked_out(dbapi_connection, record, proxy) -> None:
        checkouts.append(record)

    event.listen(store.engine, "before_cursor_execute", executed)
    event.listen(store.engine, "checkout", checked_out)
    try:
        _press(client, pid, card)
    finally:
        event.remove(store.engine, "before_cursor_execute", executed)
        event.remove(store.engine, "checkout", checked_out)
    assert statements["SELECT users"] == 1  # the token's account, not read again by the press or the claim
    assert statements["SELECT memberships"] == 1
    assert statements["SELECT projects"] == 1
    assert sum(statements.values()) <= PRESS_STATEMENTS, statements
    assert len(checkouts) <= PRESS_CONNECTIONS
