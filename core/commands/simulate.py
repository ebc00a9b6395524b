"""`python -m core simulate`: replay grading on a labelled pool and compare sampling methods."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from core.errors import InputError
from core.semantic import BACKENDS
from core.semantic.base import DEVICES
from core.simulate import DEFAULT_BUDGETS, METHODS, format_table, simulate
from core.strata import DEFAULT_MIN_STRATUM_SIZE, STRATIFY_BY


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", required=True, help="labelled pool file (JSONL, CSV or Parquet) with a 'label' column")
    parser.add_argument("--samples", help="surrogate samples file (else a 'samples' list column in the pool)")
    parser.add_argument(
        "--budgets", default=",".join(DEFAULT_BUDGETS),
        help=f"comma-separated budgets: a fraction of the pool when <= 1, else a count (default: {','.join(DEFAULT_BUDGETS)})",
    )
    parser.add_argument("--reps", type=int, default=1000, help="replications per method and budget (default: 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {','.join(METHODS)} (default: all)")
    parser.add_argument("--json", help="write the results to this JSON file")
    prepare = parser.add_argument_group("prepare options (as for `python -m core prepare`)")
    prepare.add_argument("--backend", choices=BACKENDS, default="exact", help="semantic equivalence test (default: exact)")
    prepare.add_argument("--model", help="model name or path for the embedding or nli backend")
    prepare.add_argument("--threshold", type=float, help="similarity (embedding) or entailment probability (nli) threshold")
    prepare.add_argument("--strata", type=int, default=5, help="number of strata (default: 5)")
    prepare.add_argument(
        "--stratify-by", choices=STRATIFY_BY, default="entropy",
        help="prepared strata, used by the proportional method (default: entropy); activegrade uses the app's design",
    )
    prepare.add_argument("--min-stratum-size", type=int, default=DEFAULT_MIN_STRATUM_SIZE, help="merge smaller strata into a neighbour")
    prepare.add_argument("--device", choices=DEVICES, default="auto", help="where models run (default: auto)")
    prepare.add_argument("--batch-size", type=int, help="model batch size (default: the backend's)")
    prepare.add_argument("--cache-dir", help="result cache folder")


def _list(text: str, option: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise InputError(f"{option} is empty", column=option, fix="give a comma-separated list")
    return values


def run(args: argparse.Namespace) -> int:
    from core.io import load_inputs
    from core.prepare import prepare_items

    budgets = _list(args.budgets, "--budgets")
    methods = _list(args.methods, "--methods")
    inputs = load_inputs(args.pool, args.samples)
    if "label" not in inputs.pool.columns:
        raise InputError("the pool has no 'label' column", file=args.pool, column="label", fix="the simulator needs every item's grade")
    items = prepare_items(
        inputs,
        backend=args.backend,
        model=args.model,
        threshold=args.threshold,
        n_strata=args.strata,
        stratify_by=args.stratify_by,
        min_stratum_size=args.min_stratum_size,
        device=args.device,
        cache_dir=args.cache_dir,
        batch_size=args.batch_size,
    )
    start, cpu = time.perf_counter(), time.process_time()
    result = simulate(items, budgets, reps=args.reps, seed=args.seed, methods=methods, n_strata=args.strata)
    print(format_table(result))
    print(f"{args.reps} replications in {time.perf_counter() - start:.1f} s ({time.process_time() - cpu:.1f} s CPU)", file=sys.stderr)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        except OSError as error:
            raise InputError(f"cannot write the results ({error.strerror})", file=args.json, fix="check the folder exists and is writable") from None
        print(f"wrote {args.json}")
    return 0
