"""Rubrics through the HTTP API: a rubric project created with its criteria, its cards listing them, one press
grading every criterion of the item shown (one grade each, on one single-use token), and the refusals that name
what to send instead. tests/test_api.py covers the one-question project's API."""

from __future__ import annotations

import io
import json

import jsonschema
import pandas as pd
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import activegrade
from core import api
from core.api import schemas
from core.services import auth, team, tokens
from core.store import Store
from core.testing.waiting import until
from tests.test_api import PASSWORD, call, upload

CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the answer right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]
ANSWERS = {"correct": "Incorrect", "helpful": "4"}


def create(client, secret, settings: dict):
    """POST projects with the test pool and ``settings`` (with a name)."""
    files = {"pool": upload("pool.jsonl"), "samples": upload("samples.jsonl")}
    return call(client, secret, "POST", "/projects", files=files, data={"settings": json.dumps(settings)})


@pytest.fixture(scope="module")
def rubric_world(tmp_path_factory):
    """A rubric project created through the API (primary criterion ``helpful``), prepared; its admin and a
    grader assigned to it, a token each."""
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('api_rubric') / 'api.db'}")
    for name, role in {"boss": auth.ADMIN, "ann": auth.GRADER}.items():
        team.create_account(store, auth.OPERATOR, name, role, password=PASSWORD)
    secrets = {name: tokens.create(store, auth.OPERATOR, name, "tests")[1] for name in ("boss", "ann")}
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    settings = {"name": "Rubric", "min_view_s": 0, "criteria": CRITERIA, "primary_criterion": "helpful"}
    made = create(client, secrets["boss"], settings)
    assert made.status_code == 201, made.text
    pid = made.json()["id"]
    until(lambda: store.project(pid).status in ("ready", "failed"), timeout=120, what="the rubric project prepared")
    assert store.project(pid).status == "ready"
    team.assign(store, auth.OPERATOR, pid, "ann")
    return store, pid, secrets, client


def test_the_project_keeps_its_rubric_and_a_bad_one_is_a_422_naming_it(rubric_world):
    store, pid, secrets, client = rubric_world
    detail = call(client, secrets["boss"], "GET", f"/projects/{pid}").json()
    jsonschema.Draft202012Validator(schemas.PROJECT).validate(detail)
    jsonschema.Draft202012Validator.check_schema(schemas.CREATE_REQUEST)
    settings = detail["settings"]
    assert [c["name"] for c in settings["criteria"]] == ["correct", "helpful", "tone"]
    assert settings["primary_criterion"] == "helpful" and settings["allocate_for"] == "primary"
    before = len(store.projects())
    for criteria, words in [
        ([{"name": "correct"}, {"name": "correct"}], "row 2: criterion 'correct' appears twice"),
        ([{"name": "a", "scale": {"kind": "custom"}}], "the scale of 'a' is malformed"),
    ]:
        bad = create(client, secrets["boss"], {"name": "Bad rubric", "criteria": criteria})
        assert bad.status_code == 422 and words in bad.json()["error"]["message"], bad.text
    optional = create(client, secrets["boss"], {"name": "Bad", "criteria": CRITERIA, "primary_criterion": "tone"})
    assert optional.status_code == 422 and "make the primary criterion required" in optional.json()["error"]["message"]
    assert len(store.projects()) == before  # nothing created


def test_the_card_lists_the_criteria_and_the_items_page_their_grades(rubric_world):
    _, pid, secrets, client = rubric_world
    answer = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()
    item = answer["item"]
    criteria = item["criteria"]
    assert [(c["name"], c["primary"], c["required"]) for c in criteria] == [
        ("correct", False, True),
        ("helpful", True, True),
        ("tone", False, False),
    ]
    assert criteria[0]["guidelines"] == "Is the answer right?"
    assert criteria[0]["labels"] == [{"label": "Correct", "value": 1.0}, {"label": "Incorrect", "value": 0.0}]
    assert [label["label"] for label in criteria[1]["labels"]] == ["1", "2", "3", "4", "5"]
    assert item["labels"] == criteria[1]["labels"]  # the top-level labels: the primary criterion's
    jsonschema.Draft202012Validator(schemas.NEXT).validate(answer)  # as documented
    grade = {"item_id": item["item_id"], "token": item["token"], "labels": ANSWERS}
    jsonschema.Draft202012Validator(schemas.GRADE_REQUEST).validate(grade)
    with pytest.raises(jsonschema.ValidationError):  # 'label' or 'labels', one of them
        jsonschema.Draft202012Validator(schemas.GRADE_REQUEST).validate({**grade, "label": "4"})


def test_one_press_stores_a_grade_per_criterion_on_one_single_use_token(rubric_world):
    store, pid, secrets, client = rubric_world
    ann = secrets["ann"]
    item = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": item["item_id"], "token": item["token"], "labels": ANSWERS, "comment": "terse"}
    saved = call(client, ann, "POST", f"/projects/{pid}/grades", json=body)
    assert saved.status_code == 200, saved.text
    assert saved.json()["status"] == "saved" and saved.json()["item_id"] == item["item_id"]
    grades = store.rubric_grades(pid)
    mine = grades[grades["position"] == item["position"]]
    assert mine[["criterion", "label", "value", "grader", "comment"]].values.tolist() == [
        ["correct", "Incorrect", 0.0, "ann", "terse"],
        ["helpful", "4", 0.75, "ann", "terse"],
    ]
    again = call(client, ann, "POST", f"/projects/{pid}/grades", json={**body, "labels": {**ANSWERS, "tone": "5"}})
    assert again.status_code == 409 and again.json()["error"]["field"] == "token"  # spent by the whole card
    assert len(store.rubric_grades(pid)) == len(grades)
    page = call(client, secrets["boss"], "GET", f"/projects/{pid}/items", params={"limit": 40}).json()["items"]
    row = page[item["position"]]
    assert row["grade"] == 0.75 and row["criteria"] == {"correct": 0.0, "helpful": 0.75, "tone": None}


@pytest.mark.parametrize(
    ("labels", "words", "field"),
    [
        ({"correct": "Correct"}, "criterion 'helpful' has no grade", "labels.helpful"),
        ({"correct": "Correct", "helpful": "6"}, "'6' is not a grade of criterion 'helpful'", "labels.helpful"),
        ({**ANSWERS, "style": "1"}, "'style' is not a criterion of this project", "labels.style"),
    ],
)
def test_a_card_missing_a_criterion_or_with_a_bad_label_stores_nothing(rubric_world, labels, words, field):
    store, pid, secrets, client = rubric_world
    item = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]
    before = len(store.rubric_grades(pid))
    body = {"item_id": item["item_id"], "token": item["token"], "labels": labels}
    refused = call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=body)
    assert refused.status_code == 409 and refused.json()["status"] == "refused"
    assert words in refused.json()["message"], refused.text
    assert refused.json()["error"]["field"] == field  # the field to mend, as a 422 names it
    assert len(store.rubric_grades(pid)) == before
    # the token still names the item: the corrected card is taken
    unanswered = {**ANSWERS, "tone": None}  # null for an optional criterion is no answer, as ""
    fixed = call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json={**body, "labels": unanswered})
    assert fixed.json()["status"] == "saved", fixed.text


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ({"label": "4"}, "label", "send 'labels', one label per criterion (correct, helpful, tone)"),
        ({"labels": ANSWERS, "criterion": "helpful"}, "criterion", "in place of 'criterion'"),
        ({}, "labels", "the field 'labels' is missing"),
        ({"labels": ["4"]}, "labels", "'labels' is an array, not an object"),
        ({"labels": {"correct": 1}}, "labels.correct", "the label of 'correct' must be a string, not a number"),
    ],
)
def test_a_rubric_grade_must_send_labels(rubric_world, extra, field, words):
    store, pid, secrets, client = rubric_world
    item = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]
    before = len(store.rubric_grades(pid))
    body = {"item_id": item["item_id"], "token": item["token"], **extra}
    refused = call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=body)
    assert refused.status_code == 422 and refused.json()["error"]["field"] == field
    assert words in refused.json()["error"]["message"], refused.text
    assert len(store.rubric_grades(pid)) == before
    assert call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]["token"] == item["token"]


def test_a_one_question_project_refuses_labels(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'one.db'}")
    team.create_account(store, auth.OPERATOR, "boss", auth.ADMIN, password=PASSWORD)
    secret = tokens.create(store, auth.OPERATOR, "boss", "tests")[1]
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    pid = create(client, secret, {"name": "One question", "min_view_s": 0}).json()["id"]
    until(lambda: store.project(pid).status in ("ready", "failed"), timeout=120, what="the project prepared")
    item = call(client, secret, "GET", f"/projects/{pid}/next").json()["item"]
    assert "criteria" not in item
    body = {"item_id": item["item_id"], "token": item["token"], "labels": {"": "Correct"}}
    refused = call(client, secret, "POST", f"/projects/{pid}/grades", json=body)
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "labels"
    assert "send its grade as 'label'" in refused.json()["error"]["message"]
    assert store.grades(pid).empty


@pytest.mark.filterwarnings("ignore:You should not use the 'timeout' argument with the TestClient")
def test_the_python_client_grades_a_rubric_card(rubric_world):
    store, pid, secrets, client = rubric_world
    session = TestClient(client.app)  # the client's calls, served in-process (requests' interface)
    project = activegrade.Client(str(session.base_url), secrets["ann"], session=session).project(pid)
    card = project.next_item()
    assert [(c.name, c.primary, c.required) for c in card.criteria] == [
        ("correct", False, True),
        ("helpful", True, True),
        ("tone", False, False),
    ]
    assert card.criteria[1].labels == ("1", "2", "3", "4", "5")
    outcome = project.grade_rubric(card, {**ANSWERS, "tone": "5"})
    assert outcome.status == "saved" and outcome.item_id == card.item_id
    graded = store.rubric_grades(pid)
    assert graded.loc[graded["position"] == card.position, "criterion"].tolist() == ["correct", "helpful", "tone"]
    with pytest.raises(activegrade.ApiError) as refused:
        project.grade(project.next_item(), "4")
    assert refused.value.status == 422 and refused.value.field == "label"


def test_the_grades_export_names_each_grades_criterion(rubric_world):
    store, pid, secrets, client = rubric_world
    item = call(client, secrets["boss"], "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": item["item_id"], "token": item["token"], "labels": ANSWERS}
    assert call(client, secrets["boss"], "POST", f"/projects/{pid}/grades", json=body).json()["status"] == "saved"
    csv = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "csv"})
    table = pd.read_csv(io.BytesIO(csv.content), dtype=str)
    mine = table[(table["item"] == item["item_id"]) & (table["grader"] == "boss")]
    assert sorted(mine["criterion"]) == ["correct", "helpful"] and len(table) == len(store.rubric_grades(pid))


def test_the_reading_gives_every_criterions_row_and_names_the_one_the_rule_reads(rubric_world):
    store, pid, secrets, client = rubric_world
    item = call(client, secrets["boss"], "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": item["item_id"], "token": item["token"], "labels": ANSWERS}
    assert call(client, secrets["boss"], "POST", f"/projects/{pid}/grades", json=body).status_code == 200
    reading = call(client, secrets["boss"], "GET", f"/projects/{pid}/reading").json()
    jsonschema.Draft202012Validator(schemas.READING).validate(reading)
    rows = {row["criterion"]: row for row in reading["criteria"]}
    assert list(rows) == ["correct", "helpful", "tone"] and [r["primary"] for r in rows.values()] == [
        False,
        True,
        False,
    ]
    assert rows["helpful"]["estimate"] == reading["estimate"]["value"]  # the primary's row is the reading's
    assert rows["helpful"]["graded_items"] == reading["estimate"]["grades"]
    assert rows["correct"]["graded_items"] == len(store.graded_positions(pid, "correct"))
    assert reading["stopping"]["criterion"] == "helpful"
    assert "criterion 'helpful' (the primary)" in reading["stopping"]["criterion_words"]
    session = TestClient(client.app)
    read = activegrade.Client(str(session.base_url), secrets["boss"], session=session).project(pid).reading()
    assert [row["criterion"] for row in read.criteria] == ["correct", "helpful", "tone"]


@pytest.mark.filterwarnings("ignore:You should not use the 'timeout' argument with the TestClient")
def test_the_review_queue_says_which_criteria_are_settled(rubric_world):
    """After one of an item's two disagreeing criteria was settled, the queue still listed both in `disagree`,
    and nothing said which waits (a review)."""
    store, pid, secrets, client = rubric_world
    rubric = store.project(pid).settings.rubric
    for grader, correct, helpful in (("ann", "Correct", "4"), ("boss", "Incorrect", "2")):
        store.add_rubric_grades(pid, 39, rubric.card_values({"correct": correct, "helpful": helpful}), grader=grader)
    team.create_account(store, auth.OPERATOR, "rae", auth.REVIEWER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "rae")
    rae = tokens.create(store, auth.OPERATOR, "rae", "tests")[1]
    item_id = store.item(pid, 39)["id"]
    settle = {"item_id": item_id, "labels": {"correct": "Correct"}}
    assert call(client, rae, "POST", f"/projects/{pid}/review", json=settle).json()["status"] == "reviewed"
    queue = call(client, rae, "GET", f"/projects/{pid}/review").json()
    jsonschema.Draft202012Validator(schemas.REVIEW_QUEUE).validate(queue)
    [waiting] = [i for i in queue["items"] if i["item_id"] == item_id]
    assert sorted(waiting["disagree"]) == ["correct", "helpful"] and waiting["settled"] == ["correct"]
    unknown = call(client, rae, "POST", f"/projects/{pid}/review", json={**settle, "labels": {"kind": "Correct"}})
    assert unknown.status_code == 409 and unknown.json()["error"]["field"] == "labels.kind"  # named, as a card's is
    session = TestClient(client.app)  # a separate session: the client sets its own Authorization on it
    reviewer = activegrade.Client(str(session.base_url), rae, session=session).project(pid)
    assert item_id in [i["item_id"] for i in reviewer.all_review_items(page=1)]  # every page, to the total
