"""Projects page flows: first run opens the demo, upload, bad upload, custom scale, missing demo."""

from __future__ import annotations

import json
from pathlib import Path

from core.stats.stopping import allocation_kappa
from core.store import jobs as job_table
from core.testing.waiting import prepared, until
from tests.app.test_dashboard_export import grade_some
from tests.card_press import card_data, press


def test_first_run_opens_the_demo_and_shows_its_strata(open_app, store):
    at = open_app()
    demo = store.project_by_name("Demo")
    assert demo is not None and at.query_params["project"] == str(demo.id)
    prepared(store, demo.id)
    until(  # the app's own worker ran it
        lambda: {job.state for job in job_table.jobs(store, demo.id)} == {"done"},
        timeout=60,
        what="the demo's jobs to be done",
    )
    at.run()
    assert at.header[0].value == "Demo"
    assert {m.label: m.value for m in at.metric}["Items"] == "40"
    assert "Planned saving: fixed-n · same rule" in [m.label for m in at.metric]  # before any grade
    assert len(at.dataframe) >= 2  # strata table and planned allocation
    links = {e.proto.label: e.proto.query_string for e in at.get("page_link")}  # where to go next, this project's
    assert all(f"project={demo.id}" in links.get(label, "") for label in labels_of_next_steps())
    # reopening does not create a second demo nor prepare it again
    open_app()
    assert [p.name for p in store.projects()] == ["Demo"]


def test_missing_demo_is_explained_not_a_traceback(open_app, store, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    assert "demo pool is not available yet" in at.warning[0].value
    assert store.projects() == []


def _fill_new_project(at, name: str, pool: tuple[str, bytes], samples: tuple[str, bytes] | None) -> None:
    at.text_input(key="new_name").set_value(name)
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    if samples:
        at.file_uploader(key="new_samples").set_value((samples[0], samples[1], "application/octet-stream"))


def test_upload_creates_and_prepares_a_project(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    _fill_new_project(at, "Sums", uploads["pool.jsonl"], uploads["samples.jsonl"])
    at.radio[0].set_value("likert")
    at.text_area(key="new_guidelines").set_value("Grade **carefully**.")
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    project = store.project_by_name("Sums")
    assert project is not None and at.query_params["project"] == str(project.id)
    assert project.settings.scale["kind"] == "likert"
    assert project.settings.guidelines == "Grade **carefully**."
    assert store.input_files(project.id)["pool"] == uploads["pool.jsonl"]
    prepared(store, project.id)
    assert store.project(project.id).status == "ready"
    assert store.item_count(project.id) == 40


def test_bad_upload_shows_file_and_row_and_saves_nothing(open_app, store, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    bad = b'{"id": "a", "prompt": "p", "response": "r"}\n{"id": "b", "prompt": "p"\n'
    _fill_new_project(at, "Broken", ("broken.jsonl", bad), None)
    at.run()  # said on upload, not "suggested: exact, as no answers to judge by yet" until Create (a review)
    assert at.warning and "broken.jsonl" in at.warning[0].value and "row 2" in at.warning[0].value and not at.error
    assert not any("Suggested from the answers" in c.value for c in at.caption)
    at.button(key="create").click().run()
    assert not at.exception
    assert at.error and "broken.jsonl" in at.error[0].value and "row 2" in at.error[0].value
    assert store.projects() == []


def test_duplicate_name_is_refused(open_app, store, uploads, project_id):
    at = open_app(project_id=project_id)
    _fill_new_project(at, "Arithmetic", uploads["pool.jsonl"], uploads["samples.jsonl"])
    at.button(key="create").click().run()
    assert "already exists" in at.error[0].value
    assert len(store.projects()) == 1


def test_custom_scale_with_a_bad_value_blocks_creation(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    at.radio[0].set_value("custom").run()
    at.text_area(key="new_custom_labels").set_value("Wrong = 0\nRight = 1.5").run()
    assert "not in [0, 1]" in at.error[0].value and "row 2" in at.error[0].value
    assert at.button(key="create").disabled


def test_failed_preparation_is_shown_with_a_retry(open_app, store, project_id):
    store.set_status(project_id, "failed", "InputError: something specific")
    at = open_app(project_id=project_id)
    assert "something specific" in at.error[0].value
    assert any(b.key == "retry" for b in at.button)


def test_running_preparation_shows_stored_progress(open_app, store, uploads, monkeypatch, tmp_path):
    from datetime import UTC, datetime, timedelta

    import core.services.preparation
    from core.services.project import create_project, start_preparation

    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "0")
    monkeypatch.setattr(
        core.services.preparation, "STALE_AFTER", timedelta(days=1)
    )  # however slow the machine, not stalled
    pid = create_project(store, "Busy", uploads["pool.jsonl"], uploads["samples.jsonl"], start=False)
    assert start_preparation(store, pid)
    assert job_table.claim(store, "elsewhere", stale_before=datetime.now(UTC)) is not None  # a worker holds it
    store.set_progress(pid, 12, 40, "clustering surrogate answers: 12 of 40 items")
    at = open_app(project_id=pid)
    progress = at.get("progress")[0].proto
    assert abs(progress.value - 30) <= 1 and "12 of 40 items" in progress.text
    assert not at.warning  # its worker is alive
    assert [job.state for job in job_table.jobs(store, pid)] == ["running"]  # the page queued no second job


def test_a_preparation_no_worker_takes_says_so_until_the_apps_worker_runs_it(
    open_app, store, uploads, monkeypatch, tmp_path
):
    from datetime import timedelta

    import core.services.preparation
    import core.services.project

    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "0")  # a deployment whose workers run apart, none yet
    pid = core.services.project.create_project(store, "Waiting", uploads["pool.jsonl"], uploads["samples.jsonl"])
    monkeypatch.setattr(core.services.preparation, "STALE_AFTER", timedelta(seconds=-1))
    at = open_app(project_id=pid)
    assert "no worker has taken it" in at.warning[0].value and "python -m core worker" in at.warning[0].value
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "1")
    at.run()  # the app starts its own worker, which prepares the project
    prepared(store, pid)
    assert store.project(pid).status == "ready"


def test_database_url_from_streamlit_secrets(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from core.store import Store

    monkeypatch.delenv("ACTIVEGRADE_DB_URL", raising=False)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_OPEN_DEMO", "1")
    url = f"sqlite:///{tmp_path / 'from-secrets.db'}"
    Store.open(url).create_project("Kept in secrets' database", {}, {})
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
    at.secrets["connections"] = {"activegrade": {"url": url}}
    at.run()
    assert not at.exception
    assert "Kept in secrets' database" in at.dataframe[0].value["name"].tolist()


def test_grading_settings_can_change_after_preparation(open_app, store, project_id):
    at = open_app(project_id=project_id)
    guidelines = next(t for t in at.text_area if t.label == "Guidelines (markdown)")
    guidelines.set_value("Be **strict**.")
    next(c for c in at.checkbox if c.label == "Show graders the reference answer").uncheck()
    next(s for s in at.selectbox if s.label == "Estimator for the report").set_value("stratified")
    next(b for b in at.button if b.label == "Save settings").click().run()
    settings = store.project(project_id).settings
    assert (settings.guidelines, settings.show_reference, settings.method) == (
        "Be **strict**.",
        False,
        "stratified",
    )
    assert settings.planned_budget is None and settings.budget_fixed is False  # the suggestion untouched stays unset


def test_the_caption_above_the_settings_shows_them_as_saved(open_app, store, project_id):
    """Saved settings show at once in the project's caption, not at the next page load."""
    at = open_app(project_id=project_id)
    caption = lambda: next(c.value for c in at.caption if " · seed " in c.value).replace("\\", "")  # noqa: E731
    assert "minimum viewing time 0.3 s" in caption()  # its markdown escapes out
    next(n for n in at.number_input if n.label == "Minimum viewing time (seconds)").set_value(1.5)
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert store.project(project_id).settings.min_view_s == 1.5
    assert "minimum viewing time 1.5 s" in caption(), caption()


def test_the_mean_grade_the_manager_expects_sets_the_headline_forecast(open_app, store, project_id):
    """Blank by default (the surrogate's guess); a mean of 0.03 given, the forecast starts from it."""
    at = open_app(project_id=project_id)
    field = next(n for n in at.number_input if n.label == "Mean grade you expect (optional)")
    assert field.value is None
    before = plan_forecast(store, project_id)
    field.set_value(0.03)
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert store.project(project_id).settings.expected_score == 0.03
    assert plan_forecast(store, project_id).n < before.n


def test_the_stopping_regime_is_a_setting_until_the_first_grade(open_app, store, project_id):
    at = open_app(project_id=project_id)
    choice = next(s for s in at.selectbox if s.label == "When grading may stop")
    assert choice.value == "looks" and not choice.disabled
    choice.set_value("anytime")
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert store.project(project_id).settings.regime == "anytime"
    grade_some(store, project_id, 1)
    at = open_app(project_id=project_id)
    assert next(s for s in at.selectbox if s.label == "When grading may stop").disabled
    # and what else decides how it stops: n0 and a budget fixed in advance (changing them is refused, too)
    assert next(n for n in at.number_input if n.label == "Planned number of grades (n0)").disabled
    assert next(c for c in at.checkbox if c.label.startswith("The budget is fixed in advance")).disabled
    assert any("chosen before grading: the project has 1 grade" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Save settings").click().run()  # saved untouched: nothing refused
    assert not at.error and store.project(project_id).settings.regime == "anytime"
    assert at.warning[0].value.startswith("Nothing saved: no setting changed.")  # said, not silent


def plan_forecast(store, project_id):
    from ui import plan

    return plan.project_reading(store.project(project_id)).forecast


def test_a_fixed_budget_changes_the_design_the_app_grades_with(open_app, store, project_id):
    at = open_app(project_id=project_id)
    next(n for n in at.number_input if n.label == "Planned number of grades (n0)").set_value(30)
    next(c for c in at.checkbox if c.label.startswith("The budget is fixed in advance")).check()
    next(b for b in at.button if b.label == "Save settings").click().run()
    settings = store.project(project_id).settings
    assert (settings.planned_budget, settings.budget_fixed) == (30, True)
    from ui import plan

    assert plan.design(store.project(project_id)).kappa == allocation_kappa("fixed")


def test_the_minimum_viewing_time_is_set_on_the_projects_page_and_the_card_uses_it(open_app, store, project_id):
    at = open_app(project_id=project_id)
    field = next(n for n in at.number_input if n.label == "Minimum viewing time (seconds)")
    assert field.value == 0.3  # today's default
    field.set_value(0.0)
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert store.project(project_id).settings.min_view_s == 0.0
    grade = open_app("app_pages/grade.py", project_id=project_id)
    assert card_data(grade)["min_view_ms"] == 0
    assert press(grade, "grade", label="Correct", shown_ms=40)["status"] == "saved"  # a glance is enough now


def test_the_semantic_backend_defaults_to_what_the_answers_call_for(open_app, store, uploads, monkeypatch, tmp_path):
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    _fill_new_project(at, "Short", uploads["pool.jsonl"], uploads["samples.jsonl"])  # numbers: exact
    at.run()
    assert next(s for s in at.selectbox if s.label == "Semantic backend").value == "exact"
    assert any("Suggested from the answers: **exact**" in c.value for c in at.caption)
    rows = [json.loads(line) for line in uploads["samples.jsonl"][1].decode().splitlines()]
    wordy = "".join(
        json.dumps({**r, "sample": f"I think the answer is {r['sample']}, after adding."}) + "\n" for r in rows
    )
    _fill_new_project(at, "Long", uploads["pool.jsonl"], ("samples.jsonl", wordy.encode()))
    at.run()
    backend = next(s for s in at.selectbox if s.label == "Semantic backend")
    assert backend.value == "embedding" and "sentence-embedding" in backend.help
    assert any("Suggested from the answers: **embedding**" in c.value for c in at.caption)


def labels_of_next_steps() -> list[str]:
    """The Projects page's next-step links, in order (an admin of the open demo may open every one)."""
    return ["Grade its items", "Follow the estimate", "Simulate the grading first"]


def test_a_pool_without_surrogate_samples_plans_no_saving(open_app, store, uploads, monkeypatch, tmp_path):
    """A pool uploaded alone became a design of one stratum whose setup planned "+1% · +0%" and a forecast "from
    the surrogate alone" (a manager's review): it says there is no surrogate and no saving."""
    from ui.plan import NO_SURROGATE

    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    at = open_app()
    _fill_new_project(at, "Alone", uploads["pool.jsonl"], None)
    at.button(key="create").click().run()
    project = store.project_by_name("Alone")
    prepared(store, project.id)
    at.run()
    captions = " ".join(c.value for c in at.caption)
    assert NO_SURROGATE in captions and "from the surrogate alone" not in captions
    assert {m.label: m.value for m in at.metric}["Planned saving"] == "none"
    assert any("No item has a surrogate sample" in w.value for w in at.warning)
