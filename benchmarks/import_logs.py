"""Benchmark importing an lm-evaluation-harness samples file against loading the same content as a JSONL pool.

    python benchmarks/import_logs.py [--records 10000] [--repeats 5]

Writes benchmarks/import_logs.md. The lm-eval file has `--records` documents
in the shape lm-eval 0.4 writes for a chat model with `repeats: 5` (doc,
target, arguments with the chat messages, resps with 5 answers,
filtered_resps, filter, metrics, hashes, exact_match), each answer about 60
words. It is compared with loading the same content as JSONL, two ways:
the same file read as a plain JSONL table (`core.inputs.tables.read_table`: the
same bytes, parsed and checked, no import), and the pool the import gives
(id, prompt, response, reference, exact_match and the 4 repeats as a samples
list) written as a JSONL pool and loaded with every check
(`core.inputs.io.load_inputs`; a smaller file: lm-eval writes the prompt twice, the
first answer twice and hashes). Figures: median of `--repeats` runs, process
CPU time. Goal: the import takes at most 1.5 times loading the same content
as JSONL.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from core.inputs.io import load_inputs
from core.inputs.readers import load
from core.inputs.tables import read_table

HERE = Path(__file__).resolve().parent
GOAL = 1.5


def lm_eval_file(path: Path, n: int, seed: int = 0) -> None:
    """n documents in lm-eval 0.4's samples format, 5 answers each (generate_until, chat model)."""
    rng = np.random.default_rng(seed)
    words = np.array("the answer is a number that we find by adding both parts and then checking it again".split())
    with path.open("w", encoding="utf-8") as handle:
        for doc_id in range(n):
            question = f"Question {doc_id}: what is {doc_id} plus {doc_id % 97}?"
            answers = [" ".join(rng.choice(words, 60)) for _ in range(5)]
            record = {
                "doc_id": doc_id,
                "doc": {"id": f"q{doc_id}", "question": question, "answer": str(doc_id + doc_id % 97)},
                "target": str(doc_id + doc_id % 97),
                "arguments": {
                    "gen_args_0": {
                        "arg_0": [json.dumps([{"role": "user", "content": question}])],
                        "arg_1": {"until": ["\n"], "max_gen_toks": 256, "do_sample": True, "temperature": 1.0},
                    }
                },
                "resps": [answers],
                "filtered_resps": [answers[0]],
                "filter": "take-first",
                "metrics": ["exact_match"],
                "doc_hash": f"{doc_id:064x}",
                "prompt_hash": f"{doc_id + 1:064x}",
                "target_hash": f"{doc_id + 2:064x}",
                "exact_match": float(rng.random() < 0.5),
            }
            handle.write(json.dumps(record) + "\n")


def cpu_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "samples_arith_2026-01-01T00-00-00.jsonl"
        lm_eval_file(source, args.records)
        inputs = load(str(source))
        pool = inputs.pool.copy()
        pool["samples"] = inputs.samples.groupby("id", sort=False)["sample"].agg(list).reindex(pool["id"]).tolist()
        same = Path(tmp) / "pool.jsonl"
        pool.to_json(same, orient="records", lines=True, force_ascii=False)
        imported = cpu_seconds(lambda: load(str(source)), args.repeats)
        table = cpu_seconds(lambda: read_table(str(source)), args.repeats)
        plain = cpu_seconds(lambda: load_inputs(str(same)), args.repeats)
        sizes = (source.stat().st_size, same.stat().st_size)
    text = f"""# Importing eval logs

Written by `python benchmarks/import_logs.py --records {args.records}` on {platform.machine()}, {os.cpu_count()} CPUs
(shared with other work: process CPU time, median of {args.repeats} runs).

| what | file size | CPU time |
|---|---|---|
| lm-eval samples file, {args.records:,} documents x 5 answers, imported (`core.inputs.readers.load`) | {sizes[0] / 1e6:.1f} MB | {imported:.2f} s |
| the same file read as a plain JSONL table (`core.inputs.tables.read_table`) | {sizes[0] / 1e6:.1f} MB | {table:.2f} s |
| the pool it gives, as a JSONL pool (`core.inputs.io.load_inputs`) | {sizes[1] / 1e6:.1f} MB | {plain:.2f} s |

Import against the same file as JSONL: **{imported / table:.2f}x**; against the smaller
pool file: {imported / plain:.2f}x (goal: at most {GOAL}x).
"""
    (HERE / "import_logs.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
