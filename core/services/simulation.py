"""Simulations of a project's grading, for the Simulate page: checked, queued as jobs, read back.

``start`` checks that the actor may simulate the project (auth.SIMULATE), checks the budgets
at once (a bad one is said before any wait) and queues the job (core.jobs.simulation_job) a
worker runs; ``latest`` reads the project's newest run back as a ``Run``. The page renders
what these return and decides nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.jobs.simulation_job import enqueue_simulation, latest_simulation, settings_read
from core.services import auth
from core.services.outcome import permitted
from core.services.progress import percent
from core.services.setup import Design
from core.settings import ProjectSettings
from core.stats.intervals import LEVEL
from core.stats.simulate import METHOD_NOTES, METHODS, ORACLES, budget_sizes, budgets_around, figure_cell
from core.stats.stopping import ANYTIME, FIXED, REGIME_NAMES
from core.store import Store
from core.store import jobs as job_table

__all__ = [
    "LEVEL",
    "METHOD_NOTES",
    "METHODS",
    "ORACLES",
    "Run",
    "Stopping",
    "budget_table",
    "changed_since",
    "defaults",
    "latest",
    "regime_name",
    "start",
    "stopping",
    "uniform_words",
]


@dataclass(frozen=True)
class Run:
    """A simulation as its page shows it: ``running`` (queued or running), ``failed`` (with ``error``) or
    ``done`` (with ``result``, core.stats.simulate.simulate's figures)."""

    state: str
    error: str | None = None
    result: dict[str, Any] | None = None


def defaults(settings: ProjectSettings, design: Design, needed: int) -> tuple[tuple[str, ...], int]:
    """The form's default budgets (around ``needed``, the grades the project's forecast now says the target
    needs) and n0, the one the project uses (core.stats.simulate.budgets_around, ProjectSettings.anytime_n0)."""
    return budgets_around(needed, design.N), settings.anytime_n0(design)


def start(
    store: Store,
    actor: auth.User | None,
    project_id: int,
    *,
    budgets: Sequence[str],
    reps: int,
    seed: int,
    methods: Sequence[str],
    n0: int,
    skip_wrong: float,
    skip_right: float,
) -> int:
    """Queue a simulation of the project with these arguments (core.stats.simulate.simulate's); its job id.
    Refused unless the actor may simulate the project; InputError for a budget that is no share or count."""
    permitted(store, actor, auth.SIMULATE, project_id)
    budget_sizes(budgets, store.item_count(project_id))
    return enqueue_simulation(
        store,
        project_id,
        budgets=list(budgets),
        reps=reps,
        seed=seed,
        methods=list(methods),
        n0=n0,
        skip_wrong=skip_wrong,
        skip_right=skip_right,
    )


def latest(store: Store, actor: auth.User | None, project_id: int) -> Run | None:
    """The project's newest simulation, or None when none was run; Refused unless the actor may simulate it."""
    permitted(store, actor, auth.SIMULATE, project_id)
    job = latest_simulation(store, project_id)
    if job is None:
        return None
    if job.state in job_table.ACTIVE:
        return Run("running")
    if job.state == job_table.FAILED:
        return Run("failed", error=job.error)
    return Run("done", result=job.result)


@dataclass(frozen=True)
class Stopping:
    """A run's stopping mode as the page shows it: the target, per method the table's ``rows`` (grades at the
    stop, the coverage of the interval shown then, each with its Monte Carlo s.e.), uniform's usual fixed-n
    size (``uniform_fixed_n``, Wald's, and ``uniform_wilson``), and the project's forecast as the setup made it
    (``forecast``: low, middle, high) with the share of runs stopping inside its range (``forecast_hit``)."""

    target: float
    rows: list[dict[str, Any]]
    uniform_fixed_n: int
    uniform_wilson: int
    forecast: tuple[int, int, int]
    forecast_hit: float
    fixed: bool = False
    """A budget fixed in advance: every run grades the budget, whatever the half-width (no target, no range)."""

    @property
    def table(self) -> list[dict[str, str]]:
        """``rows`` turned for the page: a line per figure, a column per method, each figure in its own format with
        its Monte Carlo s.e. beside it (ten columns, two lines, ran past the page at 1,400 px: a manager's
        review)."""
        return [
            {"figure": label} | {row["method"]: _stop_cell(row, key, se, fmt) for row in self.rows}
            for label, key, se, fmt in _STOP_FIGURES
        ]


def _stop_cell(row: dict[str, Any], key: str, se: str | None, fmt: str | None) -> str:
    """One figure of the stopping table in ``fmt`` with its s.e. beside it (``se``: its key, None: none); a saving
    (``fmt`` None) as the dashboard writes it (core.services.progress.percent); "—" where the run has none."""
    value = row.get(key)
    if not _known(value):
        return "—"
    if fmt is None:
        return percent(value, signed=True)
    return f"{value:{fmt}}" + (f" ± {row[se]:{fmt.lstrip('+')}}" if se and _known(row[se]) else "")


def _known(value: Any) -> bool:
    return value is not None and value == value  # NaN: the saving of a pool whose grades are all equal


_STOP_FIGURES = (
    ("grades at the stop (median)", "grades at the stop (median)", "± s.e.", ",.0f"),
    ("grades at the stop (mean)", "mean", None, ",.1f"),
    (
        f"coverage of the {LEVEL:.0%} interval at the stop",
        f"coverage of the {LEVEL:.0%} interval at the stop",
        "coverage ± s.e.",
        ".1%",
    ),
    ("bias at the stop", "bias at the stop", None, "+.4f"),
    ("saving shown at the stop, fixed-n", "saving shown at the stop, fixed-n", None, None),
    ("saving shown, same rule", "saving shown, same rule", None, None),
    ("saving had", "saving had", None, None),
)
"""The stopping table's figures: (label, the row's key, its s.e.'s key or None, its format; None: a saving)."""


def stopping(result: dict[str, Any]) -> Stopping | None:
    """The ``stopping`` object of a run (core.stats.simulate_stopping), None for a run made without it."""
    stop = result.get("stopping")
    if not stop:
        return None
    rows = [
        {
            "method": method,
            "grades at the stop (median)": stop[method]["stop_n_median"],
            "± s.e.": stop[method]["stop_n_median_se"],
            "mean": stop[method]["stop_n_mean"],
            f"coverage of the {LEVEL:.0%} interval at the stop": stop[method]["stop_coverage"],
            "coverage ± s.e.": stop[method]["stop_coverage_se"],
            "bias at the stop": stop[method]["stop_bias"],
            # the saving the dashboard shows at the stop (a mean over the repetitions), beside the saving had: the
            # figure a manager checks against the dashboard's (a manager's review found none here)
            "saving shown at the stop, fixed-n": stop[method].get("saving_shown_at_stop"),
            "saving shown, same rule": stop[method].get("saving_shown_same_regime"),
            "saving had": stop[method].get("saving_realised"),
        }
        for method in ("activegrade", "uniform")
        if method in stop
    ]
    own = stop["activegrade"]
    return Stopping(
        target=float(stop["target_half_width"]),
        rows=rows,
        uniform_fixed_n=int(stop["uniform_fixed_n"]),
        uniform_wilson=int(stop["uniform_fixed_n_wilson"]),
        forecast=(round(own["forecast_low"]), round(own["forecast_n"]), round(own["forecast_high"])),
        forecast_hit=float(own["forecast_hit"]),
        fixed=stop.get("regime") == FIXED,
    )


BUDGET_FIGURES = (
    ("MSE / uniform's", "mse_ratio", ".3f"),
    (f"coverage of the fixed-n {LEVEL:.0%} interval", "coverage", ".1%"),
    (f"coverage of the anytime {LEVEL:.0%} interval", "coverage_anytime", ".1%"),
    ("budget saved at equal MSE", "budget_saving", "+.0%"),
)
"""The budgets table's figures as a manager reads them: (column, the run's key, format), each with its s.e."""


def budget_table(result: dict[str, Any]) -> list[dict[str, str]]:
    """The run's fixed budgets as the page shows them: a line per method and budget, the grades and their share of
    the pool, and BUDGET_FIGURES each ± its Monte Carlo s.e. (core.stats.simulate.figure_cell; "-" where a
    method has none). Every figure of the run, under its own name, is the page's raw table (the simulator's
    columns, 2,725 px wide and in snake_case, were the page's only table: a review)."""
    size = result["N"]
    return [
        {"method": method, "grades": f"{row['n']:,.0f}", "of the pool": f"{row['n'] / size:.1%}"}
        | {name: figure_cell(row.get(key), row.get(f"{key}_se"), fmt) for name, key, fmt in BUDGET_FIGURES}
        for method, by_budget in result["methods"].items()
        for row in by_budget.values()
    ]


def uniform_words(stop: Stopping) -> str:
    """What uniform sampling read with the fixed-n interval needs, in words: Wald's and Wilson's sizes, or one
    number where they agree ("165 (Wald's) or 165 (Wilson's ...)" said one number twice: a review)."""
    if stop.uniform_fixed_n == stop.uniform_wilson:
        return f"{stop.uniform_fixed_n:,} grades"
    return (
        f"{stop.uniform_fixed_n:,} grades (Wald's interval) or {stop.uniform_wilson:,} (Wilson's, the valid one at a "
        "rare mean)"
    )


def changed_since(result: dict[str, Any], settings: ProjectSettings) -> list[str]:
    """What of the settings a run read (core.jobs.simulation_job.settings_read) the project has changed since,
    each as "was -> now" in words; empty when none (a run kept from before runs recorded them is read by its
    stopping mode's target and regime)."""
    stop = result.get("stopping") or {}
    kept = {"stopping": stop.get("regime"), "target_half_width": stop.get("target_half_width")}
    then = result.get("settings") or {key: value for key, value in kept.items() if value is not None}
    now = settings_read(settings)
    words = {
        "stopping": lambda v: REGIME_NAMES.get(v, str(v)),
        "target_half_width": lambda v: f"±{v:.3f}",
        "expected_score": lambda v: "no expected score" if v is None else f"an expected score of {v:.2f}",
    }
    return [
        f"{words[key](then[key])} -> {words[key](now[key])}" for key in words if key in then and then[key] != now[key]
    ]


def regime_name(result: dict[str, Any]) -> str:
    """How the stopping regime a simulation allocated for is named to people (core.stats.stopping.REGIME_NAMES)."""
    return REGIME_NAMES[result.get("regime", ANYTIME)]  # runs from before regimes were anytime
