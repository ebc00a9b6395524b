"""ActiveGrade's statistics as plain functions, for a notebook or a script that has the pool at hand (no
server, no database): ``prepare`` a pool into strata, the ``design`` that allocates the grades, the
``next_item`` to grade, the ``estimate`` from the grades, and ``simulate`` the whole on labelled items.

Each is a thin layer over the code the app, the CLI and the API run (core.surrogate.prepare,
core.stats.design, core.stats.queue, core.stats.estimate, core.stats.simulate): nothing is computed here.
``import activegrade`` loads this module on first use of one of its names only, so a script that only
calls the HTTP API does not import the statistics.

The examples run as doctests (tests/test_library.py), on ``example_pool``'s made-up questions with the
default, model-free ``exact`` backend (samples in one class when their text is the same). The loop a
project runs, graded here from the pool's own labels:

>>> import activegrade
>>> items = activegrade.prepare(activegrade.example_pool())
>>> plan = activegrade.design(items)
>>> labels = items["label"]
>>> positions = []
>>> while len(positions) < 30:
...     positions.append(activegrade.next_item(plan, positions, labels[positions]))
>>> reading = activegrade.estimate(plan, positions, labels[positions])
>>> reading.n, bool(reading.ci_low < labels.mean() < reading.ci_high)
(30, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.inputs.io import Inputs, load_inputs
from core.inputs.readers import load
from core.inputs.tables import Source, Table
from core.stats import queue
from core.stats.allocation import Design
from core.stats.design import prepared_design
from core.stats.estimate import Estimate
from core.stats.estimate import estimate as estimate_grades
from core.stats.intervals import LEVEL
from core.stats.simulate import DEFAULT_BUDGETS
from core.stats.simulate import simulate as simulate_methods
from core.stats.stopping import DEFAULT_REGIME
from core.surrogate.prepare import prepare_items

__all__ = ["design", "estimate", "example_pool", "next_item", "prepare", "simulate"]


def example_pool(n_items: int = 60, seed: int = 0) -> pd.DataFrame:
    """A made-up pool to try the functions on: ``n_items`` questions "What is a + b?", the target model's
    ``response``, five surrogate ``samples`` each (a list column) and the true ``label`` (1.0 where the
    response is right). Each question has a difficulty, the chance that any one answer is off by 1 to 3, so
    the samples disagree where the response is often wrong, as a real surrogate's do.

    >>> example_pool().head(4)
       id            prompt response               samples  label
    0  q0  What is 42 + 42?       84  [84, 85, 84, 84, 84]    1.0
    1  q1  What is 32 + 34?       66  [66, 66, 66, 67, 66]    1.0
    2  q2  What is 26 + 35?       61  [61, 61, 61, 61, 61]    1.0
    3  q3  What is 14 + 20?       37  [34, 37, 36, 34, 36]    0.0
    """
    rng = np.random.default_rng(seed)
    a, b = rng.integers(1, 50, (2, n_items))
    difficulty = rng.random(n_items)
    off = rng.integers(1, 4, (n_items, 6)) * (rng.random((n_items, 6)) < difficulty[:, None])
    answers = ((a + b)[:, None] + off).astype(str)  # column 0 the response, then the samples
    return pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(n_items)],
            "prompt": [f"What is {x} + {y}?" for x, y in zip(a, b)],
            "response": answers[:, 0],
            "samples": answers[:, 1:].tolist(),
            "label": (off[:, 0] == 0).astype(float),
        }
    )


def prepare(pool: Source | pd.DataFrame, samples: Source | pd.DataFrame | None = None, **options: Any) -> pd.DataFrame:
    """The prepared items table of a pool, as a project prepares it (core.surrogate.prepare.prepare_items):
    one row per item in pool order, the pool's columns plus the surrogate's scores (``n_samples``,
    ``n_clusters``, ``semantic_entropy``, ``semantic_entropy_weighted``, ``agreement``) and the ``stratum``.

    ``pool`` and ``samples``: a file's path (any format the app reads, found from the name and contents), a
    ``(file name, bytes)`` pair, or a DataFrame of the file's columns (``id``, ``prompt``, ``response``, and
    the samples as the pool's list column ``samples`` or as their own table: ``id``, ``sample``). ``options``:
    prepare_items's, e.g. ``backend`` (``"exact"``, the default, needs no model), ``n_strata``,
    ``stratify_by``, ``min_stratum_size``, ``proxy``. A bad input raises core.errors.InputError saying where
    and how to fix it.

    >>> items = prepare(example_pool())
    >>> items[["id", "n_clusters", "agreement", "semantic_entropy", "stratum"]].head(4)
       id  n_clusters  agreement  semantic_entropy  stratum
    0  q0           2        0.8          0.500402        0
    1  q1           2        0.8          0.500402        0
    2  q2           1        1.0          0.000000        0
    3  q3           3        0.2          1.054920        2
    >>> items.groupby("stratum")["label"].mean().round(2).tolist()  # the strata separate right from wrong
    [0.88, 0.17, 0.18]
    """
    return prepare_items(_inputs(pool, samples), **options)


def _inputs(pool: Source | pd.DataFrame, samples: Source | pd.DataFrame | None) -> Inputs:
    """The checked inputs of files (their readers, core.inputs.readers.load) or of tables (load_inputs)."""
    if isinstance(pool, pd.DataFrame) or isinstance(samples, pd.DataFrame):
        return load_inputs(_table(pool, "pool"), None if samples is None else _table(samples, "samples"))
    return load(pool, samples)


def _table(source: Source | pd.DataFrame, name: str) -> Source | Table:
    """A DataFrame as the table of a file called ``name``; a path or (name, bytes) pair as it is."""
    return Table.of_frame(name, source) if isinstance(source, pd.DataFrame) else source


def design(items: pd.DataFrame, regime: str = DEFAULT_REGIME) -> Design:
    """The design a project grades ``items`` (``prepare``'s table) with: their strata as prepared, and the
    allocation the stopping ``regime`` asks for (core.stats.design.prepared_design).

    >>> plan = design(prepare(example_pool()))
    >>> plan.N, plan.H, plan.sizes.tolist()
    (60, 3, [26, 12, 22])
    """
    return prepared_design(items, regime)


def next_item(
    plan: Design,
    positions: Iterable[int] = (),
    grades: Iterable[float] = (),
    *,
    skipped: Iterable[int] = (),
    reserved: Iterable[int] = (),
    seed: int = 0,
) -> int | None:
    """The position (row of the items table, from 0) of the item to grade next, as a project's queue draws it
    (core.stats.queue.next_item): the stratum the grades so far say helps most, then a random item of it.
    ``positions`` and ``grades`` (in [0, 1]): what is graded; ``skipped``: passed over (drawn again last);
    ``reserved``: handed out and not graded yet; ``seed``: the project's. None once every item is taken.

    >>> plan = design(prepare(example_pool()))
    >>> first = next_item(plan)
    >>> next_item(plan, reserved=[first]) != first
    True
    """
    state = queue.QueueState.from_lists(positions, grades, skipped, reserved)
    return queue.next_item(plan, state, seed)


def estimate(
    plan: Design,
    positions: ArrayLike,
    grades: ArrayLike,
    method: str = "default",
    level: float = LEVEL,
) -> Estimate:
    """The pool's mean grade estimated from ``grades`` (in [0, 1]) of the items at ``positions``
    (core.stats.estimate.estimate): ``value``, ``se``, the fixed-n interval ``ci_low``, ``ci_high`` at
    ``level``, ``n``, and ``strata`` (one row per stratum). The value is NaN and the interval [0, 1] while a
    stratum has no grade (``missing``).

    >>> items = prepare(example_pool())
    >>> plan = design(items)
    >>> every = list(range(plan.N))
    >>> exact = estimate(plan, every, items["label"])  # every item graded: the pool's mean, no doubt left
    >>> bool(round(exact.value, 4) == round(items["label"].mean(), 4)), exact.ci_high - exact.ci_low < 1e-9
    (True, True)
    >>> estimate(plan, [0], [1.0]).missing  # one grade, in stratum 0: strata 1 and 2 have none
    (1, 2)
    """
    return estimate_grades(plan, positions, grades, method, level)


def simulate(
    items: pd.DataFrame,
    budgets: Sequence[str | float] = DEFAULT_BUDGETS,
    *,
    reps: int = 1000,
    seed: int = 0,
    **options: Any,
) -> dict[str, Any]:
    """How ActiveGrade and the other methods would have done on labelled ``items`` (``prepare``'s table with a
    ``label`` column), replayed ``reps`` times at each budget (a share of the pool such as ``"0.1"``, or a
    count) (core.stats.simulate.simulate, the CLI's ``simulate``; ``options`` are its). Returns ``N``, the
    true mean ``mu`` and, by method and budget, each figure with its Monte Carlo standard error:
    ``mse_ratio`` (against uniform sampling), ``bias``, ``coverage``, ``ci_width``, ``budget_saving``, ...;
    core.stats.simulate.format_table prints it.

    >>> result = simulate(prepare(example_pool()), ["0.5"], reps=50)
    >>> result["N"], round(result["mu"], 4), list(result["methods"])[-1]
    (60, 0.4833, 'activegrade')
    >>> ours = result["methods"]["activegrade"]["0.5"]
    >>> ours["n"], ours["mse_ratio"] < 1  # 30 grades, closer than 30 drawn at random
    (30.0, True)
    """
    return simulate_methods(items, budgets, reps=reps, seed=seed, **options)
