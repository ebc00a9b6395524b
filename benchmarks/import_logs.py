"""Benchmark importing an lm-evaluation-harness samples file against loading the same content as a JSONL pool.

    python benchmarks/import_logs.py [--records 10000] [--repeats 9] [--runs 3]

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
CPU time, the three interleaved, each after a full garbage collection. Goal: the import takes at most 1.5 times loading the same content
as JSONL.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
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


def cpu_seconds(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median process CPU time of each run, the runs interleaved (a busier spell of the machine slows all of
    them alike), each after a full garbage collection (none pays for the garbage of the one before)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--runs", type=int, default=3, help="independent runs, each a median of --repeats")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "samples_arith_2026-01-01T00-00-00.jsonl"
        lm_eval_file(source, args.records)
        inputs = load(str(source))
        pool = inputs.pool.copy()
        pool["samples"] = inputs.samples.groupby("id", sort=False)["sample"].agg(list).reindex(pool["id"]).tolist()
        same = Path(tmp) / "pool.jsonl"
        pool.to_json(same, orient="records", lines=True, force_ascii=False)
        runs = [
            cpu_seconds(
                {
                    "imported": lambda: load(str(source)),
                    "table": lambda: read_table(str(source)),
                    "plain": lambda: load_inputs(str(same)),
                },
                args.repeats,
            )
            for _ in range(args.runs)
        ]
        sizes = (source.stat().st_size, same.stat().st_size)
    ratios = [run["imported"] / run["table"] for run in runs]
    rows = "\n".join(
        f"| {number} | {run['imported']:.2f} s | {run['table']:.2f} s | {run['plain']:.2f} s | "
        f"**{run['imported'] / run['table']:.2f}x** | {run['imported'] / run['plain']:.2f}x |"
        for number, run in enumerate(runs, start=1)
    )
    verdict = "met in every run" if max(ratios) <= GOAL else "NOT met in every run"
    text = f"""# Importing eval logs

Written by `python benchmarks/import_logs.py --records {args.records} --runs {args.runs}` on {platform.machine()},
{os.cpu_count()} CPUs (shared with other work). Process CPU time, median of {args.repeats} repeats per run, the three
loads interleaved, each after a full garbage collection.

- import: an lm-eval samples file, {args.records:,} documents x 5 answers ({sizes[0] / 1e6:.1f} MB), imported
  (`core.inputs.readers.load`);
- table: the same file read as a plain JSONL table (`core.inputs.tables.read_table`);
- pool: the pool it gives, as a JSONL pool ({sizes[1] / 1e6:.1f} MB, `core.inputs.io.load_inputs`).

| run | import | table | pool | import / table | import / pool |
|---|---|---|---|---|---|
{rows}

Goal: the import takes at most {GOAL}x reading the same file as JSONL; {verdict} (highest
{max(ratios):.2f}x).
"""
    (HERE / "import_logs.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
