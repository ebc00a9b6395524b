"""`python -m core sample`: sample surrogate answers from a local causal language model.

    python -m core sample --pool pool.jsonl --model NAME_OR_PATH [--gguf-file F] --k 10 \
        [--temperature 1.0] [--max-new-tokens 32] [--batch-size 8] [--seed 0] [--device auto] \
        --out samples.jsonl

Rerunning with the same --out resumes: items already complete there are kept.
"""

from __future__ import annotations

import argparse

from core.commands.output import check_writable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", required=True, help="pool file (JSONL, CSV or Parquet) with id and prompt columns")
    parser.add_argument("--model", required=True, help="Hugging Face model name (offline cache) or local folder")
    parser.add_argument("--gguf-file", help="GGUF file name inside --model's folder, for quantised models")
    parser.add_argument("--k", type=int, default=10, help="answers per item (default 10)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature; 0 = greedy, needs --k 1")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="longest answer in tokens (default 32)")
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per generation call (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N")
    parser.add_argument("--name", help="surrogate name written in the output (default: the model's name)")
    parser.add_argument("--out", required=True, help="output JSONL in the surrogate long format; appended to")


def run(args: argparse.Namespace) -> int:
    # Imported here so that `python -m core --help` does not pay for torch and transformers.
    from tqdm import tqdm

    from core.io import load_inputs
    from core.sample import check_settings, load_model, sample_pool

    check_settings(
        k=args.k, temperature=args.temperature, max_new_tokens=args.max_new_tokens, batch_size=args.batch_size
    )
    pool = load_inputs(args.pool).pool
    check_writable(args.out, "the samples")
    local = load_model(args.model, gguf_file=args.gguf_file, device=args.device)
    with tqdm(total=len(pool), unit="item", desc="sampling") as bar:

        def progress(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        sampled = sample_pool(
            pool,
            local,
            args.out,
            k=args.k,
            temperature=args.temperature,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            seed=args.seed,
            surrogate=args.name,
            progress=progress,
        )
    print(f"sampled {sampled} items ({len(pool) - sampled} already complete) into {args.out}")
    return 0
