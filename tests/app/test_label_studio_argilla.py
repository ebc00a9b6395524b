"""The round trip with Label Studio (tasks and labeling config out, its JSON export of annotations back as
grades, graders kept, audited) and the Argilla records export, read back with Hugging Face datasets."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import datasets
import numpy as np
import pytest

from core.cli import main
from core.scales import BINARY
from core.services import audit
from core.services.reservations import submit


def _annotated(tasks: list[dict]) -> list[dict]:
    """Label Studio's JSON export of the tasks after three annotators (as labelstud.io/guide/task_format gives
    it): ids from Label Studio, completed_by an id or an object, one cancelled annotation."""
    exported = []
    for n, task in enumerate(tasks[:6], start=1):
        label = "Correct" if n % 2 else "Incorrect"
        annotations = [
            {
                "id": 100 + n,
                "result": [
                    {"from_name": "grade", "to_name": "response", "type": "choices", "value": {"choices": [label]}},
                    *(
                        [{"from_name": "comment", "to_name": "response", "type": "textarea", "value": {"text": ["ok"]}}]
                        if n == 1
                        else []
                    ),
                ],
                "was_cancelled": False,
                "ground_truth": False,
                "lead_time": 4.5,
                "completed_by": {"id": 1, "email": "ann@example.org", "first_name": "", "last_name": ""},
            }
        ]
        if n <= 2:
            annotations.append({"id": 200 + n, "result": [], "was_cancelled": True, "completed_by": 2})
        if n == 3:
            result = [
                {"from_name": "grade", "to_name": "response", "type": "choices", "value": {"choices": ["Correct"]}}
            ]
            annotations.append({"id": 300, "result": result, "was_cancelled": False, "lead_time": 2, "completed_by": 7})
        exported.append({"id": n, "project": 1, "data": task["data"], "annotations": annotations, "predictions": []})
    return exported


def test_label_studio_round_trip_keeps_the_graders_and_is_audited(store, project_id, db_url, tmp_path, capsys):
    tasks_file, config_file = tmp_path / "tasks.json", tmp_path / "config.xml"
    assert (
        main(["export", str(project_id), "--db-url", db_url, "--format", "label-studio", "--out", str(tasks_file)]) == 0
    )
    assert (
        main(
            [
                "export",
                str(project_id),
                "--db-url",
                db_url,
                "--format",
                "label-studio-config",
                "--out",
                str(config_file),
            ]
        )
        == 0
    )
    tasks = json.loads(tasks_file.read_text())
    items = store.load_items(project_id)
    assert len(tasks) == 40 and "id" not in tasks[0]  # Label Studio's own field
    # in the design's order, which Label Studio keeps: every first stretch a stratified sample in proportion
    at = {item_id: position for position, item_id in enumerate(items["id"])}
    positions = [at[t["data"]["item_id"]] for t in tasks]
    assert sorted(positions) == list(range(40)) and positions != list(range(40))
    first = positions[0]
    assert tasks[0]["data"] == {k: items.loc[first, k] for k in ("prompt", "response", "reference")} | {
        "item_id": items.loc[first, "id"],
        "activegrade_project": project_id,
    }
    strata, sizes = items["stratum"].to_numpy(), items["stratum"].value_counts().sort_index().to_numpy()
    for n in range(len(sizes), 41):
        counts = np.bincount(strata[positions[:n]], minlength=len(sizes))
        assert np.all(np.abs(counts - n * sizes / 40) < 2), (n, counts)
    config = ET.fromstring(config_file.read_text())
    assert [c.get("value") for c in config.iter("Choice")] == ["Correct", "Incorrect"]
    assert {t.get("value") for t in config.iter("Text")} == {"$prompt", "$reference", "$response"}  # the data's keys

    exported = tmp_path / "project-1-at-2026-12-03.json"
    exported.write_text(json.dumps(_annotated(tasks)))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(exported)]) == 0
    assert "imported 7 grades by 2 graders" in capsys.readouterr().out
    grades = store.grades(project_id)
    assert sorted(grades["grader"].unique()) == ["label-studio user 1", "label-studio user 7"]
    graded = grades[(grades["position"] == positions[0])].iloc[0]
    assert graded["label"] == "Correct" and graded["comment"] == "ok" and graded["seconds"] == 4.5
    assert grades.loc[grades["position"] == positions[1], "label"].tolist() == ["Incorrect"]
    event = audit.trail(store, project_id).iloc[-1]
    assert event["action"] == "grades_imported" and event["actor"] == "cli" and event["detail"]["grades"] == 7

    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(exported), "-q"]) == 0
    assert len(store.grades(project_id)) == 7  # imported again: nothing recorded twice
    edited = _annotated(tasks)
    edited[0]["annotations"][0]["result"][0]["value"]["choices"] = ["Incorrect"]  # changed in Label Studio since
    exported.write_text(json.dumps(edited))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(exported)]) == 0
    said = capsys.readouterr().out  # the change said, not counted as a new grade
    assert "imported 0 grades, changed 1 grade given before (the old ones kept, retracted) by 2 graders" in said
    quick = _annotated(tasks)  # Label Studio's quick export: each annotator's id alone, no e-mail
    for task in quick:
        for annotation in task["annotations"]:
            if isinstance(annotation["completed_by"], dict):
                annotation["completed_by"] = annotation["completed_by"]["id"]
    exported.write_text(json.dumps(quick))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(exported)]) == 0
    assert "imported 0 grades, changed 1 grade" in capsys.readouterr().out  # the same graders: none twice
    assert store.grades(project_id)["grader"].nunique() == 2


def test_the_tasks_follow_the_projects_reference_setting(store, project_id, db_url, tmp_path):
    """A project that hides the reference from its graders sent it to Label Studio's (and Argilla's) anyway."""
    store.update_settings(project_id, {"show_reference": False})
    tasks_file, config_file = tmp_path / "tasks.json", tmp_path / "config.xml"
    for fmt, out in (("label-studio", tasks_file), ("label-studio-config", config_file)):
        assert main(["export", str(project_id), "--db-url", db_url, "--format", fmt, "--out", str(out)]) == 0
    assert all("reference" not in t["data"] for t in json.loads(tasks_file.read_text()))
    assert {t.get("value") for t in ET.fromstring(config_file.read_text()).iter("Text")} == {"$prompt", "$response"}
    out = tmp_path / "records.parquet"
    assert main(["export", str(project_id), "--db-url", db_url, "--format", "argilla", "--out", str(out), "-q"]) == 0
    assert "reference" not in datasets.load_dataset("parquet", data_files=str(out), split="train").column_names


def test_a_failed_import_writes_nothing_and_says_which_task(store, project_id, db_url, tmp_path, capsys):
    """A long comment was checked only as its grade was written: the grades before it were imported, unaudited,
    and the error named neither the file nor the task."""
    items = store.load_items(project_id)
    exported = _annotated([{"data": {"item_id": str(i)}} for i in items["id"]])
    exported[3]["annotations"][0]["result"].append(
        {"from_name": "comment", "to_name": "response", "type": "textarea", "value": {"text": ["x" * 5_001]}}
    )
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(path)]) == 2
    said = capsys.readouterr().err
    assert (
        "the comment of task 4 (Label Studio id 4) (item 'q03') has 5,001 characters" in said and "export.json" in said
    )
    assert store.grades(project_id).empty


def test_a_lead_time_of_days_is_unknown_a_deleted_account_skipped_and_a_comment_read_as_stored(
    store, project_id, db_url, tmp_path, capsys
):
    """A second review against Label Studio 1.23.2: a comment ending in a newline was a change at every import
    (the grade service strips it), a deleted account's annotations (completed_by null) were imported under
    "label-studio user None", and the lead-time note came again with every import."""
    items = store.load_items(project_id)
    exported = _annotated([{"data": {"item_id": str(i)}} for i in items["id"]])
    exported[1]["annotations"][0]["lead_time"] = 30 * 86_400.0  # a task left open for a month
    exported[0]["annotations"][0]["result"][1]["value"]["text"] = ["wrong sum\n"]
    exported[2]["annotations"][1]["completed_by"] = None  # its annotator's account deleted in Label Studio
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(path)]) == 0
    said = capsys.readouterr().out
    assert "imported 6 grades" in said and "; 1 lead time over 7 days read as unknown" in said
    assert "; 1 annotation of a deleted Label Studio account skipped" in said
    grades = store.grades(project_id)
    assert grades.loc[grades["position"] == 1, "seconds"].isna().all() and grades["seconds"].notna().sum() == 5
    assert "label-studio user None" not in set(grades["grader"])
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(path)]) == 0
    again = capsys.readouterr().out  # nothing written: no change, no lead time to speak of
    assert "imported 0 grades by 1 grader" in again and "(6 already there)" in again and "lead time" not in again
    assert len(store.grades(project_id)) == 6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t[2]["annotations"][0]["result"][0]["value"].update(choices=["Maybe"]), "'Maybe' is not a label"),
        (lambda t: t[4]["data"].update(item_id="nope"), "task 5 (Label Studio id 5): item 'nope' is not in the"),
        (lambda t: t[1]["data"].pop("item_id"), "task 2 (Label Studio id 2) has no data.item_id"),
        (lambda t: t[0]["annotations"][0].update(lead_time="abc"), "lead_time 'abc' is not a number of seconds"),
        (lambda t: t[3]["annotations"].append(t[3]["annotations"][0]), "has two annotations by label-studio user 1"),
        (lambda t: t[0]["data"].update(activegrade_project=99), "the tasks were exported from project 99, not from"),
        (lambda t: t.append({"id": 9, "item_id": "q01", "annotator": 1}), "a row of Label Studio's JSON-MIN export"),
        (lambda t: t[1]["annotations"].append("x"), "task 2 (Label Studio id 2) (item 'q01'): an annotation is not"),
        (lambda t: t[0]["data"].update(activegrade_project=[1]), "activegrade_project [1] is not a project's id"),
        (lambda t: t[0]["data"].update(activegrade_project="1"), "activegrade_project '1' is not a project's id"),
    ],
)
def test_a_bad_annotation_is_named_and_nothing_is_imported(
    store, project_id, db_url, tmp_path, capsys, change, message
):
    items = store.load_items(project_id)
    exported = _annotated([{"data": {"item_id": str(i)}} for i in items["id"]])
    change(exported)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(path)]) == 2
    assert message in capsys.readouterr().err and store.grades(project_id).empty


def test_argilla_records_read_with_datasets(store, project_id, db_url, tmp_path, capfd):
    submit(store, project_id, 0, BINARY, "Correct", "ann", seconds=2.0)
    submit(store, project_id, 0, BINARY, "Incorrect", "bob", seconds=2.0)
    submit(store, project_id, 3, BINARY, "Incorrect", "ann", seconds=2.0)
    out = tmp_path / "records.parquet"
    datasets.enable_progress_bars()  # as a fresh process has them
    assert main(["export", str(project_id), "--db-url", db_url, "--format", "argilla", "--out", str(out), "-q"]) == 0
    assert "Creating parquet" not in capfd.readouterr().err  # -q prints nothing: datasets' bar was on stderr
    records = datasets.load_dataset("parquet", data_files=str(out), split="train")
    assert len(records) == 40 and records.features["grade.responses"] == datasets.Sequence(datasets.Value("string"))
    first, fourth, second = records[0], records[3], records[1]
    assert first["id"] == "q00" and first["status"] == "completed"
    assert first["grade.responses"] == ["Correct", "Incorrect"] and first["grade.responses.users"] == ["ann", "bob"]
    assert first["grade.responses.status"] == ["submitted", "submitted"] and fourth["grade.responses"] == ["Incorrect"]
    assert second["status"] == "pending" and second["grade.responses"] == [] and second["prompt"].startswith("What")


def test_a_rubric_project_neither_sends_tasks_to_label_studio_nor_takes_its_annotations(
    store, project_id, db_url, tmp_path, capsys
):
    store.update_settings(
        project_id, {"criteria": [{"name": "correct"}, {"name": "helpful", "scale": {"kind": "likert"}}]}
    )
    out = tmp_path / "tasks.json"
    assert main(["export", str(project_id), "--db-url", db_url, "--format", "label-studio", "--out", str(out)]) == 2
    assert "asks a rubric of 2 criteria" in capsys.readouterr().err and not out.exists()
    items = store.load_items(project_id)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(_annotated([{"data": {"item_id": str(i)}} for i in items["id"]])))
    assert main(["import", str(project_id), "--db-url", db_url, "--label-studio", str(path)]) == 2
    assert "one label for one response" in capsys.readouterr().err and store.rubric_grades(project_id).empty
