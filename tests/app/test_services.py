"""The app's headless services: scales, what graders see, preparation state, reports."""

from __future__ import annotations

import re

import pytest

from core.errors import InputError
from core.exports.report import report, report_markdown
from core.inputs.markup import has_image
from core.scales import BINARY, LIKERT, parse_custom_labels, scale_from_settings
from core.services.grading import grader_view, queue_state
from core.services.project import create_project, start_preparation
from core.services.tracking import current_estimate, estimate_path
from core.stats.confseq import anytime_interval
from core.stats.queue import next_item


def test_scales_map_labels_to_values_and_keys():
    assert [(c.label, c.value, c.key) for c in BINARY.choices] == [("Correct", 1.0, "Y"), ("Incorrect", 0.0, "N")]
    assert [c.value for c in LIKERT.choices] == [0.0, 0.25, 0.5, 0.75, 1.0]
    custom = parse_custom_labels("Wrong = 0\n\nPartly = right = 0.5\nRight=1")
    assert [(c.label, c.value, c.key) for c in custom.choices] == [
        ("Wrong", 0.0, "1"),
        ("Partly = right", 0.5, "2"),
        ("Right", 1.0, "3"),
    ]
    assert scale_from_settings({"scale": custom.to_settings()}) == custom
    assert scale_from_settings({}) == BINARY


@pytest.mark.parametrize(
    "text, message",
    [
        ("Only = 1", "2 to 9 labels"),
        ("A = 0\nA = 1", "appears twice"),
        ("A = 0\nB", "has no '='"),
        ("A = 0\nB = x", "not a number"),
        ("A = 0\nB = nan", "not in [0, 1]"),
        ("A = 0\n = 1", "empty label"),
        ("A = 0\nB = 0", "every label of the scale has the value 0"),  # no grade could differ from another
    ],
)
def test_bad_custom_scales_say_which_line(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_custom_labels(text)


def test_a_bad_stored_scale_names_its_label_not_a_row():
    """A settings file's scale said "row 1", though the file is one JSON object: its labels are counted."""
    with pytest.raises(InputError) as raised:
        scale_from_settings({"scale": {"kind": "custom", "labels": [["Bad", 0], ["Good", 2]]}})
    assert raised.value.row is None and str(raised.value).startswith("label 2 of the scale: value 2.0 of 'Good'")


def test_two_first_visitors_open_the_same_demo(store, monkeypatch):
    from core.services import auth
    from core.services.project_actions import DEMO_NAME, open_demo

    first = open_demo(store, auth.OPERATOR, start=False)
    looked_up = store.project_by_name
    calls = iter([None])  # the second visitor looked before the first one's demo was written
    monkeypatch.setattr(store, "project_by_name", lambda name: next(calls, looked_up(name)))
    assert open_demo(store, auth.OPERATOR, start=False) == first
    assert [p.name for p in store.projects()] == [DEMO_NAME]


def test_grader_view_hides_reference_and_signals_unless_allowed():
    item = {
        "id": "a",
        "prompt": "p",
        "response": "r",
        "reference": "ref",
        "label": 1.0,
        "stratum": 2,
        "semantic_entropy": 0.7,
        "agreement": 0.2,
    }
    hidden = grader_view(item, {"show_reference": False, "show_signals": False})
    assert set(hidden) == {"id", "prompt", "response", "image", "image_note"}
    shown = grader_view(item, {"show_reference": True, "show_signals": True})
    assert shown["reference"] == "ref" and shown["signals"]["stratum"] == 2
    assert "label" not in shown and "label" not in shown["signals"]


def test_a_queued_preparation_is_not_queued_twice(store, uploads):
    pid = create_project(store, "p", uploads["pool.jsonl"], uploads["samples.jsonl"], start=False)
    assert start_preparation(store, pid)
    assert store.project(pid).status == "preparing"
    assert not start_preparation(store, pid)  # a queued job is not queued twice


def test_preparation_failure_is_stored_with_its_message(store, monkeypatch, uploads):
    import core.surrogate.prepare

    def broken(*args, **kwargs):
        raise InputError("the model is missing", fix="install it")

    monkeypatch.setattr(core.surrogate.prepare, "score_items", broken)
    pid = create_project(store, "p", uploads["pool.jsonl"], uploads["samples.jsonl"], start=False)
    assert start_preparation(store, pid, wait=True)
    info = store.project(pid)
    assert info.status == "failed" and "the model is missing" in info.error and "install it" in info.error


def test_bad_upload_writes_nothing(store):
    with pytest.raises(InputError):
        create_project(store, "p", ("pool.csv", b"id,prompt\n1,hello\n"))
    assert store.projects() == []


def test_report_carries_estimate_settings_and_seed(store, project_id):
    from core.services.reservations import submit
    from core.stats.allocation import design_from_items
    from core.stats.skips import skip_bound

    design = design_from_items(store.load_items(project_id), stratify_by=None)
    for _ in range(6):
        submit(store, project_id, next_item(design, queue_state(store, project_id), 0), BINARY, "Correct", "ann")
    graded = store.graded_positions(project_id)
    result = current_estimate(design, graded)
    grades = store.grades(project_id)
    data = report(store.project(project_id), design, result, {"pool": ("pool.jsonl", b"abc")}, grades)
    assert data["estimate"]["grades"] == 6 and data["seed"] == 0
    assert data["inputs"]["pool"]["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert data["settings"]["scale"]["kind"] == "binary" and len(data["strata"]) == design.H
    text = report_markdown(data)
    assert "Estimated mean grade" in text and "| stratum |" in text
    assert text.count("| seed | 0 |") == 1  # the settings' seed is listed once, as the seed
    assert data["skips"] is None and "## Skips" not in text
    assert "Allocation: for stopping at planned looks on information" in text
    store.update_settings(project_id, {"budget_fixed": True, "planned_budget": 40})
    fixed = report(store.project(project_id), design, result, {"pool": ("pool.jsonl", b"abc")}, grades)
    assert "Allocation: for a budget fixed in advance of 40 grades" in report_markdown(fixed)
    assert fixed["stopping_rule"]["budget"] == 40 and not fixed["stopping_rule"]["met"]
    assert "Stopping: a budget fixed in advance. 6 of the 40 items of the budget fixed in advance graded." in (
        report_markdown(fixed)
    )
    skipped = next(p for p in range(design.N) if p not in graded)
    skips = skip_bound(design, list(graded), list(graded.values()), [skipped])
    with_skips = report(store.project(project_id), design, result, {"pool": ("pool.jsonl", b"abc")}, grades, skips)
    assert with_skips["skips"]["skipped"] == 1
    low, high = (
        with_skips["skips"]["estimate_if_all_skipped_were_0"],
        with_skips["skips"]["estimate_if_all_skipped_were_1"],
    )
    assert low < high and "## Skips" in report_markdown(with_skips)
    path = estimate_path(design, list(graded), list(graded.values()), points=3)
    assert (
        path["grades"].max() == 6 and path["grades"].min() >= design.H
    )  # no estimate before every stratum has a grade
    assert (path["ci_low"] <= path["estimate"]).all() and (path["estimate"] <= path["ci_high"]).all()
    assert path["anytime_low"].isna().all()  # drawn only with the stopping rule's interval
    anytime = anytime_interval(design, list(graded), list(graded.values()), 40)
    drawn = estimate_path(design, list(graded), list(graded.values()), points=3, anytime=anytime).iloc[-1]
    assert (drawn["anytime_low"], drawn["anytime_high"]) == (anytime.low, anytime.high)  # the headline's interval


def test_markdown_images_in_item_text_fetch_nothing_and_external_images_are_off_by_default():
    item = {
        "id": "q ![i](http://a/id.png)",
        "prompt": "![p](http://a/p.png)",
        "response": "![r][ref]\n\n[ref]: http://a/r.png",
        "reference": "![f](http://a/f.png)",
        "image": "https://a/i.png",
    }
    view = grader_view(item, {"show_reference": True})
    assert not any(has_image(view[k]) for k in ("id", "prompt", "response", "reference"))
    assert view["image"] == "" and "external images are off" in view["image_note"]
    assert grader_view(item, {"external_images": True})["image"] == "https://a/i.png"  # an admin turned them on
