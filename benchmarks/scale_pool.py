"""Large generated pools for benchmarks/scale.py: N items with 10 short surrogate samples each.

Item i's target answer is one of at most 10^5 distinct short strings ("answer 123"), and so is every
sample: answers repeat, as short answers do, so a pool of 10^6 items x 10 samples holds at most 10^5
distinct texts. The surrogate agrees with the target on a share of its samples that varies across items
(Beta(2, 1)), so semantic entropy and agreement spread over their range. Written in chunks with
pyarrow, so making a pool of 10^6 x 10 holds one chunk at a time, as Parquet (pool.parquet,
samples.parquet): the CLI and the server-side path read it, not the browser uploader.

    python benchmarks/scale_pool.py OUT_DIR --items 1000000 [--samples 10] [--distinct 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CHUNK = 100_000  # items per written chunk


def answers(codes: np.ndarray) -> pa.Array:
    """The short answer text of each code."""
    return pa.array([f"answer {c}" for c in codes.tolist()], type=pa.string())


def write_pool(out: Path, n_items: int, n_samples: int = 10, distinct: int = 100_000, seed: int = 0) -> None:
    """pool.parquet (id, prompt, response, answer) and samples.parquet (id, sample) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool_schema = pa.schema([(c, pa.string()) for c in ("id", "prompt", "response", "answer")])
    sample_schema = pa.schema([("id", pa.string()), ("sample", pa.string())])
    with (
        pq.ParquetWriter(out / "pool.parquet", pool_schema) as pool,
        pq.ParquetWriter(out / "samples.parquet", sample_schema) as samples,
    ):
        for start in range(0, n_items, CHUNK):
            n = min(CHUNK, n_items - start)
            ids = pa.array([f"item-{k}" for k in range(start, start + n)], type=pa.string())
            target = rng.integers(0, distinct, n)
            agree = rng.beta(2.0, 1.0, n)
            same = rng.random((n, n_samples)) < agree[:, None]
            other = (target[:, None] + rng.integers(1, 6, (n, n_samples))) % distinct  # a few nearby wrong answers
            drawn = np.where(same, target[:, None], other).ravel()
            text = answers(target)
            pool.write_table(
                pa.table(
                    {
                        "id": ids,
                        "prompt": pa.array([f"Question {k}: what is the code?" for k in range(start, start + n)]),
                        "response": pa.compute.binary_join_element_wise("The ", text, "."),
                        "answer": text,
                    },
                    schema=pool_schema,
                )
            )
            samples.write_table(
                pa.table({"id": ids.take(np.repeat(np.arange(n), n_samples)), "sample": answers(drawn)})
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--distinct", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_pool(args.out, args.items, args.samples, args.distinct, args.seed)


if __name__ == "__main__":
    main()
