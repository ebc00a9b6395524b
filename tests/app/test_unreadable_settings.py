"""A project whose stored settings fail their checks (written by another version, or by hand) is listed as
unreadable with the setting at fault; it breaks neither the project list nor any other project's pages."""

from __future__ import annotations

import jsonschema
import pytest
from sqlalchemy import update
from starlette.applications import Starlette
from starlette.testclient import TestClient

import activegrade
from core import api
from core.api import schemas
from core.errors import InputError
from core.services import auth, team, tokens
from core.services.project import create_project
from core.store import UNREADABLE, Store
from core.store.models import Project
from tests.app.conftest import upload


def spoil(store: Store, project_id: int, **stored) -> None:
    """Write settings into the project's row as another version might have, past every check."""
    with store.session() as s, s.begin():
        settings = s.get(Project, project_id).settings
        s.execute(update(Project).where(Project.id == project_id).values(settings={**settings, **stored}))


@pytest.fixture
def spoiled(store, project_id) -> int:
    other = create_project(store, "Spoiled", upload("pool.jsonl"), upload("samples.jsonl"), start=False)
    spoil(store, other, show_reference="yes")
    return other


def test_the_project_is_listed_unreadable_with_the_setting_at_fault(store, project_id, spoiled):
    listed = {p.id: p for p in store.projects()}
    assert listed[project_id].status == "ready"
    assert listed[spoiled].status == UNREADABLE
    assert "show_reference" in listed[spoiled].error and "delete the project" in listed[spoiled].error
    with pytest.raises(InputError, match="show_reference"):  # nothing reads it with settings it was not given
        _ = listed[spoiled].settings


def test_the_pages_show_it_and_the_other_project_still_opens(open_app, project_id, spoiled):
    at = open_app(project_id=spoiled)
    assert not at.exception
    assert any("show_reference" in e.value.replace("\\", "") for e in at.error)  # markdown's escapes aside
    for page in ("app_pages/grade.py", "app_pages/dashboard.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    at = open_app(project_id=project_id)
    assert not at.exception and at.header[0].value == "Arithmetic"


def test_the_api_lists_it_with_the_reason(store, project_id, spoiled, monkeypatch):
    monkeypatch.delenv("ACTIVEGRADE_OPEN_DEMO")  # signed in with a token
    team.create_account(store, auth.OPERATOR, "boss", auth.ADMIN, password="correct horse battery")
    secret = tokens.create(store, auth.OPERATOR, "boss", "tests")[1]
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    headers = {"Authorization": f"Bearer {secret}"}
    listed = client.get(api.PREFIX + "/projects", headers=headers)
    assert listed.status_code == 200
    states = {p["id"]: p for p in listed.json()["projects"]}
    assert states[project_id]["status"] == "ready"
    assert states[spoiled]["status"] == UNREADABLE and "show_reference" in states[spoiled]["error"]
    alone = client.get(api.PREFIX + f"/projects/{spoiled}", headers=headers)
    assert alone.status_code == 200 and alone.json()["status"] == UNREADABLE and alone.json()["settings"] == {}
    refused = client.get(api.PREFIX + f"/projects/{spoiled}/next", headers=headers)
    assert refused.status_code == 409 and "will not become ready by itself" in refused.json()["error"]["message"]
    assert "wait until" not in refused.json()["error"]["message"]  # it said so (an integrator's review)
    # the OpenAPI document names the status (its enum lacked it), and the client's wait says why at once (it
    # polled until its 10-minute timeout: an integrator's review)
    jsonschema.Draft202012Validator(schemas.PROJECT_STATE).validate(states[spoiled])
    waiting = activegrade.Client("http://testserver", secret, session=client).project(spoiled)
    with pytest.raises(activegrade.ApiError, match="its stored settings cannot be read: .*show_reference"):
        waiting.wait_ready(timeout=60)
