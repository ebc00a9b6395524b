"""`activegrade projects create` with a rubric (--criteria, --primary-criterion, --allocate-for): the project's
settings hold it; a bad file is named with the criterion's row and the fix, exit status 2, nothing created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import COMMANDS, main
from core.errors import InputError
from core.scales import LIKERT
from core.store import Store

DATA = Path(__file__).parent / "data" / "app"
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the final answer right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "safe", "scale": {"kind": "custom", "labels": [["unsafe", 0], ["safe", 1]]}, "required": False},
]


@pytest.fixture
def create(monkeypatch, tmp_path):
    """create(*options) -> exit status of `projects create Rubric --pool POOL *options` on a fresh database."""
    monkeypatch.setitem(COMMANDS, "projects", "Create a project.")  # listed there once core/cli/__init__.py has it
    url = f"sqlite:///{tmp_path / 'cli.db'}"

    def run(*options: str) -> int:
        return main(["projects", "create", "Rubric", "--pool", str(DATA / "pool.jsonl"), "--db-url", url, *options])

    run.store, run.url = Store.open(url), url
    return run


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_json_rubric_is_stored_in_the_projects_settings(create, tmp_path, capsys):
    criteria = write(tmp_path, "rubric.json", json.dumps(CRITERIA))
    settings = write(tmp_path, "settings.json", json.dumps({"n_strata": 3, "guidelines": "Read it all."}))
    options = ["--criteria", criteria, "--primary-criterion", "helpful", "--allocate-for", "all"]
    assert create(*options, "--settings", settings, "--json", "-") == 0
    report = json.loads(capsys.readouterr().out)
    project = create.store.project(report["id"])
    assert (report["name"], project.name) == ("Rubric", "Rubric")
    stored = project.settings
    assert [c["name"] for c in stored.criteria] == ["correct", "helpful", "safe"]
    assert stored.criteria[1]["scale"] == LIKERT.to_settings()  # the scale stored whole, as the page stores it
    assert (stored.primary_criterion, stored.allocate_for, stored.n_strata) == ("helpful", "all", 3)
    assert stored.guidelines == "Read it all." and stored.rubric.criterion("safe").required is False


def test_a_csv_table_gives_the_same_rubric(create, tmp_path):
    table = "name,scale,labels,guidelines,required\ncorrect,binary,,Is the final answer right?,\n"
    table += "helpful,likert,,,yes\nsafe,custom,unsafe = 0; safe = 1,,no\n"
    assert create("--criteria", write(tmp_path, "rubric.csv", table)) == 0
    (project,) = create.store.projects()
    assert project.settings.rubric.names == ("correct", "helpful", "safe")
    assert project.settings.primary_criterion == "" and project.settings.design_criterion == "correct"


@pytest.mark.parametrize(
    ("name", "text", "options", "message"),
    [
        (
            "rubric.json",
            json.dumps([CRITERIA[0], {"name": "correct"}]),
            [],
            "rubric.json, row 2: criterion 'correct' appears twice. Fix: give every criterion its own name",
        ),
        (
            "rubric.csv",
            "name,scale,labels\ncorrect,binary,\nsafe,custom,unsafe = 0; safe = 2\n",
            [],
            "rubric.csv, row 2: criterion 'safe', label 2: value 2.0 of 'safe' is not in [0, 1]. Fix: use a number",
        ),
        ("rubric.json", json.dumps(CRITERIA), ["--primary-criterion", "safe"], "rubric.json: primary criterion 'safe'"),
        ("rubric.json", json.dumps(CRITERIA), ["--primary-criterion", "nope"], "'nope' is not one of correct, helpful"),
        ("rubric.json", "[{", [], "rubric.json: not JSON"),
    ],
)
def test_a_bad_rubric_file_names_the_file_the_row_and_the_fix(create, tmp_path, capsys, name, text, options, message):
    assert create("--criteria", write(tmp_path, name, text), *options) == 2
    err = capsys.readouterr().err
    assert message in err and "Fix:" in err and "Traceback" not in err
    assert create.store.projects() == []


def test_rubric_options_without_criteria_are_refused(create, capsys):
    assert create("--primary-criterion", "helpful") == 2
    assert (
        "--primary-criterion without --criteria. Fix: give the rubric with --criteria FILE" in capsys.readouterr().err
    )
    assert create.store.projects() == []


def test_a_bad_settings_file_is_named(create, tmp_path, capsys):
    assert create("--settings", write(tmp_path, "settings.json", '{"n_strata": 0}')) == 2
    assert "settings.json: setting n_strata = 0 is not valid. Fix: use 1 to 50 strata" in capsys.readouterr().err
    assert create("--settings", write(tmp_path, "settings.json", '{"colour": "red"}')) == 2
    assert "settings.json: unknown setting colour" in capsys.readouterr().err
    assert create("--settings", write(tmp_path, "settings.json", '{"n_strata": 3, "scale": 5}')) == 2
    err = capsys.readouterr().err
    assert "settings.json: the scale 5 has the wrong shape. Fix:" in err and "Traceback" not in err
    assert create.store.projects() == []


def test_a_byte_order_mark_is_dropped_from_the_rubric_and_the_settings(create, tmp_path):
    """Excel's "CSV UTF-8" and Notepad write a byte-order mark: the rubric's first column read as '\\ufeffname'
    ("name the columns name, ...": it was), the settings file as not JSON (a new user's review)."""
    table = "\ufeffname,scale,labels,guidelines,required\ncorrect,binary,,Is it right?,\nhelpful,likert,,,\n"
    settings = write(tmp_path, "settings.json", '\ufeff{"n_strata": 3}')
    assert create("--criteria", write(tmp_path, "rubric.csv", table), "--settings", settings) == 0
    (project,) = create.store.projects()
    assert project.settings.rubric.names == ("correct", "helpful") and project.settings.n_strata == 3


def test_columns_are_mapped_on_the_command_line_and_every_missing_one_is_named(create, tmp_path, capsys):
    """`projects create` had no --columns, and the error named one missing column a run, saying to rename it."""
    rows = [json.loads(line) for line in (DATA / "pool.jsonl").read_text().splitlines()]
    renamed = [{"qid": r["id"], "question": r["prompt"], "answer_text": r["response"]} for r in rows]
    pool = write(tmp_path, "custom.jsonl", "\n".join(json.dumps(r) for r in renamed))
    main_args = ["projects", "create", "Custom", "--pool", pool, "--db-url", f"sqlite:///{tmp_path / 'cli.db'}"]
    assert main(main_args) == 2
    err = capsys.readouterr().err
    assert "required columns are missing: id, prompt, response" in err and "columns setting id=qid" in err, err
    assert main([*main_args, "--columns", "id=qid,prompt=question,response=answer_text"]) == 0
    (project,) = create.store.projects()
    assert project.settings.columns == "id=qid,prompt=question,response=answer_text"
    assert main([*main_args[:2], "Other", *main_args[3:], "--columns", "id"]) == 2
    assert "--columns" in capsys.readouterr().err


def test_a_project_named_by_a_number_is_refused_and_a_number_is_an_id(create, tmp_path, capsys):
    """A project named "2" took `export 2` and `users assign ann 2` from project 2, exit status 0 (a new user's
    review): such a name is refused, and a number names the project of that id."""
    from core.cli.projects import find_project

    assert create() == 0
    assert main(["projects", "create", "2", "--pool", str(DATA / "pool.jsonl"), "--db-url", create.url]) == 2
    assert "the project name '2' is a number" in capsys.readouterr().err
    (first,) = create.store.projects()
    assert find_project(create.store, str(first.id)).id == first.id
    with pytest.raises(InputError, match="no project '²'"):  # a digit no int() reads: it raised ValueError
        find_project(create.store, "²")


def test_a_name_that_differs_from_another_only_in_case_or_spaces_is_refused(create, capsys):
    """ "gsm8k 300" beside "GSM8K 300" wrote the same default export file, the second over the first (a new
    user's review)."""
    assert create() == 0
    pool = str(DATA / "pool.jsonl")
    for alike in ("rubric", "RUBRIC ", "Rubric  ", "rubric!", "(Rubric)"):
        assert main(["projects", "create", alike, "--pool", pool, "--db-url", create.url]) == 2
        assert "differs from only in case, spaces or punctuation" in capsys.readouterr().err or alike == "Rubric  "
    assert [p.name for p in create.store.projects()] == ["Rubric"]
