"""`python -m core prepare`: cluster surrogate answers, score every item, stratify, write the items table."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from core import config
from core.cli.output import (
    STDOUT,
    add_output_options,
    check_writable,
    progress_bar,
    say,
    warn,
    write_bytes,
    write_json,
    write_with,
)
from core.errors import InputError
from core.inputs.io import Inputs
from core.inputs.readers import FORMATS, load
from core.inputs.targets import refuse_targets
from core.services.overview import preparation_warnings
from core.settings import DEFAULTS, MAX_JSON_INT
from core.stats.compare import Comparison
from core.stats.proxy import PROXY_COLUMN, proxy_name, proxy_values
from core.stats.strata import DEFAULT_MIN_STRATUM_SIZE, DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, STRATIFY_BY
from core.store import json_safe
from core.surrogate.prepare import prepare_items
from core.surrogate.semantic import BACKENDS
from core.surrogate.semantic.base import DEVICES
from core.surrogate.targets import prepare_targets


def json_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every list, tuple, array or dict cell as JSON text (`["a", "b"]`), as the readers take a CSV
    pool's list columns back (core.inputs.io): CSV has no lists, and pandas would write Python's or numpy's repr."""

    def cell(value: object) -> object:
        nested = isinstance(value, list | tuple | dict | np.ndarray)
        return json.dumps(json_safe(value), ensure_ascii=False) if nested else value

    return frame.assign(**{c: frame[c].map(cell) for c in frame.columns if frame[c].dtype == object})


def json_lines(frame: pd.DataFrame, path: Path | None = None) -> str | None:
    """The items as JSON lines, one row a line: written to ``path``, or returned as text without one."""
    return frame.to_json(path, orient="records", lines=True, force_ascii=False)


WRITERS = {
    ".csv": lambda frame, path: json_cells(frame).to_csv(path, index=False),
    ".jsonl": json_lines,
    ".parquet": lambda frame, path: frame.to_parquet(path, index=False),
}


def seed_number(text: str) -> int:
    """A ``--seed`` as argparse reads it: a whole number from 0 to MAX_JSON_INT, a project's seed's range (numpy
    takes no negative seed: -1 ended in a traceback)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_JSON_INT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0 to {MAX_JSON_INT:,}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool",
        required=True,
        help="pool: JSONL, CSV or Parquet table, lm-eval samples file, Inspect log, HF dataset (see --format)",
    )
    parser.add_argument(
        "--samples", help="surrogate samples file, one row per sample (else a 'samples' list column in the pool)"
    )
    parser.add_argument(
        "--out", required=True, help="items table to write: .csv, .jsonl or .parquet (-: JSON lines to standard output)"
    )
    add_input_options(parser)
    add_prepare_options(parser)
    add_output_options(parser)


def add_input_options(parser: argparse.ArgumentParser, *, samples: bool = True) -> None:
    """How the pool (and samples) files are read (core.inputs.readers), shared by every command that reads a pool."""
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=DEFAULTS.input_format,
        help="the pool's format: table (JSONL/CSV/Parquet), lm-eval (samples_<task>_*.jsonl), inspect "
        f"(.eval/.json log), hf (save_to_disk folder or .arrow); default {DEFAULTS.input_format}: told apart by "
        "name and content",
    )
    if samples:
        parser.add_argument(
            "--samples-format",
            choices=FORMATS,
            default=DEFAULTS.input_format,
            help=f"the samples file's format (default: {DEFAULTS.input_format})",
        )
    parser.add_argument(
        "--columns",
        metavar="TARGET=SOURCE,...",
        help="columns to pick after reading, e.g. prompt=instruction,response=output,label=exact_match",
    )


def load_from_args(args: argparse.Namespace, *, samples: bool = True) -> Inputs:
    """The pool (and samples file) read with the options of `add_input_options`."""
    return load(
        args.pool,
        args.samples if samples else None,
        fmt=args.format,
        samples_fmt=args.samples_format if samples else DEFAULTS.input_format,
        columns=args.columns,
    )


def add_prepare_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The options of `prepare_items`, shared by every command that prepares a pool."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULTS.backend,
        help=f"semantic equivalence test (default: {DEFAULTS.backend})",
    )
    parser.add_argument("--model", help="model name or path for the embedding or nli backend (default: the backend's)")
    parser.add_argument(
        "--threshold", type=float, help="similarity (embedding) or entailment probability (nli) threshold"
    )
    parser.add_argument(
        "--proxy",
        metavar="COLUMN",
        help="numeric pool column (a judge's verdict, a reward score, a metric) to stratify on and use as the "
        "predicted grade instead of the surrogate's agreement; agreement and entropy then serve only as "
        "covariates of the difference estimator (see core/stats/proxy.py)",
    )
    parser.add_argument(
        "--strata", type=int, default=DEFAULT_N_STRATA, help=f"number of strata (default: {DEFAULT_N_STRATA})"
    )
    parser.add_argument(
        "--stratify-by",
        choices=STRATIFY_BY,
        default=DEFAULT_STRATIFY_BY,
        help=f"score to stratify on (default: {DEFAULT_STRATIFY_BY})",
    )
    parser.add_argument(
        "--min-stratum-size",
        type=int,
        default=DEFAULT_MIN_STRATUM_SIZE,
        help=f"merge smaller strata into a neighbour (default: {DEFAULT_MIN_STRATUM_SIZE})",
    )
    parser.add_argument(
        "--device", choices=DEVICES, default="auto", help="where models run (default: auto, CUDA when present)"
    )
    parser.add_argument("--batch-size", type=int, help="model batch size (default: the backend's)")
    parser.add_argument(
        "--cache-dir", help=f"result cache folder (default: ${config.CACHE_DIR} or ~/.cache/activegrade)"
    )
    parser.add_argument(
        "--api-base",
        metavar="URL",
        help="with --backend embedding: the embeddings from this OpenAI-compatible server (its /v1 URL; vLLM, "
        "Text Embeddings Inference, Infinity, ...), --model naming the model it serves",
    )
    parser.add_argument(
        "--api-key-env", metavar="VAR", help="with --api-base: the environment variable holding the server's API key"
    )


def warn_without_samples(args: argparse.Namespace, inputs: Inputs) -> None:
    """Warn when no item has a surrogate sample and no --proxy is given: the design then has one stratum of
    unsampled items, no better than uniform sampling (an lm-eval samples file holds samples only when the task
    repeats its generations; a single-epoch Inspect log none)."""
    if inputs.samples.empty and not args.proxy:
        again = (
            f" ({args.pool} is an items table an earlier preparation wrote: its {', '.join(inputs.scores_dropped)} "
            "are computed afresh from the samples, so give the samples it was prepared from)"
            if inputs.scores_dropped
            else ""
        )
        warn(
            f"no item of {args.pool} has a surrogate sample, so the design is no better than uniform sampling{again}. "
            "Give --samples (e.g. a cheaper model's lm-eval run with repeats, or its Inspect log with epochs), "
            "make them with `activegrade sample`, or stratify on a score with --proxy COLUMN"
        )


def check_proxy(args: argparse.Namespace, inputs: Inputs) -> None:
    """The --proxy column's values checked before a preparation that can take hours (core.stats.proxy); a score
    an earlier preparation wrote is refused as such, not as a column the pool lacks."""
    if args.proxy in inputs.scores_dropped:
        raise InputError(
            f"the column {args.proxy!r} is a score an earlier preparation wrote, which a preparation computes afresh",
            file=args.pool,
            fix="give the samples it was prepared from with --samples, or copy the column under another name to "
            "stratify on it",
        )
    proxy_values(inputs.pool, args.proxy, file=args.pool)


def prepare_from_args(args: argparse.Namespace, inputs: Inputs) -> pd.DataFrame:
    """`prepare_items` on `inputs` with the options of `add_prepare_options`, a progress bar on a terminal."""
    with progress_bar(args, desc=f"{args.backend} clustering", unit="item") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        return prepare_items(inputs, backend=args.backend, progress=progress, **prepare_options(args))


def prepare_options(args: argparse.Namespace) -> dict:
    """`prepare_items`' keyword options (but the backend) from the options of `add_prepare_options`."""
    return {
        "model": args.model,
        "threshold": args.threshold,
        "n_strata": args.strata,
        "stratify_by": args.stratify_by,
        "min_stratum_size": args.min_stratum_size,
        "device": args.device,
        "cache_dir": args.cache_dir,
        "batch_size": args.batch_size,
        "proxy": args.proxy,
        "api_base": args.api_base,
        "api_key_env": args.api_key_env,
    }


def prepare_targets_from_args(args: argparse.Namespace, inputs: Inputs) -> Comparison:
    """`prepare_targets` (a pool with several targets) with the options of `add_prepare_options`."""
    return prepare_targets(inputs, backend=args.backend, file=args.pool, **prepare_options(args))


def writer_for(out: str):
    """The writer for the output file's extension (checked before any work is done)."""
    suffix = ".jsonl" if out == STDOUT else Path(out).suffix.lower()
    if suffix not in WRITERS:
        raise InputError(
            f"unsupported output format '{suffix}'", file=out, fix="name the output .csv, .jsonl or .parquet"
        )
    return WRITERS[suffix]


def write_items(items: pd.DataFrame, out: str) -> None:
    """Write the items table whole (core.cli.output.write_with), its format chosen by the file's extension; to
    standard output for ``-``, as JSON lines (a format a pipe reads a row at a time)."""
    if out == STDOUT:
        write_bytes(out, json_lines(items).encode(), "the items table")
        return
    write_with(out, lambda path: writer_for(out)(items, path), "the items table")


def summary_of(items: pd.DataFrame) -> dict:
    """What `prepare` reports: items, with and without samples, stratum sizes (and those without samples), the
    design's proxy."""
    sizes = items["stratum"].value_counts().sort_index()
    without = items["n_samples"] == 0
    unsampled = set() if PROXY_COLUMN in items.columns else set(items.loc[without, "stratum"])
    return {
        "items": len(items),
        "with_samples": int((~without).sum()),
        "without_samples": int(without.sum()),
        "stratum_sizes": {int(h): int(n) for h, n in sizes.items()},
        "strata_without_samples": sorted(int(h) for h in unsampled),
        "design_proxy": proxy_name(items),
    }


def summary(items: pd.DataFrame) -> str:
    """A few lines for the terminal: items, strata sizes, items without samples, the design's proxy."""
    s = summary_of(items)
    return "\n".join(
        [
            f"{s['items']} items, {s['with_samples']} with samples, {s['without_samples']} without samples",
            "stratum sizes: "
            + ", ".join(
                f"{h}: {n}" + (" (no samples)" if h in s["strata_without_samples"] else "")
                for h, n in s["stratum_sizes"].items()
            ),
            f"design proxy: {s['design_proxy']}",
        ]
    )


def run(args: argparse.Namespace) -> int:
    writer_for(args.out)
    inputs = load_from_args(args)
    refuse_targets(inputs.pool, args.pool)  # named by its file, before any warning about its samples
    if args.proxy:
        check_proxy(args, inputs)
    warn_without_samples(args, inputs)
    check_writable(args.out, "the items table")
    if args.json:
        check_writable(args.json, "the JSON report")
    items = prepare_from_args(args, inputs)
    if items["semantic_entropy_weighted"].isna().all():
        items = items.drop(columns="semantic_entropy_weighted")
    write_items(items, args.out)
    say(args, summary(items))
    warned = preparation_warnings(items, args.proxy)  # the setup page's and the API's, said here too
    for words in (warned.strata, warned.pool):
        if words:
            warn(words)
    say(args, "wrote the items table to standard output" if args.out == STDOUT else f"wrote {args.out}")
    write_json(args, {**summary_of(items), "out": args.out})
    return 0
