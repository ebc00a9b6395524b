"""core.inputs.readers on real logs made by the real tools (tests/data/eval_logs, scripts/make_eval_logs.py): lm-eval
samples files, Inspect logs, HF datasets saved with save_to_disk; format detection, --columns, CLI, Projects."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.inputs.readers import detect, load, parse_columns
from core.inputs.readers.inspect_log import member_bytes
from core.services.project import create_project, start_preparation
from core.store import Store

LOGS = Path(__file__).resolve().parent / "data" / "eval_logs"
TASK = Path(__file__).resolve().parent / "data" / "evaltasks" / "arith.jsonl"
LM_TARGET = LOGS / "samples_arith.jsonl"
LM_REPEATS = LOGS / "samples_arith_repeats.jsonl"
QUESTIONS = [json.loads(line) for line in TASK.read_text().splitlines()]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- lm-evaluation-harness -----------------------------------------------------------------------------------


def test_lm_eval_target_file_is_the_pool():
    inputs = load(str(LM_TARGET), columns="label=exact_match")
    pool = inputs.pool
    assert pool["id"].tolist() == [str(i) for i in range(8)]
    assert pool["prompt"].iat[0] == "What is 12 + 7? Answer with the number only."  # the chat message's content
    assert pool["reference"].tolist() == [q["answer"] for q in QUESTIONS]
    records = lines(LM_TARGET)
    assert pool["response"].tolist() == [r["resps"][0][0] for r in records]
    assert pool["label"].tolist() == pool["exact_match"].tolist() == [r["exact_match"] for r in records]
    assert inputs.samples.empty  # one answer per document: no samples of its own


def test_lm_eval_own_repeats_after_the_first_answer_are_the_samples():
    inputs = load(str(LM_REPEATS))
    records = lines(LM_REPEATS)
    assert inputs.pool["response"].tolist() == [r["resps"][0][0] for r in records]
    by_id = inputs.samples.groupby("id")["sample"].agg(list)
    assert by_id["3"] == records[3]["resps"][0][1:]
    assert len(inputs.samples) == 2 * len(records)
    assert set(inputs.samples["surrogate"]) == {"samples_arith_repeats (repeats)"}


def test_lm_eval_second_file_gives_every_answer_as_samples():
    inputs = load(str(LM_TARGET), str(LM_REPEATS))
    assert len(inputs.samples) == 3 * 8 and not inputs.without_samples
    assert set(inputs.samples["surrogate"]) == {"samples_arith_repeats"}
    with pytest.raises(InputError, match="samples are given twice: the pool's own repeats"):
        load(str(LM_REPEATS), str(LM_REPEATS))


def test_lm_eval_record_without_resps_names_file_line_and_field(tmp_path):
    records = lines(LM_TARGET)
    del records[2]["resps"]
    path = tmp_path / "samples_arith_x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError) as error:
        load(str(path))
    assert str(error.value).startswith(f"{path}, row 3") and "the record has no 'resps' field" in str(error.value)


def test_lm_eval_keeps_the_first_filter_and_refuses_loglikelihood_records(tmp_path):
    records = lines(LM_TARGET)
    other = [dict(r, filter="strict-match", resps=[["other"]]) for r in records]
    path = tmp_path / "samples_two_filters.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records + other))
    assert load(str(path)).pool["response"].tolist() == [r["resps"][0][0] for r in records]
    records[0]["resps"] = [[[-1.5, False]], [[-0.2, True]]]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError, match=r"row 1.*'resps' holds no generated text"):
        load(str(path))


# --- Inspect AI ----------------------------------------------------------------------------------------------


def test_inspect_eval_log_is_the_pool():
    inputs = load(str(LOGS / "arith.eval"), columns="label=match")
    pool = inputs.pool.set_index("id")
    assert sorted(pool.index) == [q["id"] for q in QUESTIONS]
    assert pool.loc["q01", "prompt"] == "What is 12 + 7?"
    assert pool.loc["q01", "reference"] == "19"
    assert set(pool["label"]) <= {0.0, 1.0} and (pool["label"] == pool["match"]).all()
    assert pool["response"].str.len().gt(0).all()
    assert inputs.samples.empty


def test_inspect_json_log_reads_as_the_eval_log():
    eval_pool = load(str(LOGS / "arith.eval")).pool.set_index("id").sort_index()
    json_pool = load(str(LOGS / "arith.json")).pool.set_index("id").sort_index()
    assert detect(str(LOGS / "arith.json")) == "inspect"
    assert (json_pool["prompt"] == eval_pool["prompt"]).all()
    assert (json_pool["reference"] == eval_pool["reference"]).all()


def test_inspect_later_epochs_are_samples_and_another_log_gives_all_epochs():
    inputs = load(str(LOGS / "arith_epochs3.eval"))
    assert len(inputs.pool) == 8 and len(inputs.samples) == 16
    assert inputs.samples["surrogate"].str.endswith("(epochs 2+)").all()
    second = load(str(LOGS / "arith.eval"), str(LOGS / "arith_epochs3.eval"))
    assert len(second.samples) == 24 and not second.without_samples


def test_inspect_sample_without_output_names_file_sample_and_field(tmp_path):
    source = LOGS / "arith.eval"
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(broken, "w") as new:
        for name in old.namelist():
            data = member_bytes(str(source), old, name)  # Inspect's members are zstandard-compressed
            if name.startswith("samples/q03_epoch_1"):
                sample = json.loads(data)
                del sample["output"]
                data = json.dumps(sample).encode()
            new.writestr(name, data)
    with pytest.raises(InputError, match=r"broken.eval: sample 'q03' \(epoch 1\) has no 'output.choices\[0\].message'"):
        load(str(broken))


# --- Hugging Face datasets -----------------------------------------------------------------------------------


def test_hf_save_to_disk_folder_with_picked_columns():
    columns = "id=idx,prompt=instruction,response=output,reference=gold"
    inputs = load(str(LOGS / "hf_arith"), columns=columns)
    assert inputs.pool["id"].tolist() == [q["id"] for q in QUESTIONS]
    assert inputs.pool["prompt"].tolist() == [q["question"] for q in QUESTIONS]
    assert "judge_score" in inputs.pool.columns
    with pytest.raises(InputError, match=r"there is no column 'prompt_text'.*choose among idx, instruction"):
        load(str(LOGS / "hf_arith"), columns="id=idx,prompt=prompt_text")
    with pytest.raises(InputError, match="DatasetDict with the splits test"):
        load(str(LOGS / "hf_arith_dict"), columns=columns)
    assert len(load(str(LOGS / "hf_arith_dict" / "test"), columns=columns).pool) == 8


def test_hf_arrow_upload_and_parquet_file(tmp_path):
    arrow = next((LOGS / "hf_arith").glob("*.arrow"))
    columns = "id=idx,prompt=instruction,response=output"
    assert len(load((arrow.name, arrow.read_bytes()), columns=columns).pool) == 8
    parquet = tmp_path / "train-00000-of-00001.parquet"
    load(str(LOGS / "hf_arith"), columns=columns).pool.to_parquet(parquet)
    assert len(load(str(parquet)).pool) == 8


def test_column_choices_are_parsed_strictly():
    assert parse_columns(" prompt = instruction , label=score ") == {"prompt": "instruction", "label": "score"}
    with pytest.raises(InputError, match="is not TARGET=SOURCE"):
        parse_columns("prompt")
    with pytest.raises(InputError, match="chosen twice"):
        parse_columns("prompt=a,prompt=b")


# --- wiring ----------------------------------------------------------------------------------------------------


def test_cli_prepare_simulate_and_formats(tmp_path, capsys):
    out = tmp_path / "items.csv"
    argv = ["prepare", "--pool", str(LM_TARGET), "--samples", str(LM_REPEATS), "--out", str(out)]
    assert main([*argv, "--proxy", "exact_match"]) == 0
    assert "design proxy: exact_match" in capsys.readouterr().out
    items = pd.read_csv(out)
    assert len(items) == 8 and (items["n_samples"] == 3).all()
    sim = ["simulate", "--pool", str(LOGS / "arith.eval"), "--columns", "label=match", "--reps", "20"]
    assert main([*sim, "--budgets", "4"]) == 0
    assert main(["prepare", "--pool", str(LM_TARGET), "--format", "inspect", "--out", str(out)]) == 2
    assert "neither a .eval archive nor JSON" in capsys.readouterr().err


def test_project_from_an_inspect_log_upload(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    log = LOGS / "arith_epochs3.eval"
    settings = {"columns": "label=match", "proxy": "match"}
    pid = create_project(store, "Inspect", (log.name, log.read_bytes()), settings=settings, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    items = store.load_items(pid)
    assert len(items) == 8 and (items["n_samples"] == 2).all()


def test_human_grades_go_back_into_the_inspect_log_as_a_score():
    from core.exports.inspect_export import with_human_scores

    grades = pd.DataFrame(
        {
            "item": ["q01", "q02", "q02"],
            "grade": [1.0, 0.0, 1.0],
            "final_grade": [1.0, 0.5, 0.5],  # the mean of q02's two grades: no reviewer settled it
            "label": ["Correct", "Incorrect", "Correct"],
            "grader": ["ann", "ann", "bob"],
            "comment": ["ok", "", "fine"],
        }
    )
    for name in ("arith.eval", "arith.json"):
        log = (name, (LOGS / name).read_bytes())
        graded = load((name, with_human_scores(log, grades))).pool.set_index("id")
        assert graded.loc["q01", "human"] == 1.0 and graded.loc["q02", "human"] == 0.5
        assert graded["human"].isna().sum() == 6
        before = load(log).pool.set_index("id")
        assert (graded["match"] == before["match"]).all() and (graded["response"] == before["response"]).all()


def test_an_lm_eval_pool_whose_samples_match_no_response_says_how_to_compare_them(tmp_path, capsys):
    """An lm-eval pool of whole solutions, its samples a cheaper run's short answers: agreement 0 on every item,
    one stratum, and no word of it (a new user's review). It warns, naming the extracted answers to compare."""
    records = lines(LM_TARGET)
    for r in records:
        answer = r["resps"][0][0]
        r["resps"], r["filtered_resps"] = [[f"Let me work it out step by step. So the result is {answer}."]], [answer]
    target = tmp_path / "samples_arith_cot.jsonl"
    target.write_text("\n".join(json.dumps(r) for r in records))
    args = ["prepare", "--pool", str(target), "--samples", str(LM_REPEATS), "--backend", "exact", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "items.csv")]) == 0
    err = capsys.readouterr().err
    assert "agreement 0 on every item" in err and "answer=filtered_response" in err, err
    assert main([*args, "--columns", "answer=filtered_response", "--out", str(tmp_path / "mapped.csv")]) == 0
    assert "answer=filtered_response" not in capsys.readouterr().err  # the answers compared: no hint
    assert pd.read_csv(tmp_path / "mapped.csv")["agreement"].mean() > 0.5


def test_an_error_in_a_column_chosen_with_columns_names_the_users_own_column(tmp_path):
    """--columns label=final, then "column 'label'" where the file has no column label (a new user's review)."""
    pool = tmp_path / "pool.csv"
    pool.write_text("qid,question,model_output,final\na,Hi,Hello,18\n")
    with pytest.raises(InputError, match=r"row 2, column 'final': the label 18 is outside"):
        load(str(pool), columns="id=qid,prompt=question,response=model_output,label=final")
