"""`python -m core simulate`: replay grading on a labelled pool and compare sampling methods."""

from __future__ import annotations

import argparse
import sys
import time

from core.cli.output import add_output_options, check_writable, progress_bar, say, write_json
from core.cli.prepare import (
    add_input_options,
    add_prepare_options,
    check_proxy,
    load_from_args,
    prepare_from_args,
    prepare_targets_from_args,
    seed_number,
    warn_without_samples,
)
from core.errors import InputError
from core.inputs.targets import has_targets
from core.stats.compare import DEFAULT_MODE, MODES
from core.stats.design import prepared_design
from core.stats.simulate import DEFAULT_BUDGETS, METHODS, format_table, labels_of, simulate
from core.stats.simulate_compare import format_comparisons, simulate_comparisons
from core.stats.stopping import DEFAULT_REGIME, FIXED, REGIMES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool", required=True, help="labelled pool (any --format) with a 'label' column (see --columns)"
    )
    parser.add_argument("--samples", help="surrogate samples file (else a 'samples' list column in the pool)")
    parser.add_argument(
        "--budgets",
        default=",".join(DEFAULT_BUDGETS),
        help=f"comma-separated budgets: a fraction of the pool when <= 1, else a count (default: {','.join(DEFAULT_BUDGETS)})",
    )
    parser.add_argument("--reps", type=int, default=1000, help="replications per method and budget (default: 1000)")
    parser.add_argument("--seed", type=seed_number, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--methods", default=",".join(METHODS), help=f"comma-separated subset of {','.join(METHODS)} (default: all)"
    )
    parser.add_argument(
        "--n0",
        type=int,
        help="planned budget the anytime confidence sequence is tuned for (default: 10%% of the pool at the "
        "budgets; in the stopping mode, each method's setup forecast for the target, as a project tunes it)",
    )
    parser.add_argument(
        "--regime",
        choices=REGIMES,
        help="how the project stops (default: looks, planned looks on information; anytime: at any grade with "
        "the anytime-valid interval; fixed: a budget fixed in advance)",
    )
    parser.add_argument("--budget-fixed", action="store_true", help="the same as --regime fixed")
    parser.add_argument(
        "--target-half-width",
        type=float,
        help="stopping mode: grade until the regime's rule stops at this half-width, and report grades at the "
        "stop, coverage there, the saving shown and the forecast (a 'stopping' object in the JSON)",
    )
    parser.add_argument(
        "--expected", type=float, help="the score the manager expects, for the forecast (default: the surrogate's)"
    )
    parser.add_argument(
        "--skip-wrong", type=float, default=0.0, help="share of wrong items (grade 0) graders skip (default: 0)"
    )
    parser.add_argument(
        "--skip-right", type=float, default=0.0, help="share of right items (grade 1) graders skip (default: 0)"
    )
    parser.add_argument(
        "--compare-mode",
        choices=MODES,
        default=DEFAULT_MODE,
        help="a pool with a 'model' column (several targets) also simulates their comparisons: absolute grades, "
        "side-by-side cards, or pairwise preferences (a 'preference' column, else simulated from the labels); "
        "budgets <= 1 are then shares of the K x N grades of a full comparison (default: absolute)",
    )
    add_output_options(parser)
    add_input_options(parser)
    prepare = parser.add_argument_group(
        "prepare options (as for `python -m core prepare`, with the app's default stratification; "
        "activegrade and proportional use these strata as prepared, as a project does)"
    )
    add_prepare_options(prepare)


def _list(text: str, option: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise InputError(f"{option} is empty", field=option, fix="give a comma-separated list")
    return values


def run(args: argparse.Namespace) -> int:
    budgets = _list(args.budgets, "--budgets")
    methods = _list(args.methods, "--methods")
    inputs = load_from_args(args)
    if args.proxy:
        check_proxy(args, inputs)
    labels_of(inputs.pool, file=args.pool)  # every label, before a preparation that can take hours
    warn_without_samples(args, inputs)
    if args.json:
        check_writable(args.json, "the results")
    if args.budget_fixed and args.regime not in (None, FIXED):  # the flag lost to the other without a word
        raise InputError(
            f"--budget-fixed and --regime {args.regime} name two stopping regimes",
            fix="give one of them: --budget-fixed is --regime fixed",
        )
    regime = FIXED if args.budget_fixed else (args.regime or DEFAULT_REGIME)
    if args.target_half_width is not None and not 0 < args.target_half_width <= 0.5:
        raise InputError(f"--target-half-width {args.target_half_width} is not in (0, 0.5]", fix="give e.g. 0.05")
    comparison = prepare_targets_from_args(args, inputs) if has_targets(inputs.pool) else None
    items = prepare_from_args(args, inputs) if comparison is None else comparison.items[comparison.models[0]]
    start, cpu = time.perf_counter(), time.process_time()
    with progress_bar(args, total=len(methods), unit="method", desc="simulating") as bar:
        result = simulate(
            items,
            budgets,
            reps=args.reps,
            seed=args.seed,
            methods=methods,
            n_strata=args.strata,
            n0=args.n0,
            skip_wrong=args.skip_wrong,
            skip_right=args.skip_right,
            regime=regime,
            design=prepared_design(items, regime),
            target_half_width=args.target_half_width,
            planned=args.n0,
            expected=args.expected,
            progress=lambda done, _total: bar.update(done - bar.n),
        )
    if comparison is not None:
        result["target"] = comparison.models[0]
        result |= simulate_comparisons(
            comparison, budgets, mode=args.compare_mode, reps=args.reps, seed=args.seed, regime=regime, n0=args.n0
        )
    say(args, format_table(result))
    if comparison is not None:
        say(args, format_comparisons(result))
    if not args.quiet:
        print(
            f"{args.reps} replications in {time.perf_counter() - start:.1f} s ({time.process_time() - cpu:.1f} s CPU)",
            file=sys.stderr,
        )
    write_json(args, result)
    return 0
