"""Pools with several targets: the long format, one row per item and model, split into one pool per model.

A comparison pool has a `model` column (TARGET_COLUMN) beside the usual `id`, `prompt`, `response`, optional
`answer` and `label`: item `id` appears once for every model, with that model's response. Surrogate samples
are per item (by `id`), shared by every target. `split_targets` checks the shape (every id for every model,
one prompt per id, at least two models, at least two items) and gives each model's rows in one item order,
so position p is the same item for every target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import InputError, hidden_character, one_line

TARGET_COLUMN = "model"
"""The column naming the target model of each row of a comparison pool."""


@dataclass(frozen=True)
class Targets:
    """A comparison pool split by target.

    models: the target names, sorted (the order of every pair "A - B").
    pools:  model -> that model's rows as an ordinary pool (no TARGET_COLUMN), items in the order of their
            first appearance in the file, the same order for every model.
    """

    models: tuple[str, ...]
    pools: dict[str, pd.DataFrame]

    @property
    def ids(self) -> list[str]:
        return self.pools[self.models[0]]["id"].tolist()


def response_column(model: str) -> str:
    """The item-data column holding `model`'s response in a comparison project's stored items."""
    return f"response::{model}"


def has_targets(pool: pd.DataFrame) -> bool:
    """Whether the pool is in the long format of several targets: a TARGET_COLUMN naming two models or more
    (a one-model pool may carry a `model` column as metadata, and stays a one-model pool)."""
    return TARGET_COLUMN in pool.columns and pool[TARGET_COLUMN].dropna().astype(str).str.strip().nunique() > 1


def split_targets(pool: pd.DataFrame, file: str | None = None) -> Targets:
    """The pool's rows by model (module docstring); InputError naming the file, row and fix for a bad shape.

    `pool` is core.inputs.io.load_inputs's pool (ids already unique per model). Rows are 1-based positions in
    `pool` (as a person counts them in a JSONL file).
    """
    if TARGET_COLUMN not in pool.columns:
        raise InputError(
            f"the pool has no '{TARGET_COLUMN}' column",
            file=file,
            column=TARGET_COLUMN,
            fix="give one row per item and model, naming the model in a 'model' column",
        )
    names = pool[TARGET_COLUMN]
    blank = names.isna() | (names.astype(str).str.strip() == "")
    if blank.any():
        row = int(blank.to_numpy().nonzero()[0][0])
        raise InputError(
            "the row names no model", file=file, row=row + 1, column=TARGET_COLUMN, fix="name the target model"
        )
    names = names.astype(str).str.strip()
    models = tuple(sorted(names.unique()))
    hidden = next(((m, h) for m in models if (h := hidden_character(m)) is not None), None)
    if hidden is not None:  # "gpt-4" and "gpt-4\u200b": two models shown as one
        row = int((names == hidden[0]).to_numpy().nonzero()[0][0])
        raise InputError(
            f"the model name {one_line(hidden[0])!r} holds the invisible character {hidden[1]}",
            file=file,
            row=row + 1,
            column=TARGET_COLUMN,
            fix="name every model with visible characters",
        )
    if len(models) < 2:
        raise InputError(
            f"the pool names one model ('{models[0]}'); a comparison needs two or more",
            file=file,
            column=TARGET_COLUMN,
            fix="add the rows of the other models, or drop the 'model' column for a one-model project",
        )
    ids = pd.Index(pd.unique(pool["id"]))
    counts = names.value_counts()
    lonely = [m for m in models if counts[m] < 2]
    if lonely:
        raise InputError(
            f"model '{lonely[0]}' has only one row",
            file=file,
            row=_first_row(names == lonely[0]),
            column=TARGET_COLUMN,
            fix="a comparison needs every model's response to at least two items",
        )
    frame = pool.assign(**{TARGET_COLUMN: names})
    pools, rows_of = {}, {}
    for model in models:
        rows = frame[frame[TARGET_COLUMN] == model].set_index("id", drop=False)
        missing = ids.difference(rows.index, sort=False)
        if len(missing):
            raise InputError(
                f"item '{missing[0]}' has no row for model '{model}'"
                + (f" (and {len(missing) - 1} more items)" if len(missing) > 1 else "")
                + f"; its first row is for '{names.iat[_first_row(pool['id'] == missing[0]) - 1]}'",
                file=file,
                row=_first_row(pool["id"] == missing[0]),
                column="id",
                fix=f"add the item's row for '{model}' (every item needs one row for every model), or remove the item",
            )
        # each row's place in the file, 1-based, for the prompt check
        rows_of[model] = pd.Series(np.flatnonzero(frame[TARGET_COLUMN] == model) + 1, index=rows.index).loc[ids]
        pools[model] = rows.loc[ids].drop(columns=TARGET_COLUMN).reset_index(drop=True)
    _check_same_prompts(pools, rows_of, models, file)
    return Targets(models, pools)


def _first_row(mask: pd.Series) -> int:
    """The 1-based row of the first True in ``mask``."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 1


def _check_same_prompts(
    pools: dict[str, pd.DataFrame], rows_of: dict[str, pd.Series], models: tuple[str, ...], file: str | None
) -> None:
    """InputError naming the row of the first item whose prompt differs between a model and the first one."""
    first = pools[models[0]]["prompt"].astype(str).to_numpy()
    for model in models[1:]:
        differs = first != pools[model]["prompt"].astype(str).to_numpy()
        if differs.any():
            at = int(differs.nonzero()[0][0])
            item = pools[model]["id"].iat[at]
            raise InputError(
                f"item '{item}' has a different prompt for model '{model}' than for '{models[0]}' (row "
                f"{rows_of[models[0]].iat[at]})",
                file=file,
                row=int(rows_of[model].iat[at]),
                column="prompt",
                fix="an item is one prompt answered by every model: give each model's row the same prompt",
            )


def pool_targets(pool: pd.DataFrame, file: str | None = None) -> tuple[str, ...]:
    """The models a pool compares, sorted: () for a one-model pool, else `split_targets`'s (which checks the
    long format and names the file, row and fix when it is wrong)."""
    return split_targets(pool, file).models if has_targets(pool) else ()


def refuse_targets(pool: pd.DataFrame, file: str | None = None) -> None:
    """InputError where a pool of several targets reaches a one-target path (`prepare`, which writes one items
    table): its rows would be taken for separate items. ``file`` names the pool in the message."""
    if has_targets(pool):
        models = sorted(pool[TARGET_COLUMN].dropna().astype(str).str.strip().unique())
        raise InputError(
            f"the pool names {len(models)} models ({', '.join(models[:3])}{', ...' if len(models) > 3 else ''}) "
            "in its 'model' column: a comparison, which a one-model project cannot hold",
            file=file,
            column=TARGET_COLUMN,
            fix="simulate the comparison with `python -m core simulate`, or give the rows of one model "
            "(without the 'model' column) for a one-model project",
        )
