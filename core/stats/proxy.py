"""An existing score as the design's proxy: a judge's verdict, a reward model's score, a metric.

Any numeric pool column can drive the design instead of the surrogate's
agreement (docs/method.md, *Proxies*): it decides the strata and the predicted
grade behind the approximate Neyman spreads, and it is the first covariate
of the difference estimator. The design stays valid whatever the proxy is
worth; only its efficiency changes.

Rule for combining it with the surrogate signals (agreement, semantic
entropy) when samples exist: the proxy alone makes the strata and the
allocation; agreement and entropy join it only as covariates of the
difference estimator (core.stats.model_assisted, a cross-fitted ridge slope). So
the default design and estimator are exactly those of the proxy alone, and
the surrogate signals can never make them worse.

The prepared items keep the proxy's predicted grade in [0, 1] in the column
PROXY_COLUMN and the pool column it came from in `items.attrs["proxy"]`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from core.errors import InputError
from core.inputs.io import POOL_OPTIONAL, POOL_REQUIRED
from core.inputs.tables import Source
from core.stats.strata import merge_small_strata

PROXY_COLUMN = "proxy"
"""Items column with the proxy's predicted grade in [0, 1] (NaN where the pool gives none)."""

VERDICT_WORDS = {
    **{word: 1.0 for word in ("correct", "right", "true", "yes", "pass", "passed")},
    **{word: 0.0 for word in ("incorrect", "wrong", "false", "no", "fail", "failed")},
    "partial": 0.5,
}
"""A judge's verdict words, in any case, as the proxy's numbers."""
LETTER_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's letter grades CORRECT, PARTIAL, INCORRECT, NOANSWER (inspect_ai.scorer's value_to_float), capitals
only: any other word or letter is refused (an 'A' is an answer, not a verdict)."""
VERDICT_FIX = (
    "write the verdict as numbers (1 right, 0 wrong), e.g. in pandas df['{column}_score'] = (df['{column}'] == "
    "df['reference']).astype(int), and give that column; the words correct/incorrect, true/false, yes/no, "
    "pass/fail and C/P/I/N are read as they are"
)

SURROGATE = "agreement"
"""What a design without a proxy column predicts grades from (the surrogate's agreement)."""


def proxy_values(pool: pd.DataFrame, column: str, *, file: str | None = None) -> np.ndarray:
    """The pool column `column` as floats; blank cells are NaN (such items get a stratum of their own). A column
    of verdict words (no number in it) is read through VERDICT_WORDS and LETTER_GRADES.

    InputError names the column (with the pool's numeric columns) when it is missing, and the first item
    whose value is not a number: by its id, and by its 1-based row in `pool`, or by `file` when given
    (whose row numbering depends on the format, as in core.stats.simulate.labels_of).
    """
    if column == "label":
        raise InputError(
            "the label is the grade to estimate, not a proxy", file=file, column=column, fix="choose another column"
        )
    if column not in pool.columns:
        raise InputError(
            f"the pool has no column {column!r} to use as the proxy",
            file=file,
            column=column,
            fix=f"use one of its numeric columns: {', '.join(numeric_columns(pool)) or 'none'}",
        )
    raw = pool[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    blank = raw.isna().to_numpy() | raw.astype(str).str.strip().eq("").to_numpy()
    verdicts = bool(np.isnan(values[~blank]).all())  # not one number: a column of verdict words
    if verdicts:
        text = raw.astype(str).str.strip()
        values = text.str.lower().map(VERDICT_WORDS).fillna(text.map(LETTER_GRADES)).to_numpy(dtype=float, copy=True)
        values[blank] = np.nan
    bad = (np.isnan(values) & ~blank) | np.isinf(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        item = f" of item '{pool['id'].iat[row]}'" if "id" in pool.columns else ""
        raise InputError(
            f"proxy value {raw.iat[row]!r}{item} is not a number" + (" nor a verdict word" if verdicts else ""),
            file=file,
            row=None if file else row + 1,
            column=column,
            fix=VERDICT_FIX.format(column=column)
            if verdicts
            else "give the proxy column a number for every item, or leave the cell empty",
        )
    if np.isnan(values).all():
        raise InputError(
            f"the proxy column {column!r} has no value", file=file, column=column, fix="choose a column with scores"
        )
    return values


def numeric_columns(pool: pd.DataFrame, exclude: tuple[str, ...] = POOL_REQUIRED + POOL_OPTIONAL) -> list[str]:
    """Columns whose every non-blank cell is a finite number, other than the pool's own columns (an answer
    like "56" is text, the label is the grade): the candidates for a proxy."""
    found = []
    for column in pool.columns:
        if column in exclude or pool[column].map(lambda v: isinstance(v, (list, dict))).any():
            continue
        raw = pool[column].dropna()
        raw = raw[raw.astype(str).str.strip() != ""]
        values = pd.to_numeric(raw, errors="coerce")
        if len(raw) and values.notna().all() and np.isfinite(values.to_numpy(dtype=float)).all():
            found.append(str(column))
    return found


def proxy_choices(pool: Source, fmt: str = "auto", columns: str | None = None) -> list[str]:
    """The numeric columns of a pool file or upload as core.inputs.readers reads it, for a choice of proxy."""
    from core.inputs.readers import parse_columns, pick_columns, read_pool

    return numeric_columns(pick_columns(read_pool(pool, fmt)[0], parse_columns(columns)).frame)


def predicted_grade(values: np.ndarray) -> np.ndarray:
    """The proxy as a predicted grade in [0, 1]: as it is when every value lies in [0, 1], else its
    mid-rank empirical distribution function (rank - 1/2) / n (ties share their mean rank), so a reward
    model's unbounded score keeps its order and no outlier squeezes the rest. NaN stays NaN. The grades
    recalibrate the scale as they arrive (core.stats.spreads.calibrated_prior_sd)."""
    values = np.asarray(values, dtype=float)
    known = np.isfinite(values)
    if ((values[known] >= 0) & (values[known] <= 1)).all():
        return values.copy()
    out = np.full(values.size, np.nan)
    out[known] = (stats.rankdata(values[known]) - 0.5) / known.sum()
    return out


def proxy_strata(values: np.ndarray, n_strata: int, min_size: int) -> np.ndarray:
    """Strata 0..H-1 in increasing order of the proxy; items without a value form one more, numbered last.

    A proxy with at most n_strata distinct values (a verdict: 0, 1/2, 1) gets one stratum per value;
    otherwise the cut points are the quantiles at 1/n_strata, ..., (n_strata - 1)/n_strata, a value
    equal to a cut point going to the upper bin (equal-frequency strata; ties stay together). Strata
    smaller than `min_size` are merged into a neighbour (core.stats.strata.merge_small_strata).
    """
    if int(n_strata) != n_strata or n_strata < 1:
        raise InputError(f"number of strata must be a positive whole number, got {n_strata}", fix="use e.g. 5")
    values = np.asarray(values, dtype=float)
    known = np.isfinite(values)
    strata = np.zeros(values.size, dtype=int)
    if known.any():
        distinct = np.unique(values[known])
        if distinct.size <= n_strata:
            inner = np.searchsorted(distinct, values[known])
        else:
            cuts = np.quantile(values[known], np.linspace(0.0, 1.0, int(n_strata) + 1)[1:-1])
            inner = np.searchsorted(cuts, values[known], side="right")
        strata[known] = merge_small_strata(inner, min_size)
        strata[~known] = strata[known].max() + 1
    return strata


def proxy_name(items: pd.DataFrame) -> str:
    """Which proxy a design from these items uses: the pool column named when they were prepared, or
    the surrogate's agreement."""
    if PROXY_COLUMN not in items.columns:
        return f"{SURROGATE} (surrogate)"
    return str(items.attrs.get("proxy", PROXY_COLUMN))
