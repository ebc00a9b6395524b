"""The HTTP API on the served app (serve.py on 127.0.0.1, sign-in on) through the Python client ``activegrade``:
create a project from files, grade 30 items through next and grades (each grade on the item handed out),
read the estimate, recompute it from the grades CSV with pandas; a grade survives a restart; limits."""

from __future__ import annotations

import io
import json
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest
import requests

import activegrade
from core import config
from core.api import http
from core.services import auth, team, tokens
from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import ROOT, Server

DATA = ROOT / "tests" / "data" / "app"
PASSWORD = "correct horse battery"


def _serve(db_url: str, log) -> Server:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(config.OPEN_DEMO, "0")
        return Server(db_url, DATA, log)


@pytest.fixture(scope="module")
def served(tmp_path_factory, artifacts):
    """The app served on a database with an admin, a grader and a prepared 40-item project (no minimum
    viewing time); (server, store, project id, admin's token, grader's token)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('api-served') / 'app.db'}"
    store = Store.open(url)
    files = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Served", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "root", auth.ADMIN, password=PASSWORD)
    team.create_account(store, auth.OPERATOR, "ann", auth.GRADER, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    admin = tokens.create(store, auth.OPERATOR, "root", "tests")[1]
    grader = tokens.create(store, auth.OPERATOR, "ann", "tests")[1]
    server = _serve(url, artifacts / "streamlit-api.log")
    yield server, store, pid, admin, grader
    server.stop()


def test_grading_30_items_through_the_client_and_recomputing_the_estimate(served):
    server, store, pid, admin, grader = served
    ann = activegrade.Client(server.url, grader).project(pid)
    shown = []
    for _ in range(30):
        card = ann.next_item()
        assert ann.next_item().token == card.token  # the item stays the caller's until graded
        outcome = ann.grade(card, card.labels[len(shown) % len(card.labels)])
        assert outcome.status == "saved" and outcome.item_id == card.item_id
        shown.append((card.position, card.item_id))
    stored = store.grades(pid)
    mine = stored[stored["grader"] == "ann"].sort_values("id")
    assert list(mine["position"]) == [position for position, _ in shown]
    items = store.load_items(pid)
    assert [items["id"][p] for p, _ in shown] == [item_id for _, item_id in shown]
    first = ann.earlier_card(shown[0][1])  # a change of the first grade, through a card of that item (a review)
    assert first.raw["previous"]["labels"] == {"": first.labels[0]}
    assert ann.grade(first, first.labels[1]).status == "changed"
    assert ann.grade(ann.earlier_card(shown[0][1]), first.labels[0]).status == "changed"  # and back
    boss = activegrade.Client(server.url, admin).project(pid)
    reading = boss.reading()
    assert reading.graded == 30 and reading.interval("now") is not None
    grades = pd.read_csv(io.BytesIO(boss.export("csv")))
    per_item = grades.groupby(["stratum", "position"], as_index=False).agg(y=("grade", "mean"), W=("weight", "first"))
    by_stratum = per_item.groupby("stratum").agg(mean=("y", "mean"), W=("W", "first"))
    recomputed = float((by_stratum["mean"] * by_stratum["W"]).sum())
    assert recomputed == pytest.approx(boss.report("json")["recompute"]["value"], abs=1e-12)
    assert boss.assign("ann") == "unchanged" and "ann" in [m["name"] for m in boss.members()]  # staffed by script
    every = list(boss.all_items(page=7))  # the client read one page and dropped the pool's total (a review)
    assert [i["position"] for i in every] == list(range(40)) and sum(i["grade"] is not None for i in every) == 30
    results = json.loads(boss.export("lm-eval", task="arith", model="m1"))  # named as the command line names them
    assert results["model_name"] == "m1" and list(results["results"]) == ["arith"]
    with pytest.raises(activegrade.ApiError) as refused:
        ann.reading()  # graders are blind to the estimate
    assert refused.value.status == 403


def test_a_project_created_through_the_client_gets_ready(served):
    server, _, _, admin, _ = served
    client = activegrade.Client(server.url, admin)
    project = client.create_project("Made by a script", DATA / "pool.jsonl", DATA / "samples.jsonl", n_strata=3)
    state = project.wait_ready(timeout=300).status()
    assert state.status == "ready" and state.items == 40 and state.settings["n_strata"] == 3
    assert project.id in [p.id for p in client.projects()]
    assert state.warnings == [] and all(p.warnings is None for p in client.projects())  # the list does not say
    with pytest.raises(activegrade.ApiError) as bad:
        client.create_project("Broken", ("pool.csv", b"id,prompt\n1,what\n"))
    assert bad.value.status == 422 and "pool.csv" in bad.value.message


DOCS_URL = 'url = "http://127.0.0.1:8501"'
"""The example's one line that names the app: pointed at the served app."""


def _python_client_blocks() -> list[str]:
    """The code blocks (indented four spaces) of docs/api.md's "The Python client" section, in order."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split("## The Python client\n", 1)[1].split("\n## ", 1)[0]
    blocks, lines = [], []
    for line in [*section.splitlines(), "end"]:
        if line.startswith("    ") or (lines and not line.strip()):
            lines.append(line)
        elif lines:
            blocks.append(textwrap.dedent("\n".join(lines)).strip() + "\n")
            lines = []
    return blocks


def test_the_python_client_example_in_docs_api_md_runs(served, monkeypatch):
    server, store, _, admin, grader = served
    first, second = _python_client_blocks()
    assert first.count(DOCS_URL) == 1
    monkeypatch.chdir(DATA)  # the example's pool.jsonl and samples.jsonl
    names = {"token": admin, "graders_token": grader}
    exec(first.replace(DOCS_URL, f"url = {server.url!r}"), names)
    team.assign(store, auth.OPERATOR, names["project"].id, "ann")  # what the text between the blocks asks
    exec(second, names)
    assert names["reading"].graded > 0 and 0 <= names["reading"].estimate <= 1
    assert len(names["grades"]) == names["reading"].graded and "recompute" in names["report"]


def test_limits_and_errors_on_the_real_server(served):
    server, _, pid, _, grader = served
    headers = {"Authorization": f"Bearer {grader}", "Content-Type": "application/json"}
    url = f"{server.url}/api/v1/projects/{pid}/grades"
    huge = requests.post(url, data=b" " * (2 << 20), headers=headers, timeout=60)
    assert huge.status_code == 413 and huge.json()["error"]["message"].startswith("the body is larger")
    broken = requests.post(url, data=b"{oops", headers=headers, timeout=60)
    assert broken.status_code == 422 and "not valid JSON" in broken.json()["error"]["message"]
    assert requests.get(f"{server.url}/api/v1/me", timeout=60).status_code == 401
    document = requests.get(f"{server.url}/api/v1/openapi.json", timeout=60).json()
    assert "/api/v1/projects/{project_id}/grades" in document["paths"]
    # a path or method no route takes: the API's JSON error, not Streamlit's page (a 200 of HTML) or its text 405
    unknown = requests.get(f"{server.url}/api/v1/nope", headers=headers, timeout=60)
    assert unknown.status_code == 404 and "openapi.json" in unknown.json()["error"]["message"]
    wrong = requests.delete(f"{server.url}/api/v1/projects/{pid}", headers=headers, timeout=60)
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "GET, HEAD" and wrong.json()["error"]
    prefixed = activegrade.Client(f"{server.url}/api/v1", grader)  # the API's own prefix in the client's URL
    assert prefixed.me() == activegrade.Client(server.url, grader).me()


def test_grades_sent_at_once_with_one_token_store_one_grade(served):
    """An attacker's review sent 12 grades with one token at once: three answered "saved", and the project kept
        a grade another caller was told was replaced. One acts now; the others get 409 (the token is spent first), or,
    asking the grade stored, its answer again.
        16 at once here failed on that code in about half the runs (SQLite's writes are serialised)."""
    server, store, pid, _, grader = served
    card = activegrade.Client(server.url, grader).project(pid).next_item()
    url = f"{server.url}/api/v1/projects/{pid}/grades"
    headers = {"Authorization": f"Bearer {grader}"}
    labels = [card.labels[i % len(card.labels)] for i in range(16)]
    body = {"item_id": card.item_id, "token": card.token}
    with ThreadPoolExecutor(len(labels)) as pool:
        answers = list(
            pool.map(
                lambda label: requests.post(url, json=body | {"label": label}, headers=headers, timeout=60), labels
            )
        )
    kept = store.grades(pid)
    kept = kept[kept["position"] == card.position]
    assert len(kept) == 1
    # one acted; a press of the same label found after it was stored answers with its grade (sent again: saved,
    # once), any other is refused
    saved = [(a.json()["grade_id"], label) for a, label in zip(answers, labels) if a.status_code == 200]
    assert saved and set(saved) == {(int(kept["id"].iloc[0]), kept["label"].iloc[0])}, [a.text for a in answers]
    assert all(a.status_code in (200, 409) for a in answers)


def test_a_forged_forwarded_for_does_not_escape_the_wrong_token_back_off(served):
    """uvicorn believes X-Forwarded-For from a loopback peer unless told not to (serve.py): a client on this
    machine then escaped the back-off by naming another address. Last of the module's tests on ``served``: the
    back-off it sets holds this machine's wrong tokens."""
    server = served[0]
    url = f"{server.url}/api/v1/me"
    codes = [
        requests.get(url, headers={"Authorization": f"Bearer ag_wrong{i}"}, timeout=60).status_code for i in range(8)
    ]
    assert codes[0] == 401 and codes[-1] == 429, codes
    forged = {"Authorization": "Bearer ag_wrong", "X-Forwarded-For": "203.0.113.9"}
    again = [requests.get(url, headers=forged, timeout=60).status_code for _ in range(2)]
    assert again == [429, 429], (codes, again)


def test_a_grade_and_a_showing_token_survive_a_restart(tmp_path, artifacts):
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    store = Store.open(url)
    files = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Restarted", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "ann", auth.ADMIN, password=PASSWORD)
    secret = tokens.create(store, auth.OPERATOR, "ann", "tests")[1]
    with _serve(url, artifacts / "streamlit-api-restart-1.log") as server:
        project = activegrade.Client(server.url, secret).project(pid)
        graded = project.next_item()
        project.grade(graded, graded.labels[0])
        held = project.next_item()
    with _serve(url, artifacts / "streamlit-api-restart-2.log") as server:
        project = activegrade.Client(server.url, secret).project(pid)
        assert project.status().graded_items == 1
        again = project.next_item()
        assert again.position == held.position  # the reservation is the database's: the same item
        assert again.token == held.token  # and so is the token handed out before the restart
        assert project.grade(held, held.labels[0]).status == "saved"
        assert project.grade(again, again.labels[0]).message.endswith("sent again, and its grade is stored once")
        with pytest.raises(activegrade.ApiError) as spent:  # another grade on the spent token
            project.grade(again, again.labels[1])
        assert spent.value.status == 409 and spent.value.field == "token"
    assert len(Store.open(url).grades(pid)) == 2


def test_the_open_demo_answers_the_api_and_the_fast_page_on_this_machine_only(tmp_path, artifacts):
    """In the open demo (no accounts) a client on 127.0.0.1 lists, gets and grades without a token, as the
    demo's user; a request that came through a proxy (X-Forwarded-For, not named in
    ACTIVEGRADE_TRUSTED_PROXIES) is refused with 403 saying what to set."""
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    store = Store.open(url)
    files = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Demo", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(config.OPEN_DEMO, "1")
        mp.delenv(config.TRUSTED_PROXIES, raising=False)
        server = Server(url, DATA, artifacts / "streamlit-api-open-demo.log")
    with server:
        listed = requests.get(f"{server.url}/api/v1/projects", timeout=60)  # no Authorization header at all
        assert listed.status_code == 200 and pid in [p["id"] for p in listed.json()["projects"]]
        project = activegrade.Client(server.url, "").project(pid)
        card = project.next_item()
        assert project.grade(card, card.labels[0]).status == "saved"
        ann = requests.get(f"{server.url}/grade-fast/api/projects/{pid}/next", params={"grader": "ann"}, timeout=60)
        assert ann.status_code == 200 and ann.json()["item"]["item_id"] != card.item_id  # another grader's turn
        assert "Fast grading" in requests.get(f"{server.url}/grade-fast?project={pid}", timeout=60).text
        proxied = {"X-Forwarded-For": "203.0.113.5"}
        for path in ("/api/v1/projects", f"/api/v1/projects/{pid}/next", f"/grade-fast/api/projects/{pid}/next"):
            refused = requests.get(server.url + path, headers=proxied, timeout=60)
            assert refused.status_code == 403 and config.TRUSTED_PROXIES in refused.json()["error"]["message"]
        page = requests.get(f"{server.url}/grade-fast?project={pid}", headers=proxied, timeout=60)
        assert page.status_code == 403 and page.text.startswith("Not available") and config.OPEN_DEMO in page.text
    grades = store.grades(pid)
    assert list(grades["grader"]) == [http.DEMO_GRADER] and grades["position"].tolist() == [card.position]


def test_a_setting_not_understood_stops_the_server_saying_which(tmp_path, artifacts):
    """An operator's mistyped variable stops serve.py at its start with the variable and its fix, where the
    server ran on and only the first page said what was wrong (and a client of the API alone never saw it)."""
    log = artifacts / "streamlit-bad-setting.log"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(config.LOG_LEVEL, "loud")
        with pytest.raises(RuntimeError, match="exited with status 1"):
            Server(f"sqlite:///{tmp_path / 'app.db'}", DATA, log)
    assert "ActiveGrade did not start: $ACTIVEGRADE_LOG_LEVEL is 'loud'. Fix: set it to one of" in log.read_text()
