"""Comparisons through the HTTP API: a side-by-side card lists every model's response under its side's neutral
name, in the card's drawn order, and one press grades them all, each grade stored with the model that wrote it
(the Grade page's own rule, core.services.grade_actions.grade_card); the refusals name the side to fix. The
fast grading page, which shows one response a card, sends a comparison's graders to the Grade page."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import activegrade
from core import api
from core.api import fast, http, schemas
from core.errors import InputError
from core.inputs.targets import response_column
from core.services import auth, project_actions, sessions, team, tokens
from core.services.grading import grader_view
from core.services.project import create_project, start_preparation
from core.services.side_by_side import card_order, order_of
from core.store import Store
from tests.test_api import PASSWORD, call
from tests.test_compare import long_pool, write_jsonl

MODELS = ("beta", "alpha")


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """A prepared side-by-side comparison of two models on 30 items (no minimum viewing time), an admin and a
    grader assigned to it, a token each, and the API served in-process."""
    folder = tmp_path_factory.mktemp("api_compare")
    store = Store.open(f"sqlite:///{folder / 'c.db'}")
    pool = Path(write_jsonl(folder / "pool.jsonl", long_pool(30, models=MODELS)))
    pid = create_project(store, "Two models", ("pool.jsonl", pool.read_bytes()), None, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    for name, role in {"boss": auth.ADMIN, "ann": auth.GRADER}.items():
        team.create_account(store, auth.OPERATOR, name, role, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    secrets = {name: tokens.create(store, auth.OPERATOR, name, "tests")[1] for name in ("boss", "ann")}
    return store, pid, secrets, TestClient(Starlette(routes=api.routes(lambda: store)))


def _card(client, secret, pid) -> dict:
    answer = call(client, secret, "GET", f"/projects/{pid}/next")
    assert answer.status_code == 200, answer.text
    jsonschema.Draft202012Validator(schemas.NEXT).validate(answer.json())
    return answer.json()["item"]


def _grade(client, secret, pid, item, **answer):
    return call(
        client,
        secret,
        "POST",
        f"/projects/{pid}/grades",
        json={**answer, "item_id": item["item_id"], "token": item["token"]},
    )


def test_the_card_shows_every_response_by_side_in_its_drawn_order_and_never_a_models_name(compared):
    store, pid, secrets, client = compared
    item = _card(client, secrets["ann"], pid)
    settings = store.project(pid).settings
    order = order_of(settings, item["position"])
    stored = store.item(pid, item["position"])
    assert [r["side"] for r in item["responses"]] == ["Response 1", "Response 2"]
    assert [r["response"] for r in item["responses"]] == [str(stored[response_column(t)]) for t in order]
    assert "response" not in item
    assert "signals" not in grader_view(stored, settings.with_changes({"show_signals": True}))  # one model's, unnamed
    assert not any(model in repr(item) for model in MODELS)  # blind: the card never names a model


def test_one_press_grades_every_response_each_with_the_model_that_wrote_it(compared):
    store, pid, secrets, client = compared
    item = _card(client, secrets["ann"], pid)
    settings = store.project(pid).settings
    order = order_of(settings, item["position"])
    saved = _grade(client, secrets["ann"], pid, item, labels={"Response 1": "Correct", "Response 2": "Incorrect"})
    assert saved.status_code == 200 and saved.json()["status"] == "saved", saved.text
    grades = store.target_grades(pid)
    mine = grades[(grades["position"] == item["position"]) & (grades["grader"] == "ann")]
    assert dict(zip(mine["target"], mine["value"])) == {order[0]: 1.0, order[1]: 0.0}
    again = _grade(client, secrets["ann"], pid, item, labels={"Response 1": "Correct", "Response 2": "Incorrect"})
    assert again.status_code == 200 and "sent again" in again.json()["message"]  # its answer, stored once
    other = _grade(client, secrets["ann"], pid, item, labels={"Response 1": "Correct", "Response 2": "Correct"})
    assert other.status_code == 409 and other.json()["error"]["field"] == "token"  # the token is spent
    assert "as Response 1 Correct, Response 2 Incorrect" in other.json()["message"]
    assert len(store.target_grades(pid).query("grader == 'ann'")) == 2
    undone = call(client, secrets["ann"], "POST", f"/projects/{pid}/undo", json={})
    assert undone.json()["status"] == "undone" and undone.json()["position"] == item["position"]
    grades = store.target_grades(pid)
    assert grades[(grades["position"] == item["position"]) & (grades["grader"] == "ann")].empty  # the whole card


@pytest.mark.parametrize(
    ("answer", "status", "field", "words"),
    [
        ({"labels": {"Response 1": "Correct"}}, 409, "labels.Response 2", "Response 2 has no grade"),
        (
            {"labels": {"Response 1": "Correct", "Response 2": "Correct", "Response 3": "Correct"}},
            409,
            "labels.Response 3",
            "'Response 3' is not a response on this card",
        ),
        ({"labels": {"Response 1": "Correct", "Response 2": "7"}}, 409, "labels.Response 2", "'7' is not a grade"),
        ({"labels": {"alpha": "Correct", "beta": "Correct"}}, 409, "labels.alpha", "use Response 1, Response 2"),
        ({"label": "Correct"}, 422, "label", "one label per response on the card (Response 1, Response 2)"),
        ({"labels": {"Response 1": "Correct", "Response 2": "Correct"}, "target": "alpha"}, 422, "target", "by side"),
    ],
)
def test_a_card_answered_wrongly_is_refused_naming_the_side_and_nothing_is_stored(
    compared, answer, status, field, words
):
    store, pid, secrets, client = compared
    before = len(store.target_grades(pid))
    item = _card(client, secrets["boss"], pid)
    refused = _grade(client, secrets["boss"], pid, item, **answer)
    assert refused.status_code == status, refused.text
    error = refused.json()["error"]
    assert error["field"] == field and words in error["message"]
    assert len(store.target_grades(pid)) == before
    skipped = call(
        client,
        secrets["boss"],
        "POST",
        f"/projects/{pid}/skip",
        json={"item_id": item["item_id"], "token": item["token"]},
    )
    assert skipped.json()["status"] == "skipped"  # the token was given back: the card is still the grader's to skip


@pytest.mark.filterwarnings("ignore:You should not use the 'timeout' argument with the TestClient")
def test_the_python_client_grades_a_side_by_side_card(compared):
    store, pid, secrets, client = compared
    session = TestClient(client.app)
    project = activegrade.Client(str(session.base_url), secrets["ann"], session=session).project(pid)
    card = project.next_item()
    assert [side.side for side in card.responses] == ["Response 1", "Response 2"] and card.response == ""
    with pytest.raises(ValueError, match="1 labels for a card of 2 responses"):
        project.grade_responses(card, ["Incorrect"])
    outcome = project.grade_responses(card, ["Incorrect", "Correct"])  # in the card's side order
    assert outcome.status == "saved" and outcome.item_id == card.item_id
    settings = store.project(pid).settings
    order = order_of(settings, card.position)
    grades = store.target_grades(pid)
    mine = grades[(grades["position"] == card.position) & (grades["grader"] == "ann")]
    assert dict(zip(mine["target"], mine["value"])) == {order[0]: 0.0, order[1]: 1.0}
    with pytest.raises(activegrade.ApiError) as refused:
        project.grade(project.next_item(), "Correct")
    assert refused.value.status == 422 and refused.value.field == "label"


def test_the_fast_page_sends_a_comparisons_graders_to_the_grade_page(compared):
    store, pid, _, _ = compared
    app = Starlette(routes=fast.routes(lambda: store))
    session = sessions.start(store, auth.sign_in(store, "ann", PASSWORD))
    signed_in = TestClient(app, cookies={http.SESSION_COOKIE: session})
    page = signed_in.get(f"/grade-fast?project={pid}")
    assert page.status_code == 409 and "side-by-side card" in page.text
    team.create_account(store, auth.OPERATOR, "eve", auth.GRADER, password=PASSWORD)  # assigned to nothing
    outsider = TestClient(
        app, cookies={http.SESSION_COOKIE: sessions.start(store, auth.sign_in(store, "eve", PASSWORD))}
    )
    assert outsider.get(f"/grade-fast?project={pid}").status_code == 200  # as for a project that does not exist


def test_a_grader_cannot_work_out_which_model_is_on_which_side(compared):
    """An API review read the seed in the project's settings with a grader's token and named the model on 39 of
    39 cards from card_order(seed, position). The order now draws on a secret card key as well, and graders see
    neither the key nor the seed."""
    store, pid, secrets, client = compared
    settings = call(client, secrets["ann"], "GET", f"/projects/{pid}").json()["settings"]
    assert not {"card_key", "seed", "targets"} & set(settings)  # nor the models' names, which graders never see
    managers = call(client, secrets["boss"], "GET", f"/projects/{pid}").json()["settings"]
    assert {"card_key", "seed"} <= set(managers) and managers["targets"] == sorted(MODELS)
    stored = store.project(pid).settings
    guessed = [card_order(stored.seed, p, stored.targets) for p in range(30)]  # the seed and the code alone
    assert guessed != [order_of(stored, p) for p in range(30)]
    report = call(client, secrets["boss"], "GET", f"/projects/{pid}/report").json()
    assert "card_key" not in report["settings"]  # a report travels: a grader who read one could tell the sides
    with pytest.raises(InputError, match="card key is drawn when the project is created"):
        project_actions.change_settings(store, auth.OPERATOR, pid, {"card_key": "ab" * 16})
    with pytest.raises(InputError, match="read from its pool's model column when it is created") as refused:
        project_actions.change_settings(store, auth.OPERATOR, pid, {"targets": ["a", "b"]})
    assert refused.value.field == "settings.targets" and store.project(pid).settings.targets == sorted(MODELS)


def test_the_grades_export_with_texts_gives_each_grade_its_own_models_response(compared):
    """texts=1 said it added prompts and responses, and a comparison's export carried no response (its items
    have one per model)."""
    store, pid, secrets, client = compared
    if store.target_grades(pid).empty:
        item = _card(client, secrets["ann"], pid)
        _grade(client, secrets["ann"], pid, item, labels={"Response 1": "Correct", "Response 2": "Correct"})
    exported = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "jsonl", "texts": "1"})
    rows = [json.loads(line) for line in exported.text.splitlines()]
    items = store.load_items(pid).set_index("id")
    assert rows and all(r["response"] == items.at[r["item"], response_column(r["target"])] for r in rows)


def test_the_items_page_gives_each_models_response_and_grade_and_no_mixed_one(compared):
    """It gave one model's answer and label as the item's, and the mean of the models' grades as its grade."""
    store, pid, secrets, client = compared
    item = _card(client, secrets["boss"], pid)
    _grade(client, secrets["boss"], pid, item, labels={"Response 1": "Correct", "Response 2": "Incorrect"})
    order = order_of(store.project(pid).settings, item["position"])
    page = call(client, secrets["boss"], "GET", f"/projects/{pid}/items", params={"limit": 1000}).json()["items"]
    row = next(r for r in page if r["position"] == item["position"])
    assert not {"grade", "response", "answer", "label"} & set(row)
    stored = store.item(pid, item["position"])
    assert row["responses"] == {t: stored[response_column(t)] for t in MODELS}
    assert row["grades"] == {order[0]: 1.0, order[1]: 0.0}
    assert all(set(r["grades"]) == set(MODELS) for r in page)


def test_a_budget_fixed_in_advance_closes_a_comparisons_queue(tmp_path):
    """A bot that grades until next is empty graded a comparison's whole pool (an integrator's review): a budget
    fixed in advance is the comparison's stopping rule, valid for its fixed-n intervals, and next then says so."""
    store = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(30, models=MODELS)))
    settings = {"min_view_s": 0, "planned_budget": 4, "budget_fixed": True}
    pid = create_project(store, "Budgeted", ("pool.jsonl", pool.read_bytes()), None, settings, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "ann", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    secret = tokens.create(store, auth.OPERATOR, "ann", "tests")[1]
    session = TestClient(Starlette(routes=api.routes(lambda: store)))
    project = activegrade.Client(str(session.base_url), secret, session=session).project(pid)
    graded = 0
    while (card := project.next_item()) is not None and graded < 30:
        assert project.grade_responses(card, ["Correct", "Incorrect"]).status == "saved"
        graded += 1
    assert graded == 4 and store.target_grades(pid)["position"].nunique() == 4
    closed = call(session, secret, "GET", f"/projects/{pid}/next").json()
    assert closed["item"] is None and closed["reason"].startswith("The budget fixed in advance is graded: 4 items")


def test_a_comparisons_review_names_sides_and_settles_by_side(compared):
    """The review route reads a comparison as its reviewer does: by side, never the models' names."""
    store, pid, secrets, client = compared
    team.create_account(store, auth.OPERATOR, "rex", auth.REVIEWER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "rex")
    rex = tokens.create(store, auth.OPERATOR, "rex", "tests")[1]
    item = _card(client, secrets["ann"], pid)
    sides = [r["side"] for r in item["responses"]]
    call(
        client,
        secrets["ann"],
        "POST",
        f"/projects/{pid}/flag",
        json={"item_id": item["item_id"], "token": item["token"]},
    )
    assert _grade(client, secrets["ann"], pid, item, labels=dict.fromkeys(sides, "Correct")).status_code == 200
    [waiting] = [
        i
        for i in call(client, rex, "GET", f"/projects/{pid}/review").json()["items"]
        if i["item_id"] == item["item_id"]
    ]
    assert sorted(g["part"] for g in waiting["grades"]) == sorted(sides) and not set(MODELS) & {
        g["part"] for g in waiting["grades"]
    }
    settle = {"item_id": item["item_id"], "labels": {sides[0]: "Incorrect"}}
    assert call(client, rex, "POST", f"/projects/{pid}/review", json=settle).json()["status"] == "reviewed"
    first = order_of(store.project(pid).settings, item["position"])[0]  # the model shown on side 1
    from core.store import reviews

    finals = reviews.reviews(store, pid, [item["position"]])
    assert finals.loc[finals["position"] == item["position"], ["target", "label"]].values.tolist() == [
        [first, "Incorrect"]
    ]
    wrong = call(
        client,
        rex,
        "POST",
        f"/projects/{pid}/review",
        json={"item_id": item["item_id"], "labels": {MODELS[0]: "Correct"}},
    )
    assert wrong.status_code == 409 and wrong.json()["error"]["field"] == f"labels.{MODELS[0]}"  # as a grade's card
