"""How fast core.inputs.io.load_inputs reads and checks a 10,000-item pool with 100,000 samples.

The pool is built from ../shared/data/truthfulqa (items repeated under new
ids, 10 samples each with a log-likelihood) and written, in memory, in every
format and both sample layouts; each is loaded `--repeat` times and the best
wall time and process CPU time are kept. Two refused inputs are timed too:
an error in the very last CSV row (its line number is computed on error) and a
duplicate id in the last JSON line. Writes benchmarks/io_load.md.

    python benchmarks/io_load.py [--items 10000] [--samples 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import time
from pathlib import Path

import pandas as pd

from core.errors import InputError
from core.inputs.io import load_inputs

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared" / "data" / "truthfulqa"


def build(n_items: int, n_samples: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A pool of n_items and n_items * n_samples sample rows from the TruthfulQA files."""
    pool = pd.read_json(SHARED / "pool.jsonl", lines=True, dtype=False)
    samples = pd.read_json(SHARED / "samples.jsonl", lines=True, dtype=False)["sample"].tolist()
    rows = pool.iloc[[k % len(pool) for k in range(n_items)]].reset_index(drop=True)
    rows["id"] = [f"item-{k:05d}" for k in range(n_items)]
    long = pd.DataFrame(
        {
            "id": rows["id"].repeat(n_samples).to_numpy(),
            "sample": [samples[k % len(samples)] for k in range(n_items * n_samples)],
            "logprob": [-0.5 - (k % 7) for k in range(n_items * n_samples)],
            "surrogate": "surrogate-a",
        }
    )
    return rows, long


def encode(frame: pd.DataFrame, suffix: str) -> bytes:
    if suffix == ".jsonl":
        return frame.to_json(orient="records", lines=True, force_ascii=False).encode()
    if suffix == ".csv":
        return frame.to_csv(index=False).encode()
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def nested(pool: pd.DataFrame, samples: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """The pool with a list-valued `samples` column (a JSON string in CSV)."""
    lists = samples.drop(columns="id").to_dict(orient="records")
    grouped: dict[str, list] = {}
    for owner, element in zip(samples["id"], lists):
        grouped.setdefault(owner, []).append(element)
    column = [grouped.get(owner, []) for owner in pool["id"]]
    if suffix == ".csv":
        column = [json.dumps(value, ensure_ascii=False) for value in column]
    return pool.assign(samples=column)


def timed(pool: tuple[str, bytes], samples: tuple[str, bytes] | None, repeat: int) -> tuple[float, float, str]:
    """Best wall and CPU seconds over `repeat` loads, and the outcome."""
    best_wall = best_cpu = float("inf")
    outcome = ""
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            inputs = load_inputs(pool, samples)
            outcome = f"{len(inputs.pool):,} items, {len(inputs.samples):,} samples"
        except InputError as error:
            outcome = f"refused: {error.problem[:60]}"
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pool, samples = build(args.items, args.samples)
    cases = []
    for suffix in (".jsonl", ".csv", ".parquet"):
        cases.append(
            (
                f"pool{suffix} + samples{suffix}",
                ("pool" + suffix, encode(pool, suffix)),
                ("samples" + suffix, encode(samples, suffix)),
            )
        )
        cases.append(
            (
                f"pool{suffix} with a samples column",
                ("pool" + suffix, encode(nested(pool, samples, suffix), suffix)),
                None,
            )
        )
    bad_label = pool.assign(label=pool["label"].astype(str))
    bad_label.loc[len(pool) - 1, "label"] = "yes"
    cases.append(
        (
            "refused: bad label in the last CSV row",
            ("pool.csv", encode(bad_label, ".csv")),
            ("samples.csv", encode(samples, ".csv")),
        )
    )
    repeated = pool.copy()
    repeated.loc[len(pool) - 1, "id"] = repeated.loc[0, "id"]
    cases.append(
        (
            "refused: duplicate id in the last JSON line",
            ("pool.jsonl", encode(repeated, ".jsonl")),
            ("samples.jsonl", encode(samples, ".jsonl")),
        )
    )

    lines = [
        "# Loading inputs (core.inputs.io.load_inputs)",
        "",
        f"Written by `python benchmarks/io_load.py --items {args.items} --samples {args.samples} "
        f"--repeat {args.repeat}` on {platform.machine()}, {os.cpu_count()} CPUs shared with other work "
        f"(wall time is an upper bound, process CPU the cost), Python {platform.python_version()}, "
        f"pandas {pd.__version__}.",
        "",
        f"Pool: {args.items:,} TruthfulQA items under new ids, {args.samples} samples each "
        f"({args.items * args.samples:,} sample rows). Best of {args.repeat} loads, including every check.",
        "",
        "| input | size MB | wall s | CPU s | outcome |",
        "|---|---|---|---|---|",
    ]
    for title, pool_file, samples_file in cases:
        size = (len(pool_file[1]) + (len(samples_file[1]) if samples_file else 0)) / 1e6
        wall, cpu, outcome = timed(pool_file, samples_file, args.repeat)
        lines.append(f"| {title} | {size:.1f} | {wall:.2f} | {cpu:.2f} | {outcome} |")
        print(lines[-1], flush=True)
    (Path(__file__).with_suffix(".md")).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
