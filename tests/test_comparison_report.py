"""A comparison project's report gives each model's score and each difference, never one score over its grades
(which mixed the models: the evaluation lead's review saw 0.3645 headlined for models at 0.405 and 0.324); the
exports and API reads of one score refuse it, saying where the per-model figures are (tests/test_api_compare.py
grades a comparison through the API)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core import api
from core.errors import InputError
from core.exports.formats import EXPORTS
from core.exports.project_export import ProjectFiles, report_bytes
from core.inputs.targets import response_column
from core.services import auth, reservations, team, tokens
from core.services.comparison_reading import comparison_reading, statement
from core.services.project import create_project, start_preparation
from core.store import Store
from tests.markdown_text import shown
from tests.test_api import PASSWORD, call
from tests.test_compare import long_pool, write_jsonl

MODELS = ("beta", "alpha")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A prepared comparison of two models on 30 items, 20 of them graded on a card by ann (a response is
    correct when it names the item's answer), with an admin's and a grader's API tokens."""
    folder = tmp_path_factory.mktemp("comparison_report")
    store = Store.open(f"sqlite:///{folder / 'c.db'}")
    pool = Path(write_jsonl(folder / "pool.jsonl", long_pool(30, models=MODELS)))
    pid = create_project(store, "Two models", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    items = store.load_items(pid)
    for position in range(20):
        card = []
        for target in sorted(MODELS):
            right = str(items.at[position, response_column(target)]).endswith(str(items.at[position, "answer"]))
            card.append((target, 1.0 if right else 0.0, "Correct" if right else "Incorrect"))
        reservations.record_card(store, pid, position, card, "ann", seconds=3.0)
    for name, role in {"boss": auth.ADMIN, "ann": auth.GRADER}.items():
        team.create_account(store, auth.OPERATOR, name, role, password=PASSWORD)
    team.assign(store, auth.OPERATOR, pid, "ann")
    secrets = {name: tokens.create(store, auth.OPERATOR, name, "tests")[1] for name in ("boss", "ann")}
    return store, pid, secrets


def test_the_report_gives_each_model_and_each_difference_and_no_pooled_score(graded):
    store, pid, _ = graded
    files = ProjectFiles.of(store, store.project(pid))
    data = files.require_report()
    reading = comparison_reading(store, pid, files.design)
    assert "estimate" not in data and "recompute" not in data  # no one score of the two models' grades
    models = {m["model"]: m["estimate"] for m in data["comparison"]["models"]}
    assert models == pytest.approx({m: e for m, (e, _, _) in reading.models.items()})
    assert models["alpha"] != pytest.approx(models["beta"])
    assert data["comparison"]["graded_items"] == 20 and data["comparison"]["grades"] == 40
    assert [p["pair"] for p in data["comparison"]["pairs"]] == ["alpha - beta"]
    markdown = report_bytes(data, "md").decode()
    assert markdown.startswith("# ActiveGrade comparison: Two models") and "## Differences" in markdown
    assert f"{models['alpha']:.3f}" in markdown and "Estimated mean grade" not in markdown
    page = report_bytes(data, "html").decode()
    assert "<h2>Models</h2>" in page and "alpha - beta" in page and "<h2>Graders</h2>" in page
    assert "No response was graded twice" in markdown  # a comparison's agreement is over responses
    assert json.loads(report_bytes(data, "json"))["comparison"]["statement"].startswith("alpha - beta: ")


@pytest.mark.parametrize(
    ("fmt", "where"),
    [
        ("estimates", "activegrade report"),
        ("lm-eval", "activegrade report"),
        ("inspect", "activegrade report"),
        ("argilla", "each grade with its target"),
    ],
)
def test_an_export_of_one_score_refuses_a_comparison_and_says_where_its_figures_are(graded, fmt, where):
    store, pid, _ = graded
    with pytest.raises(InputError, match="compares models") as refused:
        EXPORTS[fmt].write(ProjectFiles.of(store, store.project(pid)))
    assert where in str(refused.value)
    if fmt != "argilla":  # the API's caller is told the route too (an integrator's review read only the CLI's)
        assert f"activegrade report {pid}" in str(refused.value)
        assert f"GET /api/v1/projects/{pid}/report" in str(refused.value)


def test_the_api_refuses_one_score_of_a_comparison_and_says_where_its_figures_are(graded):
    store, pid, secrets = graded
    client = TestClient(Starlette(routes=api.routes(lambda: store)))
    reading = call(client, secrets["boss"], "GET", f"/projects/{pid}/reading")
    assert reading.status_code == 409 and "/report" in reading.json()["error"]["message"]
    for fmt in ("estimates", "lm-eval", "inspect", "label-studio", "argilla"):  # one refusal, one status (was 422)
        export = call(client, secrets["boss"], "GET", f"/projects/{pid}/export", params={"format": fmt})
        assert export.status_code == 409 and "models" in export.json()["error"]["message"], fmt
        assert fmt in ("label-studio", "argilla") or "/report" in export.json()["error"]["message"]
    report = call(client, secrets["boss"], "GET", f"/projects/{pid}/report").json()
    assert {m["model"] for m in report["comparison"]["models"]} == set(MODELS)


def test_items_waiting_for_review_make_the_statement_provisional_and_are_counted(graded, monkeypatch):
    """A full census with 16 disagreements waiting said "A better" at a zero-width interval, and nothing of them
    (an integrator's review): the report counts the items waiting and calls its figures provisional."""
    from core.exports import project_export

    store, pid, _ = graded
    files = ProjectFiles.of(store, store.project(pid))
    assert files.require_report()["comparison"]["waiting_items"] == 0
    monkeypatch.setattr(project_export.review, "waiting", lambda _store, _pid: [object()] * 16)
    data = ProjectFiles.of(store, store.project(pid)).require_report()
    assert data["comparison"]["waiting_items"] == 16
    for fmt in ("md", "html"):
        text = shown(report_bytes(data, fmt).decode())
        assert "Provisional: 16 items wait for a reviewer" in text
    assert "Provisional" not in report_bytes(files.require_report(), "md").decode()


def test_each_models_score_is_its_own_grades_estimate_with_an_interval_in_0_1(graded):
    """A model's grades were read as differences in [-1, 1]: after 7 cards a model showed 0.223 [-0.384, 0.724]
    (a grader's and manager's review). Its score is now the one-target estimate of its grades in [0, 1]."""
    from core.services.comparison_reading import graded_matrix
    from core.stats.estimate import estimate_batch

    store, pid, _ = graded
    files = ProjectFiles.of(store, store.project(pid))
    reading = comparison_reading(store, pid, files.design)
    y = graded_matrix(store.target_grades(pid), list(store.project(pid).settings.targets))
    positions = y.index.to_numpy()[None, :]
    for model, (value, low, high) in reading.models.items():
        own = estimate_batch(files.design, positions, y[model].to_numpy()[None, :])
        assert (value, low, high) == pytest.approx((own.value[0], *(b[0] for b in own.interval(reading.level))))
        assert reading.model_se[model] == pytest.approx(own.variance[0] ** 0.5)  # a standard error to carry on
        assert 0.0 <= low <= value <= high <= 1.0


def test_the_markdown_report_shows_every_name_literally():
    """A model's name, a criterion's and an upload's file name went into the Markdown report as they were, and a
    viewer rendering inline HTML ran the markup they held (an attacker's review): each is shown literally, the
    report's own bold kept. Rendered by CommonMark (markdown-it), no element of the names forms."""
    from markdown_it import MarkdownIt

    from core.exports.report import markdown_line, markdown_table, sources_line

    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>[x](javascript:alert(3))"
    table = markdown_table(pd.DataFrame({"model": [hostile], "estimate": [0.5]}))
    line = markdown_line(f"**Estimated mean grade of criterion {hostile!r}: 0.5000**, from 3 graded items.")
    inputs = {"inputs": {"pool": {"file": f"x`{hostile}`y.jsonl", "sha256": "ab"}}, "generated_at": "2026-12-07"}
    for text in (table, line, sources_line(inputs)):
        page = MarkdownIt("commonmark").enable("table").render(text)
        assert "<img" not in page and "<script" not in page and "<a " not in page, page
    assert MarkdownIt("commonmark").render(line).startswith("<p><strong>Estimated mean grade")  # bold kept
    spaced = MarkdownIt("commonmark").render(markdown_line("**Estimate: 0.6450** at the stop, **0.5** here"))
    assert "</strong> at the stop, <strong>0.5</strong> here" in spaced  # "0.6450**at the stop": a review


def test_which_difference_is_resolved_is_read_from_the_anytime_interval_until_the_budget_is_graded(graded):
    """The statement read the fixed-n interval at every grade, while the queue stayed open and the Dashboard
    said it live: a manager who stops at the first "A better" peeks at every grade, which the fixed-n interval
    does not allow. It reads the anytime-valid interval, given beside it, until the budget fixed in advance is
    graded; then the fixed-n one, valid at that size."""
    from core.services.comparison_reading import FIXED
    from core.stats.compare import resolved
    from core.stats.stopping import ANYTIME

    store, pid, _ = graded
    files = ProjectFiles.of(store, store.project(pid))
    reading = comparison_reading(store, pid, files.design)
    assert reading.decided_by == ANYTIME and reading.graded_items == 20
    for pair in reading.pairs:
        assert -1.0 <= pair.anytime_low <= pair.estimate <= pair.anytime_high <= 1.0
        assert pair.anytime_high - pair.anytime_low > pair.high - pair.low  # the price of reading it at any grade
        assert pair.statement == resolved(pair.anytime_low, pair.anytime_high)
    says = reading.table().set_index("pair")["says"]  # each row names its model, as the line under it does
    assert all(f"{pair}: {words}" in statement(reading) for pair, words in says.items())
    data = files.require_report()
    assert data["comparison"]["statement_read_from"] == ANYTIME
    assert {"anytime_low", "anytime_high", "se"} <= set(data["comparison"]["pairs"][0])
    assert all(m["se"] > 0 for m in data["comparison"]["models"])  # one-model reports gave an se, this none (review)
    assert "read from the anytime-valid intervals" in shown(report_bytes(data, "md").decode())
    before = store.project(pid).settings.to_dict()
    store.update_settings(pid, {"planned_budget": 20, "budget_fixed": True})
    try:
        at_budget = comparison_reading(store, pid, files.design)
        assert at_budget.decided_by == FIXED
        assert [p.statement for p in at_budget.pairs] == [resolved(p.low, p.high) for p in at_budget.pairs]
    finally:
        store.update_settings(pid, {k: before[k] for k in ("planned_budget", "budget_fixed")})
