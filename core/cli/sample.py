"""`python -m core sample`: sample surrogate answers from a local causal language model or a server.

    python -m core sample --pool pool.jsonl --model NAME_OR_PATH [--gguf-file F] --k 10 \
        [--temperature 1.0] [--max-new-tokens 32] [--batch-size 8] [--seed 0] [--device auto] \
        --out samples.jsonl
    python -m core sample --pool pool.jsonl --api-base URL --model NAME [--api-key-env VAR] --k 10 \
        [--concurrency 8] [--timeout 60] [--retries 5] --out samples.jsonl

Rerunning with the same --out resumes: items already complete there are kept.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from core.cli.output import add_output_options, check_writable, progress_bar, say, write_json
from core.cli.prepare import add_input_options, load_from_args, seed_number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", required=True, help="pool with id and prompt (any --format)")
    add_input_options(parser, samples=False)
    parser.add_argument(
        "--model",
        required=True,
        help="Hugging Face model name (offline cache) or local folder; with --api-base, the server's model name",
    )
    server = parser.add_argument_group(
        "an OpenAI-compatible server instead of a local model (core/surrogate/sample_api.py)"
    )
    server.add_argument("--api-base", help="the server's base URL, e.g. http://127.0.0.1:8000/v1")
    server.add_argument(
        "--api-key-env", metavar="VAR", help="environment variable holding the API key (the key is never stored)"
    )
    server.add_argument("--concurrency", type=int, default=8, help="requests in flight at once (default 8)")
    server.add_argument("--timeout", type=float, default=60.0, help="seconds before a request times out (default 60)")
    server.add_argument(
        "--retries", type=int, default=5, help="retries with back-off on 429, 5xx and lost connections (default 5)"
    )
    parser.add_argument("--gguf-file", help="GGUF file name inside --model's folder, for quantised models")
    parser.add_argument("--k", type=int, default=10, help="answers per item (default 10)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature; 0 = greedy, needs --k 1")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="longest answer in tokens (default 32)")
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per generation call (default 8)")
    parser.add_argument("--seed", type=seed_number, default=0, help="random seed (default 0)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N")
    parser.add_argument("--name", help="surrogate name written in the output (default: the model's name)")
    parser.add_argument("--out", required=True, help="output JSONL in the surrogate long format; appended to")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    if args.api_base:
        return run_server(args)
    # Imported here so that `python -m core --help` does not pay for torch and transformers.

    from core.surrogate.sample import check_settings, load_model, sample_pool

    check_settings(
        k=args.k, temperature=args.temperature, max_new_tokens=args.max_new_tokens, batch_size=args.batch_size
    )
    pool = load_from_args(args, samples=False).pool
    check_writable(args.out, "the samples")
    local = load_model(args.model, gguf_file=args.gguf_file, device=args.device)
    return _sample_with_bar(
        args,
        len(pool),
        lambda progress: sample_pool(
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
        ),
    )


def run_server(args: argparse.Namespace) -> int:
    """`sample --api-base`: the answers come from an OpenAI-compatible server."""

    from core.surrogate.sample_api import Server, api_key, sample_pool_api

    pool = load_from_args(args, samples=False).pool
    api_key(args.api_key_env)  # the variable is set, before anything is written
    check_writable(args.out, "the samples")
    server = Server(
        args.api_base,
        args.model,
        args.api_key_env,
        timeout=args.timeout,
        max_retries=args.retries,
        concurrency=args.concurrency,
    )
    return _sample_with_bar(
        args,
        len(pool),
        lambda progress: sample_pool_api(
            pool,
            server,
            args.out,
            k=args.k,
            temperature=args.temperature,
            max_tokens=args.max_new_tokens,
            seed=args.seed,
            surrogate=args.name,
            progress=progress,
        ),
    )


def _sample_with_bar(args: argparse.Namespace, items: int, sample: Callable[[Callable[[int, int], None]], int]) -> int:
    """Run ``sample(progress)`` with a progress bar (on a terminal only), then report how many items it sampled
    into ``--out``."""
    if args.json:
        check_writable(args.json, "the JSON report")
    with progress_bar(args, total=items, unit="item", desc="sampling") as bar:

        def progress(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        sampled = sample(progress)
    say(args, f"sampled {sampled} items ({items - sampled} already complete) into {args.out}")
    write_json(args, {"items": items, "sampled": sampled, "already_complete": items - sampled, "out": args.out})
    return 0
