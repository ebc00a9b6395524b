"""The HTTP API's handlers (core/api) through Starlette's TestClient: tokens, permissions, grading on the item
reserved, limits and JSON errors. tests/app/test_api_served.py drives the served app through the client."""

from __future__ import annotations

import io
import json
import tomllib
from dataclasses import fields
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest
from sqlalchemy import update
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core import api
from core.api import endpoints, http
from core.errors import InputError
from core.services import auth, project_actions, team, tokens
from core.services.project import create_project, start_preparation
from core.store import Store, accounts, reviews
from core.store.models import ApiToken, utcnow

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "app"
PASSWORD = "correct horse battery"


def upload(name: str) -> tuple[str, bytes]:
    return name, (DATA / name).read_bytes()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A database with a prepared 40-item project (no minimum viewing time), an admin, a grader assigned to
    it, a grader who is not, a viewer; a token each."""
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('api') / 'api.db'}")
    pid = create_project(
        store, "Arithmetic", upload("pool.jsonl"), upload("samples.jsonl"), {"min_view_s": 0}, start=False
    )
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready"
    names = {"boss": auth.ADMIN, "ann": auth.GRADER, "bob": auth.GRADER, "vic": auth.VIEWER}
    for name, role in names.items():
        team.create_account(store, auth.OPERATOR, name, role, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    team.assign(store, auth.OPERATOR, pid, "vic")
    secrets = {name: tokens.create(store, auth.OPERATOR, name, "tests")[1] for name in names}
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    return store, pid, secrets, client


def call(client, secret, method, path, **kwargs):
    return client.request(method, api.PREFIX + path, headers={"Authorization": f"Bearer {secret}"}, **kwargs)


def test_no_wrong_or_revoked_token_gets_in(world):
    store, pid, secrets, client = world
    assert client.get(api.PREFIX + "/me").status_code == 401
    wrong = call(client, "ag_not-a-token", "GET", "/me")
    assert wrong.status_code == 401 and "wrong" in wrong.json()["error"]["message"]
    assert wrong.headers["www-authenticate"] == "Bearer"
    info, secret = tokens.create(store, auth.OPERATOR, "bob", "to revoke")
    assert call(client, secret, "GET", "/me").json() == {"name": "bob", "role": "grader"}
    bob = auth.sign_in(store, "bob", PASSWORD)
    assert tokens.revoke(store, bob, info.id).status == "revoked"  # one's own token
    assert call(client, secret, "GET", "/me").status_code == 401
    used = [t for t in tokens.listed(store, bob, "bob") if t.id == info.id][0]
    assert used.last_used_at is not None and not used.active


def test_a_grader_is_not_shown_the_score_the_manager_expects(world):
    """It would anchor their grades (attacker review: GET /projects/ID gave a grader expected_score 0.83)."""
    _, pid, secrets, client = world
    boss = call(client, secrets["boss"], "GET", f"/projects/{pid}").json()["settings"]
    ann = call(client, secrets["ann"], "GET", f"/projects/{pid}").json()["settings"]
    assert "expected_score" in boss and "expected_score" not in ann
    assert ann["scale"] == boss["scale"]  # what grading needs stays


def test_a_new_password_revokes_the_accounts_tokens(world):
    """A token kept working after an admin reset the password (attacker review): a reset answers a stolen
    password, and a token made with it must end with it, as the sign-in sessions do."""
    store, _, _, client = world
    team.create_account(store, auth.OPERATOR, "carol", auth.GRADER, password=PASSWORD)
    _, secret = tokens.create(store, auth.OPERATOR, "carol", "laptop")
    assert call(client, secret, "GET", "/me").status_code == 200
    team.change_account(store, auth.OPERATOR, "carol", password="brand-new-password-456")
    assert call(client, secret, "GET", "/me").status_code == 401
    _, fresh = tokens.create(store, auth.OPERATOR, "carol", "after the reset")  # a token made since works
    assert call(client, fresh, "GET", "/me").json() == {"name": "carol", "role": "grader"}


def test_a_cookie_is_no_token(world):
    _, _, secrets, client = world
    response = TestClient(client.app, cookies={http.SESSION_COOKIE: secrets["boss"]}).get(api.PREFIX + "/me")
    assert response.status_code == 401


def test_wrong_tokens_are_throttled_like_wrong_passwords(world):
    store, _, secrets, client = world
    accounts.clear_failures(store, tokens.FAILURE_NAME)
    statuses = [call(client, "ag_guess", "GET", "/me").status_code for _ in range(auth.FREE_FAILURES + 2)]
    assert statuses == [401] * auth.FREE_FAILURES + [429, 429]  # FREE_FAILURES free, then the back-off
    throttled = call(client, "ag_guess", "GET", "/me")
    wait = int(throttled.headers["Retry-After"])  # what a client's retry logic reads, beside the words
    assert wait >= 1 and f"try again in {wait} s" in throttled.json()["error"]["message"]
    assert throttled.json()["error"]["field"] == "Authorization"  # the token at fault: no client sends it again
    assert call(client, secrets["boss"], "GET", "/me").status_code == 200  # a right token always passes
    assert call(client, "ag_guess", "GET", "/me").status_code == 429  # but a guesser's own token clears nothing


def test_the_wrong_token_count_starts_again_after_a_quiet_spell(world):
    store, _, _, _ = world
    accounts.clear_failures(store, tokens.FAILURE_NAME)
    for _ in range(auth.FREE_FAILURES):
        tokens.resolve(store, "ag_guess")
    with pytest.raises(auth.SignInThrottled):
        tokens.resolve(store, "ag_guess")
    later = utcnow() + auth.MAX_BACK_OFF + timedelta(seconds=1)
    assert tokens.resolve(store, "ag_guess", now=later) is None  # counted afresh: the first of a new run
    assert accounts.failures(store, tokens.FAILURE_NAME, "")[0] == 1


def test_a_token_sees_only_its_accounts_projects(world):
    store, pid, secrets, client = world
    listed = call(client, secrets["ann"], "GET", "/projects").json()["projects"]
    assert [p["id"] for p in listed] == [pid]
    # each with its settings, as GET project gives them: a list without them read as {} (an integrator's review)
    detail = call(client, secrets["ann"], "GET", f"/projects/{pid}").json()
    assert listed[0]["settings"] == detail["settings"] and "seed" not in listed[0]["settings"]  # a grader's view
    assert call(client, secrets["bob"], "GET", "/projects").json() == {"projects": []}
    hidden = call(client, secrets["bob"], "GET", f"/projects/{pid}")
    assert hidden.status_code == 404 and "no project" in hidden.json()["error"]["message"]
    assert call(client, secrets["bob"], "GET", f"/projects/{pid}/next").status_code == 404
    # a grader is blind to the estimate; a viewer may not grade; nobody but an admin creates projects
    assert call(client, secrets["ann"], "GET", f"/projects/{pid}/reading").status_code == 403
    assert call(client, secrets["vic"], "GET", f"/projects/{pid}/next").status_code == 403
    created = call(
        client,
        secrets["ann"],
        "POST",
        "/projects",
        files={"pool": upload("pool.jsonl")},
        data={"settings": json.dumps({"name": "Mine"})},
    )
    assert created.status_code == 403 and "grader role may not create a project" in created.json()["error"]["message"]
    sent: list[int] = []

    def upload_parts():  # a grader's upload is refused before it is read: its later parts are never asked for
        for part in range(20):
            sent.append(part)
            yield b'--x\r\nContent-Disposition: form-data; name="pool"; filename="p.jsonl"\r\n\r\n' + b"{}" * 50_000

    headers = {"Authorization": f"Bearer {secrets['ann']}", "Content-Type": "multipart/form-data; boundary=x"}
    refused = client.post(api.PREFIX + "/projects", content=upload_parts(), headers=headers)
    assert refused.status_code == 403 and len(sent) < 20
    settings = {"settings": json.dumps({"name": "Broken"})}
    broken = call(client, secrets["boss"], "POST", "/projects", files={"pool": ("p.jsonl", b"{oops\n")}, data=settings)
    assert broken.status_code == 422 and broken.json()["error"]["field"] == "pool"
    twice = [("pool", upload("pool.jsonl")), ("pool", upload("pool.jsonl"))]
    doubled = call(client, secrets["boss"], "POST", "/projects", files=twice, data=settings)
    assert doubled.status_code == 422 and doubled.json()["error"]["field"] == "pool"
    assert "sent twice" in doubled.json()["error"]["message"]
    # curl -F settings=@settings.json sends the settings as a file, curl -F pool=<FILE the pool as text: "unknown
    # part 'settings' ... send 'settings'" and "no file 'pool'" (a new user's review)
    as_file = {"pool": upload("pool.jsonl"), "settings": ("s.json", b'\xef\xbb\xbf{"name": "Settings as a file"}')}
    made = call(client, secrets["boss"], "POST", "/projects", files=as_file)
    assert (
        made.status_code == 201
        and call(client, secrets["boss"], "GET", f"/projects/{made.json()['id']}").json()["name"]
        == "Settings as a file"
    )
    as_text = call(
        client, secrets["boss"], "POST", "/projects", data={"pool": "{}", **settings}, files={"x": ("", b"")}
    )
    assert (
        as_text.status_code == 422 and "came as a text field: send it as a file" in as_text.json()["error"]["message"]
    )
    assert call(client, secrets["boss"], "GET", "/projects/abc").json()["error"]["field"] == "project_id"


def test_grades_land_on_the_item_reserved_and_the_reading_counts_them(world):
    store, pid, secrets, client = world
    ann = secrets["ann"]
    first = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    assert call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]["token"] == first["token"]  # still held
    assert [label["label"] for label in first["labels"]] and first["prompt"]
    body = {"item_id": first["item_id"], "token": first["token"], "label": first["labels"][0]["label"]}
    typo = call(client, ann, "POST", f"/projects/{pid}/grades", params={"then": "nxt"}, json=body)
    assert typo.status_code == 422 and typo.json()["error"]["field"] == "then"  # it was ignored, the grade saved
    assert "ann" not in set(store.grades(pid)["grader"])
    saved = call(client, ann, "POST", f"/projects/{pid}/grades", json=body)
    assert saved.status_code == 200, saved.text
    assert saved.json()["status"] == "saved" and saved.json()["item_id"] == first["item_id"]
    grades = store.grades(pid)
    assert grades.loc[grades["grader"] == "ann", "position"].tolist() == [first["position"]]
    again = call(client, ann, "POST", f"/projects/{pid}/grades", json=body)  # sent again: its answer, stored once
    assert again.status_code == 200 and again.json()["grade_id"] == saved.json()["grade_id"]
    assert "sent again" in again.json()["message"] and (store.grades(pid)["grader"] == "ann").sum() == 1
    other = call(client, ann, "POST", f"/projects/{pid}/grades", json={**body, "label": first["labels"][1]["label"]})
    assert other.status_code == 409 and other.json()["error"]["field"] == "token"  # another grade: the token is spent
    assert f"stored already, as {body['label']}" in other.json()["message"]
    commented = call(client, ann, "POST", f"/projects/{pid}/grades", json={**body, "comment": "hello"})
    assert commented.status_code == 409  # another comment is another press: not "saved" with the comment dropped
    second = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    assert second["position"] != first["position"]
    forged = {**body, "token": second["token"]}  # the second item's token with the first item's id
    mismatched = call(client, ann, "POST", f"/projects/{pid}/grades", json=forged)
    assert mismatched.status_code == 409 and mismatched.json()["error"]["field"] == "item_id"  # it said 'token'
    assert f"given with item {second['item_id']!r}, not {first['item_id']!r}" in mismatched.json()["message"]
    skip = {"item_id": second["item_id"], "token": second["token"]}
    skipped = call(client, ann, "POST", f"/projects/{pid}/skip", json=skip)
    assert skipped.json()["status"] == "skipped" and store.skipped_positions(pid) == {second["position"]}
    typo = call(client, ann, "POST", f"/projects/{pid}/grades", json={**body, "coment": "x"})
    assert typo.status_code == 422 and typo.json()["error"]["field"] == "coment"  # not dropped without a word
    assert "did you mean 'comment'?" in typo.json()["error"]["message"]
    assert call(client, ann, "POST", f"/projects/{pid}/skip", params={"then": "nxt"}, json=skip).status_code == 422
    again = call(client, ann, "POST", f"/projects/{pid}/skip", json=skip)  # sent again: skipped, once
    assert again.status_code == 200 and again.json()["status"] == "skipped" and "sent again" in again.json()["message"]
    assert store.skipped_by(pid, "ann") == [second["position"]]
    spent = call(
        client, ann, "POST", f"/projects/{pid}/skip", json={"item_id": first["item_id"], "token": first["token"]}
    )
    assert spent.status_code == 409  # a grade's token: that item is graded, not skipped
    reading = call(client, secrets["vic"], "GET", f"/projects/{pid}/reading").json()
    assert reading["counts"]["graded"] == 1 and reading["counts"]["skipped"] == 1
    assert reading["estimate"]["graded_items"] == 1  # named for what it counts: items, not grades (a review)
    assert {i["role"] for i in reading["intervals"]} >= {"fixed_n", "now"}
    assert reading["review"] == {  # nothing graded twice, nothing audited
        "waiting_items": 0,
        "validated": None,
        "disagreements": 0,
        "disagreements_settled": 0,
    }
    undone = call(client, ann, "POST", f"/projects/{pid}/undo").json()  # the last thing done: the skip
    assert undone["status"] == "undone" and undone["position"] == second["position"]
    undone = call(client, ann, "POST", f"/projects/{pid}/undo").json()  # then the grade before it
    assert undone["status"] == "undone" and undone["position"] == first["position"]
    assert "ann" not in set(store.grades(pid)["grader"])
    nothing = call(client, ann, "POST", f"/projects/{pid}/undo")  # the history is empty: not "undone"
    assert nothing.status_code == 409 and nothing.json()["status"] == "refused"
    assert nothing.json()["message"] == "you have no grade or skip to take back"


def test_an_undo_ends_the_card_shown_before_it(world):
    store, pid, secrets, client = world
    ann = secrets["ann"]
    first = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    press = {"item_id": first["item_id"], "token": first["token"], "label": first["labels"][0]["label"]}
    assert call(client, ann, "POST", f"/projects/{pid}/grades", json=press).status_code == 200
    stale = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]  # a second tab keeps this card
    assert call(client, ann, "POST", f"/projects/{pid}/undo").json()["position"] == first["position"]
    late = {"item_id": stale["item_id"], "token": stale["token"], "label": stale["labels"][0]["label"]}
    refused = call(client, ann, "POST", f"/projects/{pid}/grades", json=late)
    assert refused.status_code == 409 and refused.json()["error"]["field"] == "token"
    assert "ann" not in set(store.grades(pid)["grader"])  # nothing stored on the card the undo left behind
    again = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    assert again["position"] == first["position"] and again["token"] != first["token"]
    retry = {"item_id": again["item_id"], "token": again["token"], "label": again["labels"][0]["label"]}
    assert call(client, ann, "POST", f"/projects/{pid}/grades", json=retry).status_code == 200


def test_a_press_sent_again_after_its_grade_was_undone_is_told_so_at_once(world):
    """Sent again within seconds of an undo, a first grade's press was answered 503 "still being stored, or was
    not: send it again" (its token spent moments ago, its grade gone), which a client reads as the database busy
    and retries: it is a 409 saying the undo took that grade back."""
    store, pid, secrets, client = world
    ann = secrets["ann"]
    before = store.grades(pid)
    first = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
    press = {"item_id": first["item_id"], "token": first["token"], "label": first["labels"][0]["label"]}
    assert call(client, ann, "POST", f"/projects/{pid}/grades", json=press).status_code == 200
    assert call(client, ann, "POST", f"/projects/{pid}/undo").json()["status"] == "undone"
    again = call(client, ann, "POST", f"/projects/{pid}/grades", json=press)
    assert again.status_code == 409 and again.json()["error"]["field"] == "token", again.text
    assert "undo" in again.json()["error"]["message"] and store.grades(pid).equals(before)
    card = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]  # a skip taken back alike
    skip = {"item_id": card["item_id"], "token": card["token"]}
    assert call(client, ann, "POST", f"/projects/{pid}/skip", json=skip).json()["status"] == "skipped"
    assert call(client, ann, "POST", f"/projects/{pid}/undo").json()["status"] == "undone"
    again = call(client, ann, "POST", f"/projects/{pid}/skip", json=skip)
    assert again.status_code == 409 and "undo" in again.json()["error"]["message"], again.text
    assert card["position"] not in store.skipped_by(pid, "ann")


def test_an_undo_naming_its_item_undoes_only_that_one_and_refuses_other_fields(world):
    """An undo sent again after a lost answer undid one action more, and its body was never read (an
    integrator's review): with item_id it acts only where the last action is on that item."""
    store, pid, secrets, client = world
    ann = secrets["ann"]
    ids = []
    for _ in range(2):
        item = call(client, ann, "GET", f"/projects/{pid}/next").json()["item"]
        press = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
        assert call(client, ann, "POST", f"/projects/{pid}/grades", json=press).status_code == 200
        ids.append(item["item_id"])
    graded = len(store.grades(pid))
    typo = call(client, ann, "POST", f"/projects/{pid}/undo", json={"itme_id": ids[1]})
    assert typo.status_code == 422 and len(store.grades(pid)) == graded
    earlier = call(client, ann, "POST", f"/projects/{pid}/undo", json={"item_id": ids[0]})
    assert earlier.status_code == 409 and earlier.json()["error"]["field"] == "item_id"
    assert repr(ids[1]) in earlier.json()["message"] and len(store.grades(pid)) == graded  # nothing undone
    done = call(client, ann, "POST", f"/projects/{pid}/undo", json={"item_id": ids[1]})
    assert done.status_code == 200 and done.json()["status"] == "undone"
    again = call(client, ann, "POST", f"/projects/{pid}/undo", json={"item_id": ids[1]})  # sent again: no more
    assert again.status_code == 409 and len(store.grades(pid)) == graded - 1


def test_a_grade_names_its_target_and_criterion(world):
    _, pid, secrets, client = world
    item = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"], "target": "B"}
    refused = call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=body)
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "target"
    late = call(
        client, secrets["ann"], "POST", f"/projects/{pid}/grades", json={**body, "target": "", "shown_ms": "abc"}
    )
    assert late.status_code == 422 and late.json()["error"]["field"] == "shown_ms"
    assert "'abc' ms is not a number" in late.json()["error"]["message"]
    negative = call(
        client, secrets["ann"], "POST", f"/projects/{pid}/grades", json={**body, "target": "", "shown_ms": -5}
    )
    assert "the viewing time -5 ms is not a number of milliseconds" in negative.json()["error"]["message"]  # its unit
    spent = {**body, "target": "", "token": "no-such-token", "shown_ms": "abc"}  # the field first, the state after
    assert call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=spent).status_code == 422
    bad_label = call(
        client, secrets["ann"], "POST", f"/projects/{pid}/grades", json={**body, "target": "", "label": "maybe"}
    )
    assert bad_label.status_code == 409 and "'maybe' is not a grade" in bad_label.json()["message"]
    assert bad_label.json()["error"]["field"] == "label"


def test_malformed_json_and_a_body_too_large(world):
    _, pid, secrets, client = world
    headers = {"Authorization": f"Bearer {secrets['ann']}", "Content-Type": "application/json"}
    broken = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=b'{"label": "1",', headers=headers)
    assert broken.status_code == 422
    assert broken.json()["error"]["message"].startswith("the body is not valid JSON at line 1")
    listed = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=b"[1]", headers=headers)
    assert listed.status_code == 422 and "JSON object" in listed.json()["error"]["message"]
    deep = b'{"a": ' + b"[" * 100_000 + b"1" + b"]" * 100_000 + b"}"  # 200 kB: under the limit, past the parser
    nested = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=deep, headers=headers)
    assert nested.status_code == 422 and "too deeply" in nested.json()["error"]["message"]
    # a number past Python's integer conversion limit, and a lone surrogate, which the database cannot store: both
    # answered 500 (a security review)
    long = client.post(
        f"{api.PREFIX}/projects/{pid}/undo", content=b'{"shown_ms": ' + b"9" * 5000 + b"}", headers=headers
    )
    assert long.status_code == 422 and "digits, too long to read" in long.json()["error"]["message"]
    lone = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=b'{"comment": "\\ud800"}', headers=headers)
    assert lone.status_code == 422 and "unpaired UTF-16 surrogate" in lone.json()["error"]["message"]
    for path in ("", "/reading", "/next", "/export"):  # an id past the database's integers names no project
        far = call(client, secrets["boss"], "GET", f"/projects/{2**64}{path}")
        assert far.status_code == 404 and "no project" in far.json()["error"]["message"]
    missing = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=b"{}", headers=headers)
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "label"
    huge = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=b" " * (http.MAX_JSON_BYTES + 1), headers=headers)
    assert huge.status_code == 413 and "larger than" in huge.json()["error"]["message"]

    def chunks():  # no Content-Length: the limit counts what arrives
        for _ in range(3):
            yield b" " * (http.MAX_JSON_BYTES // 2)

    streamed = client.post(f"{api.PREFIX}/projects/{pid}/grades", content=chunks(), headers=headers)
    assert streamed.status_code == 413


def test_create_a_project_with_the_projects_pages_checks(world):
    store, _, secrets, client = world
    boss = secrets["boss"]
    bad = call(
        client,
        boss,
        "POST",
        "/projects",
        files={"pool": ("pool.jsonl", b'{"id": "1", "prompt": "p"}\n')},
        data={"settings": json.dumps({"name": "Broken"})},
    )
    assert bad.status_code == 422 and "pool.jsonl" in bad.json()["error"]["message"]
    assert bad.json()["error"]["field"] == "pool"  # the part, not the column the message names
    no_name = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data={"settings": "{}"})
    assert no_name.status_code == 422 and no_name.json()["error"]["field"] == "name"
    typo = json.dumps({"name": "Typo", "target_halfwidth": 0.1})  # silently the default target before
    misspelt = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data={"settings": typo})
    message = misspelt.json()["error"]["message"]
    assert misspelt.status_code == 422 and "unknown setting target_halfwidth" in message
    assert "did you mean 'target_half_width'?" in message
    assert misspelt.json()["error"]["field"] == "settings.target_halfwidth"
    zero = json.dumps({"name": "Zero", "n_strata": 0})  # a known setting, a bad value: the field names it
    refused = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data={"settings": zero})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "settings.n_strata"
    models = json.dumps({"name": "Models", "targets": ["x", "y"]})  # was dropped without a word (a review)
    dropped = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data={"settings": models})
    assert dropped.status_code == 422 and dropped.json()["error"]["field"] == "settings.targets"
    stars = json.dumps({"name": "Stars", "scale": {"kind": "stars"}})  # a malformed scale names its setting
    starred = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data={"settings": stars})
    assert starred.status_code == 422 and starred.json()["error"]["field"] == "settings.scale"
    parts = {f"file{i}": ("x.jsonl", b"{}\n") for i in range(http.MAX_FILES + 1)}  # a 500 before (review)
    many = call(client, boss, "POST", "/projects", files=parts, data={"settings": "{}"})
    assert many.status_code == 422 and f"at most {http.MAX_FILES} files" in many.json()["error"]["message"]
    fields = {f"field{i}": "x" for i in range(http.MAX_FIELDS + 1)}
    crowded = call(client, boss, "POST", "/projects", files={"pool": upload("pool.jsonl")}, data=fields)
    assert crowded.status_code == 422 and f"{http.MAX_FIELDS} fields" in crowded.json()["error"]["message"]
    made = call(
        client,
        boss,
        "POST",
        "/projects",
        files={"pool": upload("pool.jsonl"), "samples": upload("samples.jsonl")},
        data={"settings": json.dumps({"name": "From the API", "n_strata": 3})},
    )
    assert made.status_code == 201, made.text
    assert made.headers["Location"] == f"{api.PREFIX}/projects/{made.json()['id']}"  # where to poll for ready
    project = store.project(made.json()["id"])
    assert project.name == "From the API" and project.settings.n_strata == 3
    detail = call(client, boss, "GET", f"/projects/{project.id}").json()
    assert detail["status"] in ("new", "preparing", "ready") and detail["settings"]["n_strata"] == 3
    again = call(
        client,
        boss,
        "POST",
        "/projects",
        files={"pool": upload("pool.jsonl")},
        data={"settings": '{"name": "From the API"}'},
    )
    assert again.status_code == 409 and again.json()["error"]["field"] == "name"  # a name in use names 'name'


def test_a_grade_sent_again_while_the_first_is_being_stored_is_told_saved_once(world, monkeypatch):
    """A grade sent again at once after a client's timeout arrived while the first press was still storing its
    grade: it was refused, "names none of your current items" (8 of 30 retries in an integrator's review), and
    the pipeline recorded a failure for a grade that was saved. It now waits for the first press and is answered
    saved, once; where that press is still not stored, a 503 asks it to be sent again."""
    import threading
    import time

    from core.services import grade_actions, showings
    from core.testing.waiting import until

    store, pid, secrets, client = world
    boss = secrets["boss"]
    real = grade_actions.grade

    def slow(*args, **kwargs):
        time.sleep(0.6)  # a busy database: the token is spent, the grade not stored yet
        return real(*args, **kwargs)

    monkeypatch.setattr(grade_actions, "grade", slow)
    monkeypatch.setattr(endpoints, "PRESS_WAIT_S", 30.0)  # a busy machine's press may take longer than 3 s
    card = call(client, boss, "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": card["item_id"], "token": card["token"], "label": card["labels"][0]["label"]}
    answers = {}
    first = threading.Thread(
        target=lambda: answers.setdefault("first", call(client, boss, "POST", f"/projects/{pid}/grades", json=body))
    )
    first.start()  # sent again once the first press has spent the token, while it stores the grade
    until(lambda: showings.pressing(store, pid, "boss", card["token"]), timeout=30, what="the first press under way")
    again = call(client, boss, "POST", f"/projects/{pid}/grades", json=body)
    first.join()
    assert answers["first"].status_code == 200 and answers["first"].json()["status"] == "saved"
    assert again.status_code == 200 and "sent again" in again.json()["message"], again.text
    assert again.json()["grade_id"] == answers["first"].json()["grade_id"]
    assert (store.grades(pid)["grader"] == "boss").sum() == 1
    monkeypatch.setattr(endpoints, "PRESS_WAIT_S", 0.1)
    stuck = call(client, boss, "GET", f"/projects/{pid}/next").json()["item"]
    assert showings.use(store, pid, "boss", stuck["token"])  # spent by a press that has not stored its grade
    pressed = {**body, "item_id": stuck["item_id"], "token": stuck["token"]}
    busy = call(client, boss, "POST", f"/projects/{pid}/grades", json=pressed)
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "1" and busy.json()["error"]["field"] == "token"
    skipped = {"item_id": stuck["item_id"], "token": stuck["token"]}  # a skip sent again then: the same answer
    assert call(client, boss, "POST", f"/projects/{pid}/skip", json=skipped).status_code == 503


def test_a_create_sent_again_with_its_idempotency_key_makes_one_project(world, monkeypatch):
    """A pipeline whose answer to POST projects was lost could not tell whether the project was made: sent again,
    it was told the name was taken (an integrator's note). With the Idempotency-Key it sent, the same create is
    answered with the project it made; the key with another create is refused, naming it."""
    store, _, secrets, client = world
    files = {"pool": upload("pool.jsonl"), "samples": upload("samples.jsonl")}
    settings = {"settings": json.dumps({"name": "Sent twice"})}

    def create(key, name_files=files, data=settings):
        headers = {"Authorization": f"Bearer {secrets['boss']}", **key}
        return client.post(api.PREFIX + "/projects", files=name_files, data=data, headers=headers)

    key = {"Idempotency-Key": "7c0a2f6e-1d2b-4c1e-9a7e-3b8d5f0c9e11"}
    made = create(key)
    assert made.status_code == 201, made.text
    again = create(key)
    assert again.status_code == 200 and again.json()["id"] == made.json()["id"]
    assert again.headers["Location"] == made.headers["Location"]
    assert [p.name for p in store.projects()].count("Sent twice") == 1
    other_pool = create(key, {"pool": ("pool.jsonl", upload("pool.jsonl")[1] + b"\n")})
    assert other_pool.status_code == 422 and other_pool.json()["error"]["field"] == "Idempotency-Key"
    assert f"made project {made.json()['id']}" in other_pool.json()["error"]["message"]
    other_name = create(key, data={"settings": json.dumps({"name": "Another"})})
    assert other_name.status_code == 422 and other_name.json()["error"]["field"] == "Idempotency-Key"
    other_settings = create(key, data={"settings": json.dumps({"name": "Sent twice", "n_strata": 2})})
    assert other_settings.status_code == 422 and "n_strata" in other_settings.json()["error"]["message"]
    without = create({})  # no key: the name in use, a conflict with what is stored (it was a 422)
    assert without.status_code == 409 and without.json()["error"]["field"] == "name"
    for bad in ("", "x" * 129, "caf\u00e9".encode()):
        refused = create({"Idempotency-Key": bad})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "Idempotency-Key", bad
    fresh = create({"Idempotency-Key": '"another key"'}, data={"settings": json.dumps({"name": "Fresh"})})
    assert fresh.status_code == 201 and store.project_of_request("another key") == fresh.json()["id"]
    real = project_actions.made_by_request  # sent twice at once: the twin's look-up came before the first's insert
    looks = []

    def late(*args):  # the first look finds nothing; the one after the insert failed finds the twin's project
        looks.append(args)
        return None if len(looks) == 1 else real(*args)

    monkeypatch.setattr(project_actions, "made_by_request", late)
    twin = create({"Idempotency-Key": "another key"}, data={"settings": json.dumps({"name": "Fresh"})})
    assert twin.status_code == 200 and twin.json()["id"] == fresh.json()["id"]  # it was a 422, "the name is taken"
    document = client.get(api.PREFIX + "/openapi.json").json()["paths"][api.PREFIX + "/projects"]["post"]
    assert {"200", "201"} <= set(document["responses"])
    assert {"name": "Idempotency-Key", "in": "header"}.items() <= document["parameters"][0].items()


def test_exports_and_the_report_are_the_commands_files(world):
    store, pid, secrets, client = world
    item = call(client, secrets["boss"], "GET", f"/projects/{pid}/next").json()["item"]
    call(
        client,
        secrets["boss"],
        "POST",
        f"/projects/{pid}/grades",
        json={"item_id": item["item_id"], "token": item["token"], "label": item["labels"][-1]["label"]},
    )
    csv = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "csv"})
    assert csv.status_code == 200 and "attachment" in csv.headers["content-disposition"]
    table = pd.read_csv(io.BytesIO(csv.content))
    assert item["item_id"] in table["item"].astype(str).tolist()
    jsonl = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "jsonl"})
    assert len(jsonl.text.strip().splitlines()) == len(table)
    report = call(client, secrets["boss"], "GET", f"/projects/{pid}/report").json()
    assert report["estimate"]["grades"] >= 1
    html = call(client, secrets["boss"], "GET", f"/projects/{pid}/report", params={"format": "html"})
    assert html.headers["content-type"].startswith("text/html")
    assert call(client, secrets["vic"], "GET", f"/projects/{pid}/export").status_code == 403
    wrong = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "xlsx"})
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "format"
    page = call(client, secrets["vic"], "GET", f"/projects/{pid}/items", params={"offset": 38, "limit": 5}).json()
    assert page["total"] == 40 and [i["position"] for i in page["items"]] == [38, 39]


def test_a_report_before_any_grade_is_a_409_and_a_mistyped_parameter_a_422_naming_it(world):
    """No grade yet is the project's state, not the request's form; ``?fmt=jsonl`` gave the default CSV without a
    word (an integrator's review)."""
    store, _, secrets, client = world
    pid = create_project(store, "Not graded", upload("pool.jsonl"), upload("samples.jsonl"), {}, start=False)
    start_preparation(store, pid, wait=True)
    early = call(client, secrets["boss"], "GET", f"/projects/{pid}/report")
    assert early.status_code == 409 and "has no grade yet" in early.json()["error"]["message"]
    typo = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"fmt": "jsonl"})
    assert typo.status_code == 422 and typo.json()["error"]["field"] == "fmt"
    assert "did you mean 'format'?" in typo.json()["error"]["message"]
    none_taken = call(client, secrets["boss"], "GET", "/me", params={"verbose": "1"}).json()["error"]["message"]
    assert none_taken == "unknown parameter 'verbose'; this request takes no parameter"
    named = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": "csv", "grader": "x"})
    assert named.status_code == 422 and named.json()["error"]["field"] == "grader"  # the token's account grades
    assert call(client, secrets["boss"], "GET", f"/projects/{pid}").json()["warnings"] == []


def test_a_pool_prepared_without_samples_says_its_design_is_no_better_than_uniform(world):
    """A pool uploaded without the surrogate's samples became ready without a word (an integrator's review); the
    project now carries the setup page's warning."""
    store, _, secrets, client = world
    pid = create_project(store, "No samples", upload("pool.jsonl"), None, {}, start=False)
    start_preparation(store, pid, wait=True)
    (warning,) = call(client, secrets["boss"], "GET", f"/projects/{pid}").json()["warnings"]
    assert warning.startswith("No item has a surrogate sample") and "no better than uniform sampling" in warning


def test_the_openapi_document_lists_every_route(world):
    _, _, _, client = world
    document = client.get(api.PREFIX + "/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    # the package's version, as `activegrade --version` and the reports give it (it said "unreleased": an
    # integrator's review)
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert document["info"]["version"] == project["version"]
    routes = [route for route in api.routes(lambda: None) if isinstance(route.endpoint, http.Endpoint)]  # not unrouted
    served = {(route.path, method) for route in routes for method in route.methods - {"HEAD"}}
    declared = {(path, method.upper()) for path, ops in document["paths"].items() for method in ops}
    assert declared == served
    unknown = client.get(api.PREFIX + "/projects/1/nothing")  # any other path: the API's JSON 404, not a page
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == 404
    traced = client.request("TRACE", api.PREFIX + "/projects/1/grades")  # any method: a JSON 405 naming POST
    assert traced.status_code == 405 and traced.headers["Allow"] == "POST" and traced.json()["error"]
    me = document["paths"]["/api/v1/me"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert set(me["properties"]["role"]["enum"]) == set(auth.ROLES)  # a reviewer's /me was outside it
    # what an API review found the document left out: the statuses every JSON body and project id can get, the
    # card ?then=next adds, the report's and the exports' own content types, a body that is required
    grades = document["paths"]["/api/v1/projects/{project_id}/grades"]["post"]
    assert {"404", "409", "413", "415", "422", "503"} <= set(grades["responses"]) and grades["requestBody"]["required"]
    answer = grades["responses"]["200"]["content"]["application/json"]["schema"]
    assert "next" in answer["properties"] and "next" not in answer["required"]
    assert "422" in document["paths"]["/api/v1/projects/{project_id}"]["get"]["responses"]  # id 'abc'
    # every route: an unknown query parameter (422) and a database that failed (503); the grading bodies are
    # closed to fields they do not list, as the server refuses them; undo's item_id is optional (an integrator's
    # review)
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert {"422", "503"} <= set(operation["responses"]), (method, path)
    for press in ("grades", "skip", "undo"):
        body = document["paths"][f"/api/v1/projects/{{project_id}}/{press}"]["post"]["requestBody"]
        assert body["content"]["application/json"]["schema"]["additionalProperties"] is False, press
    undo = document["paths"]["/api/v1/projects/{project_id}/undo"]["post"]["requestBody"]
    assert undo["content"]["application/json"]["schema"]["required"] == []
    report = document["paths"]["/api/v1/projects/{project_id}/report"]["get"]["responses"]["200"]["content"]
    assert set(report) == {"application/json", "text/markdown", "text/html"}
    export = document["paths"]["/api/v1/projects/{project_id}/export"]["get"]["responses"]["200"]["content"]
    assert "text/csv" in export


def test_the_settings_schema_describes_every_setting_and_refuses_what_the_api_refuses():
    import jsonschema

    from core.api import schemas
    from core.settings import CHOICES, DEFAULTS, ProjectSettings

    validator = jsonschema.Draft202012Validator(schemas.SETTINGS)
    properties = schemas.SETTINGS["properties"]
    assert set(properties) == {f.name for f in fields(ProjectSettings)}
    assert all(schema.get("description") for schema in properties.values())
    validator.validate(DEFAULTS.to_dict())
    assert {name: properties[name]["enum"] for name in CHOICES} == {k: list(v) for k, v in CHOICES.items()}
    for bad in (
        {"regime": "whenever"},
        {"target_half_width": None},
        {"n_strata": 2.5},
        {"n_strat": 4},
        {"input_format": "x"},
    ):
        assert not validator.is_valid(bad), bad  # as core.settings refuses each
        with pytest.raises(InputError):
            DEFAULTS.with_changes(bad)


def test_the_upload_limit_is_the_projects_pages():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert http.MAX_UPLOAD_BYTES == config["server"]["maxUploadSize"] << 20


LOOPBACK = ("127.0.0.1", 50000)
"""A TestClient's peer on this machine (its default, "testclient", is no address: another machine)."""
LOCAL_URL = "http://localhost"
"""The open demo's own name for a TestClient on this machine (its default Host, testserver, is another name)."""


def test_the_open_demo_api_answers_this_machine_as_the_demos_user(tmp_path, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_OPEN_DEMO", "1")  # core.config reads the environment on every call
    monkeypatch.delenv("ACTIVEGRADE_TRUSTED_PROXIES", raising=False)
    store = Store.open(f"sqlite:///{tmp_path / 'demo.db'}")  # no accounts, as the open demo requires
    app = Starlette(routes=api.routes(lambda: store))
    local = TestClient(app, client=LOOPBACK, base_url=LOCAL_URL)
    assert local.get(api.PREFIX + "/me").json() == {"name": http.DEMO_GRADER, "role": auth.ADMIN}
    assert local.get(api.PREFIX + "/me", params={"grader": " ann "}).json()["name"] == "ann"
    formula = local.get(api.PREFIX + "/me", params={"grader": "=cmd|' /C calc'!A0"})  # stored with every grade
    assert formula.status_code == 422 and formula.json()["error"]["field"] == "grader"
    assert call(local, "ag_any", "GET", "/me").status_code == 200  # a token is not read: there are no accounts
    elsewhere = TestClient(app).get(api.PREFIX + "/me")
    assert elsewhere.status_code == 403
    assert "answers only on this machine" in elsewhere.json()["error"]["message"]
    assert "ACTIVEGRADE_TRUSTED_PROXIES" in elsewhere.json()["error"]["message"]
    proxied = local.get(api.PREFIX + "/me", headers={"X-Forwarded-For": "203.0.113.5"})
    assert proxied.status_code == 403 and "reverse proxy" in proxied.json()["error"]["message"]
    cross_site = local.get(api.PREFIX + "/me", headers={"Origin": "http://elsewhere.example"})
    assert cross_site.status_code == 403 and "own origin" in cross_site.json()["error"]["message"]
    image = local.get(api.PREFIX + "/me", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"})
    assert image.status_code == 403  # a GET with no Origin from another site's page
    assert local.get(api.PREFIX + "/me", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    rebound = TestClient(app, client=LOOPBACK, base_url="http://rebind.attacker.example:8501")  # DNS rebinding
    refused = rebound.get(api.PREFIX + "/me", headers={"Origin": "http://rebind.attacker.example:8501"})
    assert refused.status_code == 403 and "local names" in refused.json()["error"]["message"]
    monkeypatch.setenv("ACTIVEGRADE_TRUSTED_PROXIES", "203.0.113.0/24")  # exposed on purpose, as the app's pages
    assert TestClient(app, client=("203.0.113.7", 50000)).get(api.PREFIX + "/me").status_code == 200
    assert TestClient(app, client=("198.51.100.7", 50000)).get(api.PREFIX + "/me").status_code == 403


def test_the_open_demo_api_refuses_a_database_with_accounts(world, monkeypatch):
    store, _, secrets, _ = world
    monkeypatch.setenv("ACTIVEGRADE_OPEN_DEMO", "1")
    local = TestClient(Starlette(routes=api.routes(lambda: store)), client=LOOPBACK, base_url=LOCAL_URL)
    refused = call(local, secrets["boss"], "GET", "/me")
    assert refused.status_code == 403 and "has accounts" in refused.json()["error"]["message"]


def test_the_fast_pages_calls_take_the_session_cookie_from_the_apps_origin_only(world):
    from core.api import fast
    from core.services import sessions

    store, pid, secrets, client = world
    app = Starlette(routes=fast.routes(lambda: store))
    cookie = sessions.start(store, auth.sign_in(store, "ann", PASSWORD))
    path = f"/grade-fast/api/projects/{pid}/next"
    assert TestClient(app).get(path).status_code == 401
    assert TestClient(app).get(path, headers={"Authorization": f"Bearer {secrets['ann']}"}).status_code == 401
    signed_in = TestClient(app, cookies={http.SESSION_COOKIE: cookie})
    assert signed_in.get(path, headers={"Origin": "http://elsewhere.example"}).status_code == 403
    # an <img> of another site, or of another port of this host, sends no Origin with its GET (review)
    for site in ("cross-site", "same-site"):
        assert signed_in.get(path, headers={"Sec-Fetch-Site": site}).status_code == 403
    assert signed_in.get(path, headers={"Sec-Fetch-Site": "none"}).status_code == 200  # an address typed
    item = signed_in.get(path).json()["item"]
    ahead = item["ahead"]  # the item expected next, to paint while a press is saved: its texts, no token, no hold
    assert ahead["item_id"] != item["item_id"] and ahead["prompt"] and not {"token", "position"} & ahead.keys()
    body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
    graded = signed_in.post(f"/grade-fast/api/projects/{pid}/grades?then=next", json=body).json()
    assert graded["status"] == "saved" and graded["next"]["item"]["item_id"] == ahead["item_id"]
    assert graded["next"]["item"]["ahead"]["item_id"] not in (item["item_id"], ahead["item_id"])
    assert "ahead" not in call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]  # the API's
    assert TestClient(app).get("/grade-fast", follow_redirects=False).status_code == 303
    stray = signed_in.get(f"/grade-fast/api/projects/{pid}/nothing")  # the page's calls' own JSON 404
    assert stray.status_code == 404 and stray.json()["error"]["status"] == 404
    assert "Fast grading" in signed_in.get(f"/grade-fast?project={pid}").text


@pytest.mark.postgres
def test_tokens_on_postgresql():
    from tests.pg_schema import throwaway_schema_url

    with throwaway_schema_url() as url:
        store = Store.open(url)
        team.create_account(store, auth.OPERATOR, "pat", auth.GRADER, password=PASSWORD)
        info, secret = tokens.create(store, auth.OPERATOR, "pat", "x" * 200)
        assert tokens.resolve(store, secret, "203.0.113.7").name == "pat"
        assert tokens.resolve(store, "ag_wrong", "2001:db8::1") is None
        assert tokens.revoke(store, auth.OPERATOR, info.id).status == "revoked"
        assert tokens.resolve(store, secret) is None and tokens.listed(store, auth.OPERATOR, "pat")[0].last_used_at


def test_a_grade_the_database_does_not_take_is_a_503_not_saved(world, monkeypatch):
    from core.errors import NotSaved

    _, pid, secrets, client = world
    item = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]

    def down(*args, **kwargs):
        raise NotSaved("the grade was not saved")

    monkeypatch.setattr("core.services.grade_actions.grade", down)
    body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
    answer = call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=body)
    assert answer.status_code == 503 and answer.json()["status"] == "not_saved"
    monkeypatch.undo()
    assert call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json=body).json()["status"] == "saved"


def test_a_download_named_in_any_script_gets_a_header_every_client_reads():
    """A header is Latin-1: a project named in another script made every export answer 500 (an attacker's
    review). The name travels as RFC 6266's filename*, with an ASCII filename beside it."""
    name = 'ünïcødé 名前 "q"-grades.csv'
    response = endpoints._download(b"x", "text/csv", name)
    header = response.headers["content-disposition"]
    header.encode("latin-1")
    plain, encoded = header.split("; filename*=UTF-8''")
    assert unquote(encoded) == name and plain == 'attachment; filename="_n_c_d_ __ _q_-grades.csv"'


def test_the_reading_gives_the_review_backlog_and_the_corrected_estimate(world, monkeypatch):
    """The dashboard's "Corrected for graders' errors" and the items waiting for review were in no API answer (an
    integrator's review): GET reading reads them from the review service, as the dashboard does."""
    from core.api import endpoints
    from core.stats.validation import Validated

    store, pid, secrets, client = world
    corrected = Validated(0.374, 0.1, 0.179, 0.570, -0.008, 12, 0.95)
    monkeypatch.setattr(endpoints.review, "validates", lambda settings: True)
    monkeypatch.setattr(endpoints.review, "validated", lambda *args: corrected)
    monkeypatch.setattr(endpoints.review, "waiting", lambda *args: [object()] * 6)
    monkeypatch.setattr(endpoints.review, "disagreements_settled", lambda *args: (1, 2))
    body = call(client, secrets["vic"], "GET", f"/projects/{pid}/reading").json()
    assert body["review"]["waiting_items"] == 6 and body["review"]["validated"]["ci_low"] == 0.179
    # how far the correction measures graders' errors, as the dashboard and the report say (an integrator's note)
    assert (body["review"]["disagreements_settled"], body["review"]["disagreements"]) == (1, 2)


def test_a_flag_sends_the_card_to_review_once_and_only_an_item_the_grader_holds_or_graded(world):
    """The Grade page's F had no route (an integrator's note): a bot that doubts an item could not send it to a
    reviewer. Sent again after a lost answer it raises one flag, as a grade sent again stores one."""
    store, pid, _, client = world
    team.create_account(store, auth.OPERATOR, "flo", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "flo")
    flo = tokens.create(store, auth.OPERATOR, "flo", "tests")[1]
    card = call(client, flo, "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": card["item_id"], "token": card["token"], "note": "the reference looks wrong"}
    first = call(client, flo, "POST", f"/projects/{pid}/flag", json=body)
    assert first.status_code == 200 and first.json()["status"] == "flagged", first.text
    assert first.json()["item_id"] == card["item_id"] and first.json()["position"] == card["position"]
    again = call(client, flo, "POST", f"/projects/{pid}/flag", json=body)
    assert again.status_code == 200 and "already" in again.json()["message"]

    def flags() -> list[str]:
        raised = reviews.flags(store, pid, [card["position"]])
        return raised.loc[raised["grader"] == "flo", "note"].tolist()

    assert flags() == ["the reference looks wrong"]
    assert call(client, flo, "GET", f"/projects/{pid}/next").json()["item"]["token"] == card["token"]  # still flo's
    press = {"item_id": card["item_id"], "token": card["token"], "label": card["labels"][0]["label"]}
    assert call(client, flo, "POST", f"/projects/{pid}/grades", json=press).status_code == 200
    after = call(client, flo, "POST", f"/projects/{pid}/flag", json={**body, "note": "and the grade is a guess"})
    assert after.json()["status"] == "flagged" and flags() == ["the reference looks wrong", "and the grade is a guess"]
    other = call(client, flo, "GET", f"/projects/{pid}/next").json()["item"]
    skip = {"item_id": other["item_id"], "token": other["token"]}
    assert call(client, flo, "POST", f"/projects/{pid}/skip", json=skip).json()["status"] == "skipped"
    skipped = call(client, flo, "POST", f"/projects/{pid}/flag", json=skip)  # back in the queue: not flo's card
    assert skipped.status_code == 409 and skipped.json()["error"]["field"] == "token"
    assert reviews.flags(store, pid, [other["position"]]).empty
    forged = call(client, flo, "POST", f"/projects/{pid}/flag", json={**body, "token": "made-up"})
    assert forged.status_code == 409 and forged.json()["error"]["field"] == "token"
    typo = call(client, flo, "POST", f"/projects/{pid}/flag", json={**body, "note ": "x"})
    assert typo.status_code == 422 and typo.json()["error"]["field"] == "note "


def test_a_token_expires_after_its_days_and_says_so_to_its_holder(world):
    """A token answered until revoked (an attacker's note: one left in a forgotten script stayed good for years).
    It now answers for the days its maker gives (DEFAULT_DAYS unless told), then a 401 says it expired."""
    store, _, _, client = world
    info, secret = tokens.create(store, auth.OPERATOR, "bob", "a week", days=7)
    assert info.expires_at - info.created_at == timedelta(days=7) and info.active
    assert tokens.resolve(store, secret, now=info.created_at + timedelta(days=6)).name == "bob"
    with pytest.raises(tokens.TokenExpired):
        tokens.resolve(store, secret, now=info.created_at + timedelta(days=7))
    default = tokens.create(store, auth.OPERATOR, "bob", "default")[0]
    assert default.expires_at - default.created_at == timedelta(days=tokens.DEFAULT_DAYS)
    for days in (0, tokens.MAX_DAYS + 1, True, 1.5, "30"):
        with pytest.raises(InputError, match="a token's life"):
            tokens.create(store, auth.OPERATOR, "bob", "bad", days=days)
    with store.session() as s, s.begin():  # its time has come
        s.execute(update(ApiToken).where(ApiToken.id == info.id).values(expires_at=utcnow() - timedelta(seconds=1)))
    answer = call(client, secret, "GET", "/me")
    assert answer.status_code == 401 and "expired at" in answer.json()["error"]["message"]
    assert not [t for t in tokens.listed(store, auth.OPERATOR, "bob") if t.id == info.id][0].active


def test_next_says_whether_grading_is_over_or_others_hold_the_items_left(tmp_path):
    """A bot stopped at the first empty next while others still held the last items of a budget (an integrator's
    review): the answer says whether grading is over and when another grader's hold lapses."""
    import activegrade

    store = Store.open(f"sqlite:///{tmp_path / 'n.db'}")
    settings = {"min_view_s": 0, "planned_budget": 40, "budget_fixed": True}  # the whole pool
    pid = create_project(store, "All", upload("pool.jsonl"), upload("samples.jsonl"), settings, start=False)
    start_preparation(store, pid, wait=True)
    secrets = {}
    for name in ("ann", "bob"):
        team.create_account(store, auth.OPERATOR, name, auth.GRADER, password=PASSWORD)
        team.assign(store, auth.OPERATOR, pid, name)
        secrets[name] = tokens.create(store, auth.OPERATOR, name, "tests")[1]
    app = Starlette(routes=api.routes(lambda: store))
    ann, bob = (
        activegrade.Client("http://testserver", secrets[n], session=TestClient(app)).project(pid) for n in secrets
    )
    held = ann.next_item()
    while (card := bob.next_item()) is not None:  # every other item
        assert bob.grade(card, "Correct").status == "saved"
    waiting = bob.last_next
    assert waiting["done"] is False and 500 < waiting["retry_after_s"] <= 600  # ann's hold: 10 minutes
    assert "other graders hold the 1 item left" in waiting["reason"]
    assert ann.grade(held, "Correct").status == "saved"
    assert bob.next_item(wait=30) is None  # over: no wait
    assert bob.last_next["done"] is True and bob.last_next["retry_after_s"] is None
    assert bob.last_next["reason"].startswith("The budget fixed in advance is graded: ")


def test_null_in_an_optional_field_is_its_default_and_in_a_required_one_is_named_null(world):
    """Serialisers write an unset optional field as null: it read "the field 'comment' is missing" and "the
    viewing time None ms" (an integrator's review)."""
    store, pid, secrets, client = world
    team.create_account(store, auth.OPERATOR, "nul", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "nul")
    nul = tokens.create(store, auth.OPERATOR, "nul", "tests")[1]
    card = call(client, nul, "GET", f"/projects/{pid}/next").json()["item"]
    nulls = {"comment": None, "target": None, "criterion": None, "shown_ms": None}
    body = {"item_id": card["item_id"], "token": card["token"], "label": card["labels"][0]["label"], **nulls}
    saved = call(client, nul, "POST", f"/projects/{pid}/grades", json=body)
    assert saved.status_code == 200 and saved.json()["status"] == "saved", saved.text
    refused = call(client, nul, "POST", f"/projects/{pid}/skip", json={"item_id": card["item_id"], "token": None})
    assert refused.status_code == 422 and refused.json()["error"]["message"] == "the field 'token' is null"


def test_a_stale_tokens_retry_names_no_grade_of_a_later_card(world):
    """A token whose grade an undo took back, the item graded since on a new card: its late retry was told
    "that token's press was stored already, as Incorrect", a grade it never made (an integrator's review)."""
    store, pid, _, client = world
    team.create_account(store, auth.OPERATOR, "sta", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "sta")
    sta = tokens.create(store, auth.OPERATOR, "sta", "tests")[1]
    first = call(client, sta, "GET", f"/projects/{pid}/next").json()["item"]
    press = {"item_id": first["item_id"], "token": first["token"], "label": first["labels"][0]["label"]}
    assert call(client, sta, "POST", f"/projects/{pid}/grades", json=press).json()["status"] == "saved"
    assert call(client, sta, "POST", f"/projects/{pid}/undo", json={"item_id": first["item_id"]}).status_code == 200
    again = call(client, sta, "GET", f"/projects/{pid}/next").json()["item"]
    assert again["item_id"] == first["item_id"] and again["token"] != first["token"]
    later = {"item_id": again["item_id"], "token": again["token"], "label": again["labels"][1]["label"]}
    assert call(client, sta, "POST", f"/projects/{pid}/grades", json=later).json()["status"] == "saved"
    retry = call(client, sta, "POST", f"/projects/{pid}/grades", json=press)
    assert retry.status_code == 409 and "stored already" not in retry.json()["message"]
    assert call(client, sta, "POST", f"/projects/{pid}/grades", json=later).json()["status"] == "saved"  # its own


def test_a_reviewer_reads_the_review_queue_and_sets_final_grades_through_the_api(world):
    """No route listed the items waiting for review or settled them: a pipeline could not clear the provisional
    state without a browser, and a reviewer's token got 403 everywhere (an integrator's review)."""
    import jsonschema

    from core.api import schemas

    store, pid, secrets, client = world
    team.create_account(store, auth.OPERATOR, "rita", auth.REVIEWER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "rita")
    rita = tokens.create(store, auth.OPERATOR, "rita", "tests")[1]
    card = call(client, secrets["ann"], "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": card["item_id"], "token": card["token"]}
    call(client, secrets["ann"], "POST", f"/projects/{pid}/flag", json={**body, "note": "the reference is off"})
    call(client, secrets["ann"], "POST", f"/projects/{pid}/grades", json={**body, "label": "Correct"})
    queue = call(client, rita, "GET", f"/projects/{pid}/review")
    assert queue.status_code == 200, queue.text
    jsonschema.Draft202012Validator(schemas.REVIEW_QUEUE).validate(queue.json())
    [waiting] = [i for i in queue.json()["items"] if i["item_id"] == card["item_id"]]
    assert waiting["reasons"] == ["flagged"] and waiting["flags"] == [{"grader": "ann", "note": "the reference is off"}]
    assert [(g["grader"], g["label"]) for g in waiting["grades"]] == [("ann", "Correct")]
    settle = {"item_id": card["item_id"], "label": "Incorrect", "note": "the answer is 56"}
    assert call(client, secrets["ann"], "POST", f"/projects/{pid}/review", json=settle).status_code == 403  # a grader
    bad = call(client, rita, "POST", f"/projects/{pid}/review", json={**settle, "label": "Maybe"})
    assert bad.status_code == 409 and bad.json()["status"] == "refused"
    unknown = call(client, rita, "POST", f"/projects/{pid}/review", json={**settle, "item_id": "nope"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "item_id"
    done = call(client, rita, "POST", f"/projects/{pid}/review", json=settle)
    assert done.status_code == 200 and done.json()["status"] == "reviewed" and done.json()["item_id"] == card["item_id"]
    assert store.graded_positions(pid)[card["position"]] == 0.0  # the final grade the estimate reads
    after = call(client, rita, "GET", f"/projects/{pid}/review").json()["items"]
    assert card["item_id"] not in [i["item_id"] for i in after]


def test_an_admin_staffs_a_project_through_the_api(world):
    """A project made over HTTP could not be staffed over HTTP: api.md's own example ran `activegrade users assign`
    on the server between its two halves (an integrator's review)."""
    store, pid, secrets, client = world
    boss = secrets["boss"]
    assert call(client, secrets["ann"], "GET", f"/projects/{pid}/members").status_code == 403  # an admin's
    added = call(client, boss, "PUT", f"/projects/{pid}/members/bob")
    assert added.status_code == 200 and added.json()["status"] == "assigned"
    assert call(client, boss, "PUT", f"/projects/{pid}/members/bob").json()["status"] == "unchanged"  # idempotent
    listed = call(client, boss, "GET", f"/projects/{pid}/members").json()["members"]
    assert {"name": "bob", "role": "grader", "active": True} in listed
    assert call(client, secrets["bob"], "GET", f"/projects/{pid}/next").status_code == 200  # bob grades it now
    assert call(client, boss, "PUT", f"/projects/{pid}/members/boss").status_code == 409  # an admin acts on all
    assert call(client, boss, "DELETE", f"/projects/{pid}/members/boss").status_code == 409  # either way
    nobody = call(client, boss, "PUT", f"/projects/{pid}/members/nobody")
    assert nobody.status_code == 422 and "no account named" in nobody.json()["error"]["message"]
    held = call(client, secrets["bob"], "GET", f"/projects/{pid}/next").json()["item"]
    removed = call(client, boss, "DELETE", f"/projects/{pid}/members/bob")
    assert held["position"] not in accounts.reserved(store, pid)  # his hold goes with him (it lasted 10 minutes)
    assert (
        removed.json()["status"] == "unassigned"
        and call(client, secrets["bob"], "GET", f"/projects/{pid}/next").status_code == 404
    )


def test_a_grader_changes_an_earlier_grade_through_a_card_of_that_item(world):
    """No route could change an earlier grade, and the 409's advice, undo, took back another, later grade (an
    integrator's review): GET next?item_id= gives a card of an item the caller graded, whose press changes it."""
    import jsonschema

    from core.api import schemas

    store, pid, secrets, client = world
    boss = secrets["boss"]
    graded = []
    for label in ("Correct", "Correct"):
        card = call(client, boss, "GET", f"/projects/{pid}/next").json()["item"]
        body = {"item_id": card["item_id"], "token": card["token"], "label": label}
        assert call(client, boss, "POST", f"/projects/{pid}/grades", json=body).json()["status"] == "saved"
        graded.append(card)
    first, later = graded
    again = call(client, boss, "GET", f"/projects/{pid}/next", params={"item_id": first["item_id"]}).json()
    jsonschema.Draft202012Validator(schemas.NEXT).validate(again)
    assert again["item"]["item_id"] == first["item_id"] and again["item"]["previous"]["labels"] == {"": "Correct"}
    body = {"item_id": first["item_id"], "token": again["item"]["token"], "label": "Incorrect"}
    changed = call(client, boss, "POST", f"/projects/{pid}/grades", json=body)
    assert changed.status_code == 200 and changed.json()["status"] == "changed", changed.text
    again = call(client, boss, "POST", f"/projects/{pid}/grades", json=body)  # its answer lost: sent again
    assert again.json()["status"] == "changed" and "sent again" in again.json()["message"], again.text
    # both answers name the grade the change stored (the first one's was null)
    assert (
        changed.json()["grade_id"] == again.json()["grade_id"] == store.grade_of(pid, first["position"], "boss")["id"]
    )
    assert store.grade_of(pid, first["position"], "boss")["label"] == "Incorrect"
    assert store.grade_of(pid, later["position"], "boss")["label"] == "Correct"  # the later grade stands
    fresh = call(client, boss, "GET", f"/projects/{pid}/next").json()["item"]
    call(client, boss, "GET", f"/projects/{pid}/next", params={"item_id": later["item_id"]})  # another look back
    held = call(client, boss, "GET", f"/projects/{pid}/next").json()["item"]  # the item held: its token kept
    assert (held["item_id"], held["token"]) == (fresh["item_id"], fresh["token"])  # it was a second live token
    never = call(client, boss, "GET", f"/projects/{pid}/next", params={"item_id": fresh["item_id"]})
    assert never.status_code == 409 and never.json()["error"]["field"] == "item_id"
    unknown = call(client, boss, "GET", f"/projects/{pid}/next", params={"item_id": "nope"})
    assert unknown.status_code == 422


def test_a_skip_brings_the_next_card_in_the_same_round_trip(world):
    """POST skip refused ?then=next, which POST grades takes, so a skip cost two round trips (a review)."""
    store, pid, secrets, client = world
    card = call(client, secrets["boss"], "GET", f"/projects/{pid}/next").json()["item"]
    body = {"item_id": card["item_id"], "token": card["token"]}
    skipped = call(client, secrets["boss"], "POST", f"/projects/{pid}/skip", params={"then": "next"}, json=body)
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    following = skipped.json()["next"]["item"]
    assert following is not None and following["item_id"] != card["item_id"]  # a skipped item goes to another
    assert call(client, secrets["boss"], "GET", f"/projects/{pid}/next").json()["item"]["token"] == following["token"]
    again = call(client, secrets["boss"], "POST", f"/projects/{pid}/skip", params={"then": "next"}, json=body)
    assert again.json()["status"] == "skipped" and again.json()["next"]["item"]["token"] == following["token"]
    call(client, secrets["boss"], "POST", f"/projects/{pid}/undo")  # leave the skip out of the later tests
