import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.surrogate.prepare import SCORE_COLUMNS, prepare_items, target_answers


@dataclass
class FakeInputs:
    """Shaped like core.inputs.io.Inputs."""

    pool: pd.DataFrame
    samples: pd.DataFrame
    without_samples: list[str] = field(default_factory=list)


def make_inputs(pool: list[dict], samples: list[tuple]) -> FakeInputs:
    frame = pd.DataFrame(
        samples, columns=["id", "sample", "logprob"][: len(samples[0])] if samples else ["id", "sample"]
    )
    if "logprob" not in frame:
        frame["logprob"] = np.nan
    frame["surrogate"] = ""
    pool_frame = pd.DataFrame(pool)
    without = [i for i in pool_frame["id"] if i not in set(frame["id"])]
    return FakeInputs(pool_frame, frame, without)


def test_hand_computed_paris():
    inputs = make_inputs(
        [{"id": "q1", "prompt": "Capital of France?", "response": "It is Paris.", "answer": "Paris"}],
        [("q1", "Paris"), ("q1", "paris."), ("q1", "Lyon")],
    )
    item = prepare_items(inputs, min_stratum_size=1).iloc[0]
    assert item["n_samples"] == 3
    assert item["n_clusters"] == 2
    assert item["semantic_entropy"] == pytest.approx(0.6365, abs=1e-4)
    assert item["agreement"] == pytest.approx(2 / 3)
    assert math.isnan(item["semantic_entropy_weighted"])


def test_pool_order_columns_and_items_without_samples():
    pool = [
        {"id": "b", "prompt": "p", "response": "x", "topic": "t1"},
        {"id": "a", "prompt": "p", "response": "y", "topic": "t2"},
        {"id": "c", "prompt": "p", "response": "z", "topic": "t3"},
    ]
    inputs = make_inputs(pool, [("a", "y"), ("a", "y"), ("b", "x"), ("b", "w")])
    items = prepare_items(inputs, min_stratum_size=1)
    assert items["id"].tolist() == ["b", "a", "c"]
    assert {"topic", *SCORE_COLUMNS} <= set(items.columns)
    assert items.set_index("id")["agreement"].to_dict()["a"] == 1.0
    c = items.set_index("id").loc["c"]
    assert c["n_samples"] == 0 and c["n_clusters"] == 0
    assert math.isnan(c["semantic_entropy"]) and math.isnan(c["agreement"])
    assert c["stratum"] == items["stratum"].max()
    assert (items["stratum"] == c["stratum"]).sum() == 1


def test_answer_preferred_over_response_when_present():
    pool = pd.DataFrame({"response": ["long text 18", "Lyon"], "answer": ["18", ""]})
    assert target_answers(pool) == ["18", "Lyon"]


def test_weighted_entropy_uses_logprobs():
    inputs = make_inputs(
        [{"id": "q", "prompt": "p", "response": "a"}],
        [("q", "a", -0.1), ("q", "b", -5.0)],
    )
    item = prepare_items(inputs, min_stratum_size=1).iloc[0]
    assert 0 < item["semantic_entropy_weighted"] < item["semantic_entropy"] == pytest.approx(math.log(2))


def test_unknown_backend_is_an_input_error():
    inputs = make_inputs([{"id": "q", "prompt": "p", "response": "a"}], [("q", "a")])
    with pytest.raises(InputError, match="unknown backend"):
        prepare_items(inputs, backend="magic")


def test_gsm8k_exact_strata_track_correctness(gsm8k):
    pool = pd.read_json(gsm8k[0], lines=True, dtype={"id": str, "answer": str, "reference": str})
    samples = pd.read_json(gsm8k[1], lines=True, dtype={"id": str, "sample": str})
    samples["logprob"] = np.nan
    items = prepare_items(FakeInputs(pool, samples))
    assert len(items) == len(pool)
    accuracy = items.groupby("stratum")["label"].mean()
    # the lowest-entropy stratum is the most often right, the highest the least
    assert accuracy.iloc[0] > 0.9 > accuracy.iloc[-1]
    assert np.corrcoef(items["agreement"], items["label"])[0, 1] > 0.5


def run_prepare(*argv: str) -> int:
    import argparse

    from core.cli import prepare

    parser = argparse.ArgumentParser()
    prepare.add_arguments(parser)
    return prepare.run(parser.parse_args(list(argv)))


def write_jsonl(path, records):
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_cli_hand_computed_case_from_files(tmp_path, capsys):
    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q1", "prompt": "Capital of France?", "response": "Paris"}])
    samples = write_jsonl(
        tmp_path / "samples.jsonl",
        [{"id": "q1", "sample": s, "logprob": -1.0} for s in ["Paris", "paris.", "Lyon"]],
    )
    out = tmp_path / "items.csv"
    assert run_prepare("--pool", pool, "--samples", samples, "--out", str(out), "--min-stratum-size", "1") == 0
    row = pd.read_csv(out).iloc[0]
    assert row["n_clusters"] == 2 and row["agreement"] == pytest.approx(2 / 3)
    assert row["semantic_entropy"] == pytest.approx(0.6365, abs=1e-4)
    assert row["semantic_entropy_weighted"] == pytest.approx(0.6365, abs=1e-4)  # equal likelihoods
    assert "1 items, 1 with samples, 0 without samples" in capsys.readouterr().out


def test_cli_truthfulqa(truthfulqa, tmp_path, capsys):
    out = tmp_path / "items.csv"
    assert run_prepare("--pool", str(truthfulqa[0]), "--samples", str(truthfulqa[1]), "--out", str(out)) == 0
    items = pd.read_csv(out)
    assert {"id", "n_samples", "n_clusters", "semantic_entropy", "agreement", "stratum"} <= set(items.columns)
    assert "semantic_entropy_weighted" not in items.columns  # no log-likelihoods in this pool
    assert 2 <= items["stratum"].nunique() <= 5  # agreement (the default) has ties: strata may merge
    printed = capsys.readouterr().out
    assert "7 without samples" in printed and "(no samples)" in printed


@pytest.mark.parametrize(
    ("out", "options", "message"),
    [
        ("items.xlsx", [], "output format"),
        ("items.csv", ["--strata", "0"], "number of strata"),
        ("items.csv", ["--model", "m"], "no model"),
        ("items.csv", ["--backend", "embedding", "--threshold", "2"], "threshold"),
    ],
)
def test_cli_bad_options_are_input_errors(tmp_path, out, options, message):
    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q", "prompt": "p", "response": "r", "samples": ["r", "s"]}])
    with pytest.raises(InputError, match=message):
        run_prepare("--pool", pool, "--out", str(tmp_path / out), *options)
    assert not (tmp_path / out).exists()


def test_options_reach_stratification_and_progress_is_reported():
    pool = [{"id": f"q{i}", "prompt": "p", "response": "a"} for i in range(6)]
    samples = [(f"q{i}", s) for i in range(6) for s in (["a", "a"] if i < 3 else ["a", "b"])]
    calls = []
    items = prepare_items(
        make_inputs(pool, samples),
        n_strata=2,
        stratify_by="agreement",
        min_stratum_size=1,
        progress=lambda d, t: calls.append((d, t)),
    )
    assert items["stratum"].tolist() == [0, 0, 0, 1, 1, 1]
    done, total = calls[-1]
    assert done == total > 0  # work done over the distinct uncached items
    merged = prepare_items(make_inputs(pool, samples), n_strata=2, min_stratum_size=4)
    assert merged["stratum"].nunique() == 1


def test_entry_point_reports_bad_input_on_one_line_with_exit_status_2(tmp_path, capsys):
    from core.cli import main

    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q", "prompt": "p", "response": "r"}])
    assert main(["prepare", "--pool", pool, "--out", str(tmp_path / "items.txt")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error:") and "items.txt" in error and "\n" not in error
    assert main(["prepare", "--pool", pool, "--out", str(tmp_path / "items.csv")]) == 0


def test_cli_refuses_an_output_it_cannot_write_before_preparing(tmp_path, monkeypatch):
    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q", "prompt": "p", "response": "r", "samples": ["r"]}])
    (tmp_path / "items.csv").mkdir()

    def prepare_from_args(*_):
        raise AssertionError("prepared although the output cannot be written")

    monkeypatch.setattr("core.cli.prepare.prepare_from_args", prepare_from_args)
    with pytest.raises(InputError, match=r"cannot write the items table \(it is a folder\)"):
        run_prepare("--pool", pool, "--out", str(tmp_path / "items.csv"))


def test_cli_makes_the_output_folder(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q", "prompt": "p", "response": "r", "samples": ["r"]}])
    assert run_prepare("--pool", pool, "--out", str(tmp_path / "new" / "items.csv")) == 0
    assert pd.read_csv(tmp_path / "new" / "items.csv")["id"].tolist() == ["q"]


def test_chunked_preparation_equals_one_chunk_and_reports_every_item(monkeypatch, tmp_path):
    from pathlib import Path

    from core.inputs.io import load_inputs
    from core.surrogate import prepare

    data = Path(__file__).parent / "data" / "app"
    inputs = load_inputs(data / "pool.jsonl", data / "samples.jsonl")
    whole = prepare_items(inputs, backend="exact", cache_dir=tmp_path / "one")
    monkeypatch.setattr(prepare, "CHUNK_ITEMS", 7)  # 40 items in 6 chunks
    reports = []
    chunked = prepare_items(
        inputs,
        backend="exact",
        cache_dir=tmp_path / "chunked",
        progress=lambda done, total: reports.append((done, total)),
    )
    pd.testing.assert_frame_equal(chunked, whole)
    assert reports[-1] == (len(whole), len(whole))
    assert [done for done, _ in reports] == sorted(done for done, _ in reports)  # never backwards
