"""Readers for evaluation outputs as they are: lm-evaluation-harness samples files, Inspect AI logs,
Hugging Face datasets, beside the JSONL/CSV/Parquet tables of core.inputs.tables.

Each reader turns its source into a `core.inputs.tables.Table` in the pool's layout
(id, prompt, response, reference, metric or score columns), with a samples
table of the source's own repeats when it holds any, or into the samples'
layout (id, sample, surrogate); `load` then runs `core.inputs.io.load_inputs` on them, so
every pool gets the same checks. `--columns TARGET=SOURCE,...` picks or
renames columns after reading (a dataset's `instruction` as the prompt, a
metric as the label).

Formats (`--format`): table (JSONL, CSV, Parquet), lm-eval, inspect, hf;
auto (the default) tells them apart: a folder saved by `save_to_disk`, an
.arrow file or an uploaded .zip/.tar.gz of such a folder is hf, a .eval file or a .json file holding an Inspect log is
inspect, a JSONL whose records have doc_id and resps is lm-eval, anything else
is a table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from core.errors import InputError
from core.inputs.io import Inputs, among_ids, load_inputs, pool_positions
from core.inputs.readers import hf_dataset, inspect_log, lm_eval
from core.inputs.tables import Source, Table, _read_bytes, name_of, paused_gc, read_column, read_table, read_table_where
from core.inputs.targets import pool_targets

FORMATS = ("auto", "table", "lm-eval", "inspect", "hf")
UPLOAD_TYPES = ("jsonl", "json", "csv", "parquet", "eval", "arrow", "zip", "tar.gz", "tgz")
"""File extensions the Projects page accepts for a pool or samples upload (a zipped save_to_disk folder:
core.inputs.archives)."""


def detect(source: Source) -> str:
    """The format of a source by its name or first bytes (lm-eval is told apart only once read: 'table')."""
    if hf_dataset.looks_like(source):
        return "hf"
    name = name_of(source).lower()
    if name.endswith(".json"):
        try:
            head = _read_bytes(source)[1][:4096]
        except InputError:
            return "table"  # read_table words the error
        return "inspect" if inspect_log.looks_like(source, head) else "table"
    return "inspect" if inspect_log.looks_like(source) else "table"


def read_pool(source: Source, fmt: str = "auto", rows: range | None = None) -> tuple[Table, Table | None]:
    """The pool as a table in the pool's layout, and the samples of its own repeats (lm-eval repeats, Inspect
    epochs) when it holds any; ``rows``: those rows of the pool alone (a plain Parquet table has only their
    row groups decoded, core.inputs.tables.read_table)."""
    fmt = _format(source, fmt)
    if fmt == "table":
        table = read_table(source, rows)
        if not lm_eval.looks_like(table.frame):
            return table, None
        fmt = "lm-eval"
    if fmt == "inspect":
        table, own = inspect_log.read_pool(source)
    elif fmt == "hf":
        table, own = hf_dataset.read_dataset(source), None
    else:
        table, own = lm_eval.read_pool(read_table(source))
    return (table, own) if rows is None else (table.take(np.arange(len(table.frame))[rows.start : rows.stop]), own)


def read_samples(
    source: Source,
    fmt: str = "auto",
    keep: Callable[[Table], np.ndarray] | None = None,
    within: range | None = None,
) -> Table:
    """The surrogate samples as a table in the samples' layout; ``keep``, a mask of the rows of a table in
    that layout (core.inputs.io.among_ids), cuts it to those rows (a plain Parquet table has only their row
    groups decoded, core.inputs.tables.read_table_where, and only the rows ``within`` searched)."""
    fmt = _format(source, fmt)
    if fmt == "inspect":
        table = inspect_log.read_samples(source)
    elif fmt == "hf":
        table = hf_dataset.read_dataset(source)
    else:
        plain = keep is not None and fmt != "lm-eval"
        table = read_table_where(source, "id", keep, within) if plain else read_table(source)
        if fmt == "lm-eval" or lm_eval.looks_like(table.frame):
            table = lm_eval.read_samples(table)
        elif keep is not None:
            return table
    return table if keep is None else cut(table, keep)


def sample_rows_by_chunk(samples: Source, pool: pd.Series, pool_name: str, size: int) -> list[range] | None:
    """For each chunk of ``size`` pool rows (``pool``: their ids, in pool order), the rows of a samples file
    from the chunk's first sample to its last (empty for a chunk without samples): where that chunk's read
    searches (load's ``sample_rows``). None unless the file is a Parquet table with an id column, read
    alone here once (a text file is parsed whole by each chunk anyway). Every sample id is checked on the
    way: one of no pool item is an InputError (core.inputs.io.pool_positions), so that the chunks, each
    checking its own samples, check them all."""
    ids = read_column(samples, "id") if _format(samples, "auto") == "table" else None
    if ids is None:
        return None
    count = -(-len(pool) // size)
    chunk = pool_positions(ids, pool, pool_name) // size
    rows = np.arange(chunk.size)
    first, last = np.full(count, chunk.size), np.full(count, -1)
    np.minimum.at(first, chunk, rows)
    np.maximum.at(last, chunk, rows)
    return [range(int(f), int(t) + 1) if t >= 0 else range(0) for f, t in zip(first, last)]


def cut(table: Table, keep: Callable[[Table], np.ndarray]) -> Table:
    """The rows of a table where ``keep`` is true (all of them when it lacks an id, for load_inputs to say so)."""
    return table.take(np.flatnonzero(keep(table))) if "id" in table.frame.columns else table


def parse_columns(text: str | None) -> dict[str, str]:
    """'prompt=instruction, label=score' -> {"prompt": "instruction", "label": "score"} (target -> source)."""
    mapping: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        target, sep, source = (p.strip() for p in part.partition("="))
        if not sep or not target or not source:
            raise InputError(
                f"column choice {part.strip()!r} is not TARGET=SOURCE",
                column="--columns",
                fix="write e.g. prompt=instruction,response=output,label=score",
            )
        if target in mapping:
            raise InputError(f"column {target!r} is chosen twice", column="--columns", fix="choose it once")
        mapping[target] = source
    return mapping


MOVED = ("id", "samples")
"""Targets whose source column is moved, not copied: an item's identity and its samples are no metadata, and a
second id column, or a second copy of every sample, in the items table would only mislead."""


def pick_columns(table: Table, mapping: dict[str, str]) -> Table:
    """The table with column TARGET set to column SOURCE for each choice (replacing a TARGET already there;
    SOURCE stays, as metadata, so one metric can be both the label and the proxy; the sources of MOVED targets
    are dropped unless another choice reads them)."""
    if not mapping:
        return table
    frame = table.frame
    missing = [source for source in mapping.values() if source not in frame.columns]
    if missing:
        raise InputError(
            f"there is no column {missing[0]!r} to choose",
            file=table.name,
            column=missing[0],
            fix=f"choose among {', '.join(map(str, frame.columns))}",
        )
    frame = frame.assign(**{target: frame[source] for target, source in mapping.items()})
    kept = {source for target, source in mapping.items() if target not in MOVED} | set(mapping)
    moved = {mapping[target] for target in MOVED if target in mapping} - kept
    frame = frame.drop(columns=sorted(moved))

    def label(column: str) -> str:  # the user's own column, as an error names it: 'final', not 'label' (a review)
        return mapping[column] if column in mapping else table.column_label(column)

    return Table(table.name, frame, lambda: table.rows, label, table.note)


@paused_gc()
def load(
    pool: Source,
    samples: Source | None = None,
    *,
    fmt: str = "auto",
    samples_fmt: str = "auto",
    columns: dict[str, str] | str | None = None,
    rows: range | None = None,
    sample_rows: range | None = None,
) -> Inputs:
    """`core.inputs.io.load_inputs` on the pool and samples read by their readers, after `--columns` choices.

    ``rows``, a range of pool rows, reads those rows and the samples whose id is one of theirs alone, in file
    order, for a chunk of a preparation (core.jobs.preparation_job) that scores only those items: the other
    samples are neither checked nor kept (at 10^6 items, 9 of every 10 of the 10^7 samples a chunk of 10^5
    items does not use, and a Parquet file has only the row groups of the rest decoded). The preparation
    checked the whole files before it split them. ``sample_rows``: rows of the samples file that hold all
    of those (`sample_rows_by_chunk`), the only ones searched."""
    mapping = parse_columns(columns) if isinstance(columns, str) or columns is None else columns
    pool_table, own = read_pool(pool, fmt, rows)
    if own is not None and samples is not None:
        raise InputError(
            f"samples are given twice: the pool's own repeats and {name_of(samples)}",
            file=pool_table.name,
            fix="give the target's file with one answer per item, or leave out the samples file",
        )
    pool_table = pick_columns(pool_table, mapping)
    keep = None if rows is None else among_ids(pool_table)
    if samples is not None:
        return load_inputs(pool_table, read_samples(samples, samples_fmt, keep, sample_rows))
    return load_inputs(pool_table, own if own is None or keep is None else cut(own, keep))


class ReadSettings(Protocol):
    """What of a project's settings reading its uploads takes (core.settings.ProjectSettings has them)."""

    input_format: str
    columns: str
    targets: list[str]


def read_project_inputs(
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: ReadSettings,
    rows: range | None = None,
    sample_rows: range | None = None,
) -> Inputs:
    """`load` with a project's settings: `input_format` for the pool, `columns` (core.settings.ProjectSettings)."""
    return load(
        pool,
        samples,
        fmt=settings.input_format,
        columns=settings.columns or None,
        rows=rows,
        sample_rows=sample_rows,
    )


def load_project_inputs(
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None,
    settings: ReadSettings,
    rows: range | None = None,
    sample_rows: range | None = None,
) -> Inputs:
    """`read_project_inputs`, checked against the project's `targets`: a pool of several targets
    (core.inputs.targets) must name exactly those, a one-model project's pool none; InputError otherwise."""
    inputs = read_project_inputs(pool, samples, settings, rows, sample_rows)
    found = pool_targets(inputs.pool, pool[0])
    if list(found) != list(settings.targets):
        raise InputError(
            f"the pool names the models {', '.join(found) or '(none)'}, the project compares "
            f"{', '.join(settings.targets) or 'none (one model)'}",
            file=pool[0],
            column="model",
            fix="upload the pool the project was made with",
        )
    return inputs


def _format(source: Source, fmt: str) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown input format {fmt!r}", column="--format", fix=f"use one of {', '.join(FORMATS)}")
    if fmt == "auto":
        return detect(source)
    if fmt == "hf" and not isinstance(source, tuple) and not Path(source).exists():
        raise InputError("no such file or folder", file=name_of(source), fix="check the path")
    return fmt
