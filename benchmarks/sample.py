"""Speed of local surrogate sampling (core.surrogate.sample) on CPU, written to benchmarks/sample.md.

    HF_HUB_OFFLINE=1 python benchmarks/sample.py [--questions 32] [--k 8] [--threads 1 2]

Times `generate_answers` (each prompt's forward pass shared by its K answers)
against a plain `generate(num_return_sequences=K)` call that runs the prompt
K times, on the first questions of data/demo with SmolLM2-135M-Instruct
(GGUF), at each torch thread count. Same settings for both: temperature 1,
at most 24 new tokens, stop at the first newline, 16 questions per call.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import pandas as pd
import torch

from core.jobs.sampling_job import default_model
from core.surrogate.sample import build_prompt, generate_answers, load_model

ROOT = Path(__file__).resolve().parents[1]

BATCH = 16
MAX_NEW_TOKENS = 24


def plain_generate(local, prompts: list[str], k: int, seed: int) -> None:
    """The unshared baseline: generate() expands every prompt K times before its forward pass."""
    torch.manual_seed(seed)
    encoded = local.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.inference_mode():
        local.model.generate(
            **encoded,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            num_return_sequences=k,
            max_new_tokens=MAX_NEW_TOKENS,
            stop_strings=["\n"],
            tokenizer=local.tokenizer,
            pad_token_id=local.tokenizer.pad_token_id,
            output_logits=True,
            return_dict_in_generate=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default=str(Path(__file__).with_suffix(".md")))
    args = parser.parse_args()

    folder, gguf_file = default_model()
    started = time.perf_counter()
    local = load_model(folder, gguf_file=gguf_file, device="cpu")
    loaded = time.perf_counter() - started
    questions = pd.read_json(ROOT / "data" / "demo" / "questions.jsonl", lines=True)["question"][: args.questions]
    prompts = [build_prompt(local.tokenizer, q) for q in questions]
    batches = [prompts[i : i + BATCH] for i in range(0, len(prompts), BATCH)]
    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        for name, run in (
            (
                "shared prompt pass (core.surrogate.sample)",
                lambda b, s: generate_answers(
                    local, b, k=args.k, temperature=1.0, max_new_tokens=MAX_NEW_TOKENS, seed=s
                ),
            ),
            ("plain generate, K copies of the prompt", lambda b, s: plain_generate(local, b, args.k, s)),
        ):
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            for seed, batch in enumerate(batches):
                run(batch, seed)
            seconds = time.perf_counter() - started
            rows.append(f"| {threads} | {name} | {seconds:.1f} | {seconds / len(prompts):.2f} | {load_before:.1f} |")
            print(rows[-1], flush=True)
    lines = [
        "# Local surrogate sampling speed",
        "",
        f"Produced by `python benchmarks/sample.py --questions {args.questions} --k {args.k} --threads "
        f"{' '.join(map(str, args.threads))}` on {platform.machine()} ({os.cpu_count()} CPUs, shared with "
        f"other jobs: see the load average), torch {torch.__version__}, {time.strftime('%Y-%m-%d')}. "
        f"SmolLM2-135M-Instruct (GGUF Q4_1, run in float32) loaded in {loaded:.1f} s; {args.questions} demo "
        f"questions, K = {args.k} answers each at temperature 1, at most {MAX_NEW_TOKENS} new tokens, "
        f"{BATCH} questions per call.",
        "",
        "| torch threads | method | seconds | seconds per question | load average at start |",
        "|---|---|---|---|---|",
        *rows,
    ]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
