"""The demo project's labelling rule (scripts/build_demo.py) and the consistency of the committed data/demo files."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from core.inputs.io import load_inputs

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


def load_script():
    spec = importlib.util.spec_from_file_location("build_demo", ROOT / "scripts" / "build_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_demo = load_script()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("answer", "references", "expected"),
    [
        ("Paris", ["Paris"], True),
        ("The capital of France is PARIS.", ["Paris"], True),
        ("Parisian", ["Paris"], False),  # whole words only
        ("Mexico City", ["Mexico City"], True),
        ("Mexico", ["Mexico City"], False),
        ("3 * 60 = 180 minutes", ["180"], True),  # a number reference is the answer's last number
        ("81 / 9 = 10", ["9", "nine"], False),
        ("A spider has 28 legs", ["8"], False),
        ("eight legs", ["8", "eight"], True),  # an alternative counts
        ("1,000 metres", ["1000"], True),
        ("4.0", ["4"], True),
        ("The Renaissance began in the 14th century.", ["14th"], True),
        ("", ["Paris"], False),
    ],
)
def test_matches(answer, references, expected):
    assert build_demo.matches(answer, references) is expected


def test_a_hand_correction_overrides_the_match_only_for_the_answer_that_was_read():
    (item_id, response), label = next(iter(build_demo.CORRECTIONS.items()))
    assert build_demo.grade(item_id, response, ["Pacific"]) == label
    assert build_demo.grade(item_id, "Pacific", ["Pacific"]) == 1


def test_the_committed_demo_files_agree_with_each_other():
    questions = read_jsonl(DEMO / "questions.jsonl")
    pool = read_jsonl(DEMO / "pool.jsonl")
    target = {row["id"]: row["sample"] for row in read_jsonl(DEMO / "target.jsonl")}
    assert [q["id"] for q in questions] == [row["id"] for row in pool]
    assert all(target[item_id] == response for item_id, response in build_demo.CORRECTIONS)  # none stale
    assert len(questions) >= 300 and len({q["question"] for q in questions}) == len(questions)
    for question, row in zip(questions, pool):
        assert row["prompt"] == question["question"] and row["reference"] == question["reference"]
        assert row["response"] == target[row["id"]]
        assert row["label"] == build_demo.grade(
            row["id"], row["response"], [question["reference"], *question["alternatives"]]
        )
    for samples in ("samples.jsonl", "samples-t0.5.jsonl"):
        inputs = load_inputs(DEMO / "pool.jsonl", DEMO / samples)
        assert inputs.without_samples == []
        assert set(Counter(inputs.samples["id"]).values()) == {8}
        assert (inputs.samples["logprob"] <= 0).all()
    labels = [row["label"] for row in pool]
    assert 0.2 < sum(labels) / len(labels) < 0.8  # the small model is sometimes right, sometimes wrong
