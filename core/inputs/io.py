"""Read and validate the pool and surrogate-sample files: JSONL, CSV or Parquet.

`load_inputs` is pure reading: it never writes, never changes a value it was
given (numbers in text columns become their decimal text, nothing else is
touched) and raises `core.errors.InputError` naming the file, the row (as a
person sees it in the file, see core.inputs.tables) or column, and the fix for every
malformed input. A missing value (null, absent key) is an error in every
required column; an empty or whitespace-only id or prompt is too. An empty
response or sample is kept: a model that answers nothing gave an answer that
graders grade (TruthfulQA counts non-answers as truthful, and
../shared/data/truthfulqa has both). Checks are vectorised pandas/numpy
operations: see benchmarks/io_load.md for the speed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from core.errors import InputError, hidden_character, one_line
from core.inputs.limits import MAX_ID_CHARS
from core.inputs.tables import (
    BadJson,
    Source,
    Table,
    check_column_count,
    kind_of,
    name_of,
    parse_json,
    paused_gc,
    read_table,
)
from core.inputs.targets import TARGET_COLUMN

MAX_FIELD_CHARS = 1_000_000
"""Longest text accepted in any one field (about 250,000 tokens)."""

POOL_REQUIRED = ("id", "prompt", "response")
POOL_OPTIONAL = ("answer", "reference", "label", "image", "samples")
SCORE_COLUMNS = ("n_samples", "n_clusters", "semantic_entropy", "semantic_entropy_weighted", "agreement", "stratum")
"""The columns a preparation adds to the pool's (core.surrogate.prepare): read from a pool, they are dropped."""
SAMPLES_REQUIRED = ("id", "sample")
SAMPLES_OPTIONAL = ("logprob", "surrogate")

SPREADSHEET_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\0")


@dataclass(frozen=True)
class Inputs:
    """A validated pool and its surrogate samples (see docs/architecture.md).

    pool: one row per item, the file's order; `id`, `prompt`, `response` as
    str, optional `answer`, `reference`, `image` as str ("" where an item has
    none), `label` as float in [0, 1] (NaN where unknown), other columns as read.
    samples: one row per sample; `id`, `sample` (str), `logprob` (float or
    NaN), `surrogate` (str or ""), then any extra columns of the samples file.
    without_samples: ids of pool items with no sample, in pool order.
    scores_dropped: the SCORE_COLUMNS an earlier preparation wrote into the pool (an items table given back as a
    pool), which a preparation computes afresh (`without_scores`).
    """

    pool: pd.DataFrame
    samples: pd.DataFrame
    without_samples: list[str]
    scores_dropped: tuple[str, ...] = ()


@paused_gc()
def load_inputs(pool: Source | Table, samples: Source | Table | None = None) -> Inputs:
    """Read, check and normalise a pool and (optionally) a samples file.

    `pool` and `samples` are paths or `(file_name, bytes)` upload pairs, or
    tables another reader made (core.inputs.readers: eval logs, datasets). The
    samples come either from the second file (long format) or from a
    list-valued `samples` column in the pool, not both.

    A chunk of a preparation reads its pool rows and their samples alone (core.inputs.readers.load's
    ``rows``, with `among_ids`) and gives them here.
    """
    read = _table(pool)
    pool_table = without_scores(read)
    _check_columns(pool_table, POOL_REQUIRED, POOL_OPTIONAL)
    pool_frame = _validate_pool(pool_table)
    if "samples" in pool_table.frame.columns:
        if samples is not None:
            raise InputError(
                f"samples are given twice: in the pool's 'samples' column and in "
                f"{samples.name if isinstance(samples, Table) else name_of(samples)}",
                file=pool_table.name,
                column="samples",
                fix="give the samples either as a column of the pool or as a separate file, not both",
            )
        sample_table = _samples_from_column(pool_table, pool_frame["id"])
        pool_frame = pool_frame.drop(columns="samples")
    elif samples is not None:
        sample_table = _table(samples)
        _check_columns(sample_table, SAMPLES_REQUIRED, SAMPLES_OPTIONAL)
    else:
        sample_table = Table.of_frame(
            pool_table.name, pd.DataFrame({"id": pd.Series([], dtype=str), "sample": pd.Series([], dtype=str)})
        )
    sample_frame = _validate_samples(sample_table, pool_frame["id"], pool_table.name)
    has_samples = _member(pool_frame["id"], sample_frame["id"])
    return Inputs(
        pool=pool_frame,
        samples=sample_frame,
        without_samples=pool_frame.loc[~has_samples, "id"].tolist(),
        scores_dropped=scores_in(read),
    )


def scores_in(table: Table) -> tuple[str, ...]:
    """The SCORE_COLUMNS an earlier preparation wrote into ``table`` (an items file given back as a pool)."""
    return tuple(column for column in SCORE_COLUMNS if column in table.frame.columns)


def without_scores(table: Table) -> Table:
    """The table without the SCORE_COLUMNS an earlier preparation wrote (an items file given back as a pool):
    a preparation computes them afresh."""
    earlier = list(scores_in(table))
    if not earlier:
        return table
    return Table(table.name, table.frame.drop(columns=earlier), lambda: table.rows, table.column_label, table.note)


def spreadsheet_safe(value: object) -> object:
    """Make one cell inert for spreadsheets before writing it to a CSV export.

    A string that starts with = + - @ TAB, CR (OWASP "CSV Injection") or NUL
    (OWASP ASVS 5.0 requirement 1.2.10) gets a leading single quote, which
    Excel, LibreOffice and Google Sheets read as "this cell is text".
    Anything else, numbers included, is returned unchanged.
    """
    if isinstance(value, str) and value.startswith(SPREADSHEET_TRIGGERS):
        return "'" + value
    return value


# --------------------------------------------------------------------------- checking


def _check_columns(table: Table, required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    """Every required column present; no column that looks like a misspelt expected one."""
    present = [str(column) for column in table.frame.columns]
    expected = required + optional
    missing = [column for column in required if column not in present]
    if missing:  # every one named at once: one run a column, a user fixed one a run (a new user's review)
        spare = [name for name in present if name not in expected]
        guesses = {column: _closest(column, spare, cutoff=0.6) for column in missing}
        mapped = ",".join(f"{column}={guess}" for column, guess in guesses.items() if guess)
        fixes = [f"rename column '{guess}' to '{column}'" for column, guess in guesses.items() if guess]
        fixes += [f"add a '{column}' column" for column, guess in guesses.items() if not guess]
        fix = "; ".join(fixes) + f" (columns found: {', '.join(present)})"
        if mapped:
            fix += f"; or map them without renaming: the columns setting {mapped} (--columns on the command line)"
        problem = (
            "a required column is missing"
            if len(missing) == 1
            else f"required columns are missing: {', '.join(missing)}"
        )
        raise InputError(problem, file=table.name, column=missing[0], fix=fix)
    for name in present:
        if name in expected:
            continue
        guess = _closest(name, [column for column in optional if column not in present], cutoff=0.8)
        if guess:
            raise InputError(
                f"the column name looks like a misspelling of '{guess}'",
                file=table.name,
                column=name,
                fix=f"rename it to '{guess}', or to a clearly different name if it is other data",
            )


def _closest(word: str, candidates: list[str], *, cutoff: float) -> str | None:
    """The candidate closest to `word` ignoring case (difflib ratio >= cutoff), or None."""
    lowered = {candidate.lower(): candidate for candidate in candidates}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[match[0]] if match else None


def _validate_pool(table: Table) -> pd.DataFrame:
    frame = table.frame
    ids = _text_column(table, "id", what="the id", required=True)
    table.fail(
        ids.str.len().to_numpy() > MAX_ID_CHARS,
        "id",
        lambda position: f"the id is {len(ids.iloc[position]):,} characters long, over the limit of {MAX_ID_CHARS}",
        "use shorter ids (a number or a short code); keep long text in another column",
    )
    hidden = ids.map(hidden_character)
    table.fail(
        (hidden.notna() | (ids != ids.str.strip())).to_numpy(dtype=bool),
        "id",
        lambda position: (
            f"the id {one_line(ids.iloc[position])!r} holds "
            + (
                f"the invisible character {hidden.iloc[position]} (a control, format, zero-width, "
                "bidirectional or filler one, or a space other than the plain one)"
                if hidden.iloc[position] is not None
                else "a space at its start or end"
            )
            + ", which would show one id as another"
        ),
        "use ids of visible characters on one line, without spaces at either end (a number or a short code)",
    )
    _check_unique_ids(table, ids)
    checked = {"id": ids}
    checked["prompt"] = _text_column(table, "prompt", what="the prompt", required=True)
    checked["response"] = _text_column(table, "response", what="the response", required=True, blank_ok=True)
    for column in ("answer", "reference", "image"):
        if column in frame.columns:
            checked[column] = _text_column(table, column, what=f"the {column}", required=False)
    if "label" in frame.columns:
        checked["label"] = _label_column(table)
    for column in frame.columns:
        if column not in checked and column != "samples":
            _check_cells(table, column, frame[column])
            _check_storable(table, column, frame[column])
    return frame.assign(**checked).reset_index(drop=True)


def _check_unique_ids(table: Table, ids: pd.Series) -> None:
    """Every id once; in a pool with a TARGET_COLUMN (several models, long format) every (id, model) once."""
    several = TARGET_COLUMN in table.frame.columns
    keys = ids + "\x00" + table.frame[TARGET_COLUMN].astype(str).to_numpy() if several else ids
    repeated = keys.duplicated(keep=False).to_numpy()
    if not repeated.any():
        return
    first = int(np.flatnonzero(repeated)[0])
    value = ids.iloc[first]
    rows = table.rows[np.flatnonzero((keys == keys.iloc[first]).to_numpy())]
    others = keys[repeated].nunique() - 1
    more = f" (and {others} more repeated id{'s' if others > 1 else ''})" if others else ""
    model = f" for model '{table.frame[TARGET_COLUMN].iloc[first]}'" if several else ""
    raise InputError(
        f"id '{value}'{model} is used more than once, on rows {', '.join(str(row) for row in rows)}{more}",
        file=table.name,
        row=int(rows[0]),
        column="id",
        fix="give every item its own id, or remove the repeated rows",
    )


def _text_column(table: Table, column: str, *, what: str, required: bool, blank_ok: bool = False) -> pd.Series:
    """The column as str; numbers become their decimal text.

    Errors: a value that is neither text nor a number; a value longer than
    MAX_FIELD_CHARS; in a required column, a missing value (null, absent key)
    and, unless `blank_ok`, an empty or whitespace-only one. Missing values of
    an optional column become "".
    """
    values = table.frame[column]
    if not isinstance(values.dtype, pd.StringDtype):
        raw = values.to_numpy(dtype=object)
        converted = [_cell_text(value) for value in raw]
        bad = np.fromiter((value is _NOT_TEXT for value in converted), dtype=bool, count=len(converted))
        table.fail(
            bad,
            column,
            lambda position: f"{what} must be text, but it is {kind_of(raw[position])}",
            f"write {what} as a string",
        )
        values = pd.Series(converted, dtype=object)
    values = values.reset_index(drop=True)
    if required and blank_ok:
        table.fail(
            values.isna(), column, f"{what} is missing", f'fill in {what} of every row (an empty answer is written "")'
        )
    elif required:
        blank = values.isna() | values.fillna("").str.strip().eq("")
        table.fail(blank, column, f"{what} is missing or empty", f"fill in {what} of every row")
    text = values.fillna("").astype(str)
    _check_cells(table, column, text)
    return text


class _NotText:
    """Marker for a value that cannot be read as text."""


_NOT_TEXT = _NotText()


def _cell_text(value: object) -> object:
    """str as is; int/float as decimal text; None/NaN/NA as None; anything else _NOT_TEXT."""
    if type(value) is str:
        return value
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return _NOT_TEXT
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else str(float(value))
    if isinstance(value, str):
        return str(value)
    return _NOT_TEXT


def _check_cells(table: Table, column: str, values: pd.Series) -> None:
    """Text cells: at most MAX_FIELD_CHARS characters and no NUL character
    (no text holds one on purpose, and PostgreSQL cannot store it)."""
    if values.dtype != object and not isinstance(values.dtype, pd.StringDtype):
        return
    if _arrow_text_is_clean(values):
        return
    values = values.reset_index(drop=True)
    is_text = values.map(lambda value: isinstance(value, str)).to_numpy(dtype=bool) if values.dtype == object else None
    text = values.where(is_text) if is_text is not None else values
    lengths = text.str.len().to_numpy(dtype=float, na_value=0)
    table.fail(
        lengths > MAX_FIELD_CHARS,
        column,
        lambda position: (
            f"the value is {int(lengths[position]):,} characters long, over the limit of {MAX_FIELD_CHARS:,}"
        ),
        "shorten the text, or keep long documents elsewhere and put a reference to them here",
    )
    table.fail(
        text.str.contains("\x00", regex=False).to_numpy(dtype=bool, na_value=False),
        column,
        "the text holds a NUL character (code 0)",
        "remove the NUL characters; they are usually left over from a binary or UTF-16 file",
    )


def _arrow_text_is_clean(values: pd.Series) -> bool:
    """True when an Arrow-backed text column provably passes `_check_cells`: no cell has more than
    MAX_FIELD_CHARS bytes (so no more characters) and the UTF-8 bytes of all cells hold no zero byte (NUL is
    U+0000's only encoding). Read from the Arrow buffers in a few vectorised passes, far faster than a
    per-cell search; False (check cell by cell, which also finds the row) otherwise."""
    if not isinstance(values.dtype, pd.StringDtype) or values.dtype.storage != "pyarrow":
        return False
    data = values.array.__arrow_array__()
    for chunk in getattr(data, "chunks", [data]):
        if pa.types.is_large_string(chunk.type):
            width = np.int64
        elif pa.types.is_string(chunk.type):
            width = np.int32
        else:
            return False
        _, offsets_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=width)[chunk.offset : chunk.offset + len(chunk) + 1]
        if len(offsets) < 2 or data_buffer is None:
            continue
        if np.diff(offsets).max() > MAX_FIELD_CHARS:
            return False
        if not np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]].all():
            return False
    return True


def _storable(value: object) -> bool:
    """Whether a metadata value is stored as the same JSON by SQLite and PostgreSQL: text, a finite
    number (NaN is a missing value), true/false, null, a timestamp, or a list or object of those."""
    if value is None or value is pd.NA or value is pd.NaT or isinstance(value, (str, bool, np.bool_, pd.Timestamp)):
        return True
    if isinstance(value, (int, np.integer)):
        return True
    if isinstance(value, (float, np.floating)):
        return not math.isinf(value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _storable(item) for key, item in value.items())
    if isinstance(value, (list, tuple, np.ndarray)):
        return all(_storable(item) for item in value)
    return False  # Decimal, date, time, duration, bytes, ...: JSON has no such type


def _check_storable(table: Table, column: str, values: pd.Series) -> None:
    """Metadata cells the database stores alike on SQLite and PostgreSQL (see _storable)."""
    kind = values.dtype
    if pd.api.types.is_float_dtype(kind):
        bad = np.isinf(values.to_numpy(dtype=float, na_value=np.nan))
    elif pd.api.types.is_timedelta64_dtype(kind):  # a Parquet duration: no JSON form on either database
        bad = values.notna().to_numpy(dtype=bool)
    elif not pd.api.types.is_object_dtype(kind):
        return  # integers, true/false, text, timestamps
    else:
        bad = ~values.map(_storable).to_numpy(dtype=bool)
    cells = values.to_numpy(dtype=object)
    table.fail(
        bad,
        column,
        lambda position: (
            f"the value {cells[position]!r:.60} cannot be stored: it is {_unstorable_kind(cells[position])}"
        ),
        "write metadata as text, finite numbers, true/false, lists or objects of those "
        "(a date as text such as 2024-05-01, an amount as a number)",
    )


def _unstorable_kind(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return "infinite"
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        return "a list or object holding an infinite number or a value of another type"
    return f"of type {type(value).__name__}"


def _member(values: pd.Series, universe: pd.Series) -> np.ndarray:
    """True where a text occurs in `universe`: one lookup each in Arrow's hash set of the universe
    (Series.isin on pyarrow strings loops in Python, and pandas' Index.get_indexer first makes every
    text a Python object: 4.0 s against 0.3 s for the 10^7 sample ids of benchmarks/scale.md's 10^6 pool)."""
    import pyarrow.compute as pc

    text = pa.large_string()
    return pc.is_in(pa.array(values, type=text), value_set=pa.array(universe, type=text)).to_numpy(zero_copy_only=False)


def among_ids(pool: Table) -> Callable[[Table], np.ndarray]:
    """A mask of a samples table's rows: true where the id, read as load_inputs reads ids, is one of the
    pool's (a part of a preparation's pool keeps the samples of its own items, core.inputs.readers.load)."""
    pool_ids = _text_column(pool, "id", what="the id", required=True)
    return lambda table: _member(_text_column(table, "id", what="the id", required=True), pool_ids)


def pool_positions(samples: Table, pool_ids: pd.Series, pool_name: str) -> np.ndarray:
    """Each sample row's position among ``pool_ids`` by its id, read as load_inputs reads ids (one lookup
    each in Arrow's hash table of the pool's ids). InputError, as load_inputs words it, at the first id of
    no pool item: with this, every sample id of a file is checked."""
    import pyarrow.compute as pc

    text = pa.large_string()
    ids = _text_column(samples, "id", what="the id", required=True)
    found = pc.index_in(pa.array(ids, type=text), value_set=pa.array(pool_ids, type=text))
    _refuse_unknown_ids(samples, ids, found.is_null().to_numpy(zero_copy_only=False), pool_ids, pool_name)
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def _refuse_unknown_ids(table: Table, ids: pd.Series, unknown: np.ndarray, pool_ids: pd.Series, pool_name: str) -> None:
    """InputError at the first sample whose id is in no pool row (``unknown``), with the fix: the spaces
    around it where that is all that keeps it from a pool id."""
    fix = "remove samples of items that are not in the pool, or add those items to the pool"
    if unknown.any() and _member(ids[unknown].str.strip(), pool_ids).any():
        fix = "remove the spaces around the ids so that they match the pool's ids exactly"
    table.fail(unknown, "id", lambda position: f"id '{ids.iloc[position]}' is not in the pool {pool_name}", fix)


def _table(source: Source | Table) -> Table:
    return source if isinstance(source, Table) else read_table(source)


def _numbers(table: Table, column: str, what: str, fix: str, *, booleans: bool = False) -> np.ndarray:
    """A column of numbers as float64 (missing or empty is NaN); with ``booleans``, JSON's true and false too, as
    1 and 0 (how evaluation tools write correctness, and how a proxy column reads them), and the words true and
    false in any case (a CSV cannot hold JSON's, and Excel writes TRUE: they were refused by a message whose fix
    offered them, a new user's review); anything else is an error."""
    raw = table.frame[column].reset_index(drop=True)
    objects = raw.to_numpy(dtype=object)
    if pd.api.types.is_float_dtype(raw.dtype) or pd.api.types.is_integer_dtype(raw.dtype):
        return raw.astype("float64").to_numpy()
    if isinstance(raw.dtype, pd.StringDtype):
        is_bool = np.zeros(len(raw), dtype=bool)
        blank = (raw.isna() | raw.str.strip().eq("")).to_numpy()
    else:
        is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in objects), dtype=bool, count=len(objects))
        blank = np.fromiter((_is_blank(v) for v in objects), dtype=bool, count=len(objects))
    truth = _truth_words(objects) if booleans else np.full(len(objects), np.nan)
    is_word = ~np.isnan(truth)
    numbers = pd.to_numeric(raw.astype(object).where(~(blank | is_bool | is_word)), errors="coerce").to_numpy(
        dtype="float64", copy=True
    )
    bad = (is_bool & (not booleans)) | (np.isnan(numbers) & ~blank & ~is_bool & ~is_word)
    if booleans and is_bool.any():
        numbers[is_bool] = [float(bool(v)) for v in objects[is_bool]]
    numbers[is_word] = truth[is_word]
    table.fail(bad, column, lambda position: f"{what} is not a number: {objects[position]!r}", fix)
    return numbers


TRUTH_WORDS = {"true": 1.0, "false": 0.0}


def _truth_words(objects: np.ndarray) -> np.ndarray:
    """1 or 0 where a cell is the word true or false (any case, spaces around it), NaN elsewhere."""
    words = pd.Series(objects).map(lambda v: TRUTH_WORDS.get(v.strip().lower()) if isinstance(v, str) else None)
    return words.to_numpy(dtype="float64", na_value=np.nan)


def _is_blank(value: object) -> bool:
    """None, NaN, NA or whitespace-only text."""
    if isinstance(value, str):
        return not value.strip()
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _label_column(table: Table) -> pd.Series:
    fix = (
        "write each grade as a number from 0 to 1 such as 0, 0.5 or 1 (0.5 with a point, not a comma), true or "
        "false, or leave it empty"
    )
    labels = _numbers(table, "label", "the label", fix, booleans=True)
    table.fail(
        (labels < 0) | (labels > 1),
        "label",
        lambda position: f"the label {labels[position]:g} is outside [0, 1]",
        fix + "; map other scales onto [0, 1]",
    )
    return pd.Series(labels, dtype="float64")


# --------------------------------------------------------------------------- samples


def _samples_from_column(pool: Table, ids: pd.Series) -> Table:
    """Long-format samples from a list-valued `samples` column of the pool.

    Each list element is a string (the sample) or an object with `sample` and
    optional `logprob`, `surrogate` (and no `id` of its own). In a CSV the cell holds a JSON list.
    """
    cells = pool.frame["samples"].reset_index(drop=True).to_numpy(dtype=object)
    owners: list[int] = []
    places: list[int] = []
    records: list[dict] = []
    for position, cell in enumerate(cells):
        for place, element in enumerate(_sample_list(pool, position, cell), start=1):
            if isinstance(element, dict) and "id" in element:
                raise InputError(
                    f"element {place} of the samples list has its own 'id'",
                    file=pool.name,
                    row=int(pool.rows[position]),
                    column="samples",
                    fix="drop the 'id' key: the samples in a row belong to that row's item",
                )
            owners.append(position)
            places.append(place)
            records.append(element if isinstance(element, dict) else {"sample": element})
    check_column_count(pool.name, set().union(*(record for record in records if isinstance(record, dict))))
    frame = pd.DataFrame.from_records(records, columns=None if records else ["sample"])
    frame.insert(0, "id", ids.to_numpy()[owners] if owners else pd.Series([], dtype=str))
    pool_rows = np.asarray(owners, dtype=np.int64)
    places_array = np.asarray(places, dtype=np.int64)
    table = Table(
        pool.name,
        frame,
        lambda: pool.rows[pool_rows],
        column_label=lambda column: "samples",
        note=lambda position: f" (element {places_array[position]} of the list)",
    )
    _check_columns(table, ("sample",), SAMPLES_OPTIONAL)
    return table


def _sample_list(pool: Table, position: int, cell: object) -> list:
    """The list held by one `samples` cell: [] when empty or missing."""
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
        return []
    if isinstance(cell, str):
        if not cell.strip():
            return []
        try:
            cell = parse_json(cell)
        except BadJson as error:
            cell = error
    if isinstance(cell, np.ndarray):
        cell = cell.tolist()
    if isinstance(cell, list):
        return cell
    raise InputError(
        f"the samples cell is {cell.problem if isinstance(cell, BadJson) else kind_of(cell) + ', not a list'}",
        file=pool.name,
        row=int(pool.rows[position]),
        column="samples",
        fix='write the samples as a JSON list of strings, e.g. ["Paris", "Lyon"]',
    )


def _validate_samples(table: Table, pool_ids: pd.Series, pool_name: str) -> pd.DataFrame:
    frame = table.frame
    ids = _text_column(table, "id", what="the id", required=True)
    _refuse_unknown_ids(table, ids, ~_member(ids, pool_ids), pool_ids, pool_name)
    checked = {
        "id": ids,
        "sample": _text_column(table, "sample", what="the sample", required=True, blank_ok=True),
        "logprob": _logprob_column(table),
        "surrogate": (
            _text_column(table, "surrogate", what="the surrogate name", required=False)
            if "surrogate" in frame.columns
            else pd.Series([""] * len(frame), dtype=str)
        ),
    }
    extra = [column for column in frame.columns if column not in checked]
    for column in extra:
        _check_cells(table, column, frame[column])
    out = pd.DataFrame(checked)
    for column in extra:
        out[column] = frame[column].reset_index(drop=True)
    return out


def _logprob_column(table: Table) -> pd.Series:
    if "logprob" not in table.frame.columns:
        return pd.Series(np.full(len(table.frame), np.nan), dtype="float64")
    fix = "write the sequence log-likelihood as a number (0 or negative), or leave it empty"
    logprobs = _numbers(table, "logprob", "the logprob", fix)
    table.fail(
        ~np.isfinite(logprobs) & ~np.isnan(logprobs),
        "logprob",
        lambda position: f"the logprob {logprobs[position]} is not finite",
        fix,
    )
    table.fail(
        logprobs > 0,
        "logprob",
        lambda position: f"the logprob {logprobs[position]:g} is positive, so it is not a log-likelihood",
        "if these are negative log-likelihoods, negate them",
    )
    return pd.Series(logprobs, dtype="float64")
