"""A rubric project's pages: the dashboard's panel per criterion under the sentence naming the criterion the
stopping rule and the forecast read, and every criterion's agreement between graders; the presenter view's
compact rows, and the Export page's estimates."""

from __future__ import annotations

from core.exports.project_export import project_design
from core.rubric import Rubric
from core.services.criteria_reading import criteria_now
from core.services.reservations import record_card
from tests.test_rubric import CRITERIA
from tests.test_rubric_reading import CARDS, _answers

SENTENCE = "Stopping rule and forecast: criterion 'correct' (the primary)"


def graded_by_ann(store, project_id: int) -> Rubric:
    """The project made a rubric project (CRITERIA) whose first CARDS cards ann has graded; its rubric."""
    store.update_settings(project_id, {"criteria": CRITERIA})
    rubric = store.project(project_id).settings.rubric
    for position in range(CARDS):
        record_card(
            store, project_id, position, rubric.card_values(_answers(position)), "ann", seconds=1.5, rubric=True
        )
    return rubric


def test_the_pages_show_every_criterion_and_the_one_the_rule_reads(open_app, store, project_id):
    graded_by_ann(store, project_id)
    settings = store.project(project_id).settings
    design = project_design(store, store.project(project_id))[1]
    readings = criteria_now(store, project_id, design, settings, settings.method)

    dashboard = open_app("app_pages/dashboard.py", project_id=project_id)
    assert any(SENTENCE in c.value for c in dashboard.caption)
    shown = {m.label: m.value for m in dashboard.metric}
    for r in readings:
        assert shown[r.name + (" (primary)" if r.primary else "")] == r.value_words
        assert any(r.answered in c.value for c in dashboard.caption)
    assert shown["correct (primary)"] == shown["Estimated mean grade of criterion 'correct'"]

    presenter = open_app("app_pages/presenter.py", project_id=project_id)
    body = "\n".join(h.proto.body for h in presenter.get("html"))
    assert SENTENCE.replace("'", "&#x27;") in body and all(f"<td>{r.name}</td>" in body for r in readings)

    export = open_app("app_pages/export.py", project_id=project_id)
    assert "dl_estimates" in {b.key for b in export.get("download_button")}


def test_the_dashboard_shows_every_criterions_agreement(open_app, store, project_id):
    rubric = graded_by_ann(store, project_id)
    second = _answers(0) | {"helpful": "3"}  # bob agrees with ann on item 0 but for 'helpful'
    record_card(store, project_id, 0, rubric.card_values(second), "bob", seconds=1.5, rubric=True)

    dashboard = open_app("app_pages/dashboard.py", project_id=project_id)
    captions = [c.value.replace("\\", "") for c in dashboard.caption]  # escaped markdown, lines "  \n"
    [shown] = [c for c in captions if "graded twice" in c]
    same = "1 items graded twice: same grade 100%, Cohen's kappa n/a, Krippendorff's alpha n/a"
    assert shown.split("  \n") == [
        f"correct (primary): {same} (nominal)",
        "helpful: 1 items graded twice: same grade 0%, Cohen's kappa n/a, Krippendorff's alpha 0.00 (ordinal)",
        f"safe: {same} (ordinal)",
        f"tone: {same} (ordinal)",
    ]
