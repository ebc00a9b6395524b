"""Fixed-n interval coverage and width at the edges, and the live saving on a pool without signal.

Pools of our own making (benchmarks/pools.py): binary grades with mean 0.01,
0.03, 0.5, 0.97 and 0.99, skewed continuous grades (Beta, mean 0.09 and 0.3),
spiked continuous grades (nearly binary: near 0 with rare values near 1, mean 0.04),
surrogate AUROC 0.5, 0.7 or 0.9. Budgets from n = max(10, 2H). Per method
(activegrade: the app's design, queue and estimator; uniform; proportional on
the prepared strata) and budget: coverage of the nominal 95% Korn-Graubard
interval (core.stats.intervals) with its Monte Carlo standard error, the median
width, and for binary pools the Clopper-Pearson width at the
design-effect-adjusted n, n_deff = mu (1 - mu) / MSE (goal: median width at
most 1.2 times it). "before" is the interval the estimator used before issue 13
(a t-interval with one pseudo-grade at the surrogate's spread per stratum),
re-implemented here for the comparison only.

The second table replays the queue on pools whose surrogate knows nothing and
reports the live saving the dashboard would show (core.stats.savings) against the
realised one, 1 - n / m with m = S^2 / (MSE + S^2 / N).

Run: python benchmarks/intervals.py [--reps 1000]; writes benchmarks/intervals.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from pools import make_pool  # benchmarks/pools.py, beside this script
from scipy import stats

from core.stats.allocation import Design, design_from_items, make_design, proportional_allocation
from core.stats.estimate import estimate_batch
from core.stats.intervals import beta_interval
from core.stats.simulate import replay_queue, replication_orders, static_sample
from core.stats.spreads import adaptive_sd, calibrated_prior_sd, pooled_sums

HERE = Path(__file__).resolve().parent
POOLS = [
    ("binary", 0.01, 5000, 0.7),
    ("binary", 0.03, 2000, 0.5),
    ("binary", 0.03, 2000, 0.7),
    ("binary", 0.03, 2000, 0.9),
    ("binary", 0.5, 1000, 0.7),
    ("binary", 0.97, 2000, 0.7),
    ("binary", 0.99, 5000, 0.7),
    ("skewed", 0.09, 1000, 0.7),
    ("skewed", 0.3, 500, 0.9),
    ("spiked", 0.04, 2000, 0.7),
    ("spiked", 0.02, 2000, 0.5),
]
BUDGETS = (None, 20, 50, 100, 200)  # None: max(10, 2H)


def before_interval(design: Design, positions: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The estimator's interval before issue 13: t_{Satterthwaite} sqrt(V), V with one pseudo-grade at
    the calibrated surrogate spread per stratum (S~^2 = (S0^2 + (n_h - 1) s_h^2) / n_h)."""
    onehot = (design.stratum[positions][..., None] == np.arange(design.H)).astype(float)
    counts = onehot.sum(1)
    sums = np.einsum("rnh,rn->rh", onehot, y)
    sumsq = np.einsum("rnh,rn->rh", onehot, y**2)
    prior = calibrated_prior_sd(design, *pooled_sums(design, positions, y))
    sd = adaptive_sd(prior, 1.0, counts, sums, sumsq)
    value = (design.weights * sums / np.maximum(counts, 1)).sum(1)
    terms = design.weights**2 * (1 - counts / design.sizes) * sd**2 / np.maximum(counts, 1)
    variance = terms.sum(1)
    df = variance**2 / np.maximum((terms**2 / np.maximum(counts, 1e-12)).sum(1), 1e-300)
    half = stats.t.ppf(0.975, df) * np.sqrt(variance)
    return np.clip(value - half, 0, 1), np.clip(value + half, 0, 1)


def measure(pool: tuple, reps: int) -> list[dict]:
    kind, mean, n_items, auroc = pool
    items = make_pool(n_items, mean, kind=kind, auroc=auroc, seed=11)
    labels = items["label"].to_numpy()
    mu = float(labels.mean())
    app = design_from_items(items)
    prepared = design_from_items(items, stratify_by=None)
    one = make_design(np.zeros(n_items, dtype=np.int64), items["agreement"].to_numpy(dtype=float))
    orders = replication_orders(n_items, 7, reps)
    budgets = sorted({max(10, 2 * app.H) if b is None else b for b in BUDGETS})
    queue = replay_queue(app, labels, orders, max(budgets))
    rows = []
    for n in budgets:
        samples = {
            "activegrade": (app, queue[:, :n]),
            "uniform": (one, orders[:, :n]),
            "proportional": (
                prepared,
                static_sample(prepared, proportional_allocation(prepared.sizes, n, prepared.floor), orders),
            ),
        }
        for method, (design, positions) in samples.items():
            y = labels[positions]
            batch = estimate_batch(design, positions, y)
            low, high = batch.interval()
            covered = (low <= mu) & (mu <= high)
            cov = float(covered.mean())
            mse = float(np.mean((batch.value - mu) ** 2))
            old_low, old_high = before_interval(design, positions, y)
            row = {
                "pool": f"{kind} {mean:g} N={n_items} AUROC {auroc:g}",
                "method": method,
                "n": n,
                "coverage": cov,
                "se": float(np.sqrt(max(cov * (1 - cov), 1 / reps) / reps)),
                "width": float(np.median(high - low)),
                "before_cov": float(np.mean((old_low <= mu) & (mu <= old_high))),
                "before_width": float(np.median(old_high - old_low)),
                "cp_width": np.nan,
            }
            if kind == "binary" and mse > 0:
                cp_low, cp_high = beta_interval(np.array(mu), np.array(mu * (1 - mu) / mse))
                row["cp_width"] = float(cp_high - cp_low)
            rows.append(row)
    return rows


def savings_rows(reps: int) -> list[dict]:
    """Live saving shown against realised, on pools whose surrogate knows nothing (AUROC 0.5)."""
    rows = []
    for kind, mean, n_items in (("binary", 0.5, 2000), ("binary", 0.1, 2000), ("skewed", 0.3, 1000)):
        items = make_pool(n_items, mean, kind=kind, auroc=0.5, seed=12)
        labels = items["label"].to_numpy()
        mu, s2 = labels.mean(), labels.var(ddof=1)
        design = design_from_items(items)
        orders = replication_orders(n_items, 8, reps)
        queue = replay_queue(design, labels, orders, 100)
        for n in (max(10, 2 * design.H), 20, 40, 100):
            positions = queue[:, :n]
            batch = estimate_batch(design, positions, labels[positions])  # the dashboard's estimate and saving
            share = batch.saving.share
            shown = share[np.isfinite(share)]
            mse = float(np.mean((batch.value - mu) ** 2))
            m = s2 / (mse + s2 / n_items)
            rows.append(
                {
                    "pool": f"{kind} {mean:g} N={n_items} AUROC 0.5",
                    "n": n,
                    "withheld": 1 - shown.size / reps,
                    "shown": float(shown.mean()) if shown.size else np.nan,
                    "shown_se": float(shown.std() / np.sqrt(max(shown.size, 1))),
                    "over15": float(np.mean(shown > 0.15)) if shown.size else np.nan,
                    "realised": 1 - n / m,
                }
            )
    return rows


def markdown(rows: list[dict], saving: list[dict], reps: int, seconds: float) -> str:
    lines = [
        "# Fixed-n intervals at the edges (benchmarks/intervals.py)",
        "",
        f"{reps} replications per pool, method and budget (Monte Carlo s.e. of a coverage near 0.95: "
        f"{np.sqrt(0.95 * 0.05 / reps):.3f}); {seconds:.0f} s on one core. Interval: Korn-Graubard "
        "(core.stats.intervals). Goal: coverage + 2 s.e. >= 0.935 at every budget; on binary pools the median "
        "width at most 1.2 x the Clopper-Pearson width at the design-effect-adjusted n (`CP width`). "
        "`before`: the t-interval used before issue 13.",
        "",
        "| pool | method | n | coverage | s.e. | cov + 2 s.e. >= 0.935 | median width | CP width | ratio "
        "| before: coverage | before: width |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        binary = np.isfinite(r["cp_width"])
        cp = f"{r['cp_width']:.4f}" if binary else ""
        ratio = f"{r['width'] / r['cp_width']:.2f}" if binary else ""
        ok = "yes" if r["coverage"] + 2 * r["se"] >= 0.935 else "**no**"
        lines.append(
            f"| {r['pool']} | {r['method']} | {r['n']} | {r['coverage']:.3f} | {r['se']:.3f} | {ok} "
            f"| {r['width']:.4f} | {cp} | {ratio} | {r['before_cov']:.3f} | {r['before_width']:.4f} |"
        )
    misses = [r for r in rows if r["coverage"] + 2 * r["se"] < 0.935]
    binary = [r for r in rows if np.isfinite(r["cp_width"])]
    wide = [r for r in binary if r["width"] > 1.2 * r["cp_width"]]
    lines += [
        "",
        f"Coverage goal missed in {len(misses)} of {len(rows)} rows"
        + "".join(f"; {r['pool']}, {r['method']}, n = {r['n']}: {r['coverage']:.3f}" for r in misses)
        + f". Width above 1.2 x Clopper-Pearson in {len(wide)} of "
        f"{len(binary)} binary rows (largest ratio {max((r['width'] / r['cp_width'] for r in binary), default=np.nan):.2f}).",
    ]
    lines += [
        "",
        "## Live saving on pools without signal (core.stats.savings)",
        "",
        "The saving the dashboard would show (mean over the replications where it is shown; withheld "
        "until every stratum has 2 grades) against the realised saving of the design at that n. Goal from "
        "n = 20: within 5 points of the realised saving, at most 10% of replications above +15%. The "
        f"realised saving is itself a Monte Carlo figure: its s.e. is about {np.sqrt(2 / reps):.0%} of 1 - "
        "saving (the MSE's relative s.e., sqrt(2 / reps)).",
        "",
        "| pool | n | withheld | shown (mean) | s.e. | share shown > +15% | realised |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in saving:
        lines.append(
            f"| {r['pool']} | {r['n']} | {r['withheld']:.0%} | {r['shown']:+.1%} | {r['shown_se']:.1%} "
            f"| {r['over15']:.1%} | {r['realised']:+.1%} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [row for pool in POOLS for row in measure(pool, args.reps)]
    saving = savings_rows(args.reps)
    (HERE / "intervals.md").write_text(markdown(rows, saving, args.reps, time.perf_counter() - start))
    print((HERE / "intervals.md").read_text())


if __name__ == "__main__":
    main()
