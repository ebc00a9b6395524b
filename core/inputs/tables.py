"""Read one JSONL, CSV or Parquet file into a table that knows where each row is.

Row numbers are those a person sees: the line in a JSONL or CSV file (a CSV
header is line 1; a value with line breaks starts where it starts; LF, CRLF
and lone CR all end lines), the 1-based row in Parquet or in a JSON array.
Everything wrong with the file itself (type, encoding, syntax, repeated keys
or columns, size, decompression bombs) raises `core.errors.InputError` here;
`core.inputs.io` checks the columns and values.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import json
import os
import re
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.errors import InputError

Source = str | os.PathLike | tuple[str, bytes]
"""A path, or an upload as a (file name, bytes) pair."""

MAX_COLUMNS = 1_000
"""Most columns (distinct JSON keys) accepted: rows with different keys each
would otherwise spread a small file over a huge, mostly empty table."""

MAX_FILE_BYTES = 1_000_000_000
"""Largest file accepted, and largest decoded content of a Parquet file."""

MAX_ROW_GROUPS = 10_000
"""The most row groups a Parquet file may have: each costs a pass over its columns' metadata and a batch of its
own, and a file of one-row groups (224 MB, 50,000 of them) took the server to 9 GB (a security review). Writers
make groups of thousands to millions of rows (pyarrow and pandas: up to 1,048,576), so a real pool of even 10^7
items has a few dozen."""

PARQUET_BATCH_BYTES = 64_000_000
"""About how much of a Parquet file is decoded at a time (``_read_capped``): batches of this many bytes at 8 bytes
a column a row (a number, or a text's dictionary index and offset), from 1,024 to 262,144 rows. The running
decoded size is checked after each batch, so a file whose few kilobytes expand (run-length or dictionary
encoding, which the metadata's sizes do not bound) is refused once MAX_FILE_BYTES and a batch are in memory
(nested lists aside: one row of them can hold any number of values). A 10^6-row pool of four columns read in
batches of 262,144 rows took 1.07 s against 1.02 s for one whole read (best of 6, a shared 2-core machine)."""

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED = "JSON lines (.jsonl), CSV (.csv) or Parquet (.parquet)"

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class Table:
    """A parsed file: its display name, its rows, and where each row is in the file.

    `rows` computes, only when an error needs it, the row number of each frame
    row; `column_label` and `note` let a derived table (samples taken from a
    pool column) word its errors in terms of the file they came from.
    """

    def __init__(
        self,
        name: str,
        frame: pd.DataFrame,
        rows: Callable[[], np.ndarray],
        column_label: Callable[[str], str] = str,
        note: Callable[[int], str] = lambda position: "",
    ) -> None:
        self.name = name
        self.frame = frame
        self._rows = rows
        self.column_label = column_label
        self.note = note

    @classmethod
    def of_frame(cls, name: str, frame: pd.DataFrame) -> Table:
        """Rows numbered 1, 2, ... (Parquet, JSON arrays)."""
        return cls(name, frame, lambda: np.arange(1, len(frame) + 1))

    def take(self, positions: np.ndarray) -> Table:
        """The table of the frame rows at ``positions`` (ascending), each still named by its row in the file."""
        return Table(
            self.name,
            self.frame.iloc[positions].reset_index(drop=True),
            lambda: self.rows[positions],
            self.column_label,
            lambda position: self.note(int(positions[position])),
        )

    @cached_property
    def rows(self) -> np.ndarray:
        """Row number (as a person sees it in the file) of each frame row."""
        return self._rows()

    def fail(
        self,
        mask: np.ndarray | pd.Series,
        column: str | None,
        problem: str | Callable[[int], str],
        fix: str,
    ) -> None:
        """Raise InputError at the first row where `mask` is true, counting the others.

        `problem` may be a function of the first offending position.
        """
        positions = np.flatnonzero(np.asarray(mask, dtype=bool))
        if not len(positions):
            return
        first = int(positions[0])
        text = problem(first) if callable(problem) else problem
        text += self.note(first)
        if len(positions) > 1:
            more = len(positions) - 1
            text += f" (and {more} more row{'s' if more > 1 else ''})"
        raise InputError(
            text,
            file=self.name,
            row=int(self.rows[first]),
            column=self.column_label(column) if column else None,
            fix=fix,
        )


def name_of(source: Source) -> str:
    """How messages name a source: the upload's file name or the path as given."""
    if isinstance(source, tuple):
        return str(source[0])
    return str(source)


def _read_bytes(source: Source) -> tuple[str, bytes]:
    """The display name and raw content of a path or an upload pair."""
    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[1], (bytes, bytearray, memoryview)):
            raise TypeError("an upload must be a (file_name, bytes) pair")
        return str(source[0]), bytes(source[1])
    name = str(source)
    try:
        return name, Path(source).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", file=name, fix="check the path") from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", file=name, fix="give the path of the file inside it") from None
    except PermissionError:
        raise InputError("cannot be read (permission denied)", file=name, fix="make the file readable") from None


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused (reference counting goes on) while files are parsed and reshaped;
    usable as a decorator.

    A 25 MB JSONL file parses into some 500,000 dicts and lists, none in a reference cycle, and each full
    collection walks all of them to free nothing: about 0.1 s each, one while parsing and one more while an
    eval log is reshaped (benchmarks/import_logs.md). Re-entrant: only the outermost call switches the
    collector back on, and a collector already off stays off.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@paused_gc()
def read_table(source: Source, rows: range | None = None) -> Table:
    """Read a path or upload by its extension; every value as the file holds it
    (CSV cells as text, JSON and Parquet values with their types).

    ``rows``, positions among the file's rows (0 for the first): the table of those rows alone, each still
    named by its row in the file. A Parquet file then has only the row groups that hold them decoded; a
    text file is parsed whole and cut."""
    name, suffix, data = _opened(source)
    if suffix in PARQUET_SUFFIXES:
        return _read_parquet(name, data, None if rows is None else lambda layout: _positions(layout, rows))
    table = _read_text(name, suffix, data)
    return table if rows is None else table.take(np.arange(len(table.frame))[rows.start : rows.stop])


@paused_gc()
def read_table_where(
    source: Source, column: str, keep: Callable[[Table], np.ndarray], within: range | None = None
) -> Table:
    """The rows of a file where ``keep`` is true, each still named by its row in the file: ``keep`` gets a
    table of the file and returns a boolean mask of its rows (a part of a pool's samples: those of its ids).
    ``within``, positions among the file's rows that hold every row to keep, narrows the search.

    A Parquet file that has ``column`` has that column read alone for ``keep`` (from the row groups
    ``within`` reaches), then only the row groups that hold the kept rows decoded (at 10^6 items x 10
    samples, a tenth of the pool's samples read in 1 s rather than 4 s). A text file is parsed whole and
    cut; a file without ``column`` comes back whole, for its reader to cut once it has its columns."""
    name, suffix, data = _opened(source)
    if suffix in PARQUET_SUFFIXES:
        return _read_parquet(name, data, lambda layout: _kept(name, layout, column, keep, within))
    table = _read_text(name, suffix, data)
    if column not in table.frame.columns:
        return table
    if within is not None:
        table = table.take(np.arange(len(table.frame))[within.start : within.stop])
    return table.take(np.flatnonzero(keep(table)))


@paused_gc()
def read_column(source: Source, column: str) -> Table | None:
    """A Parquet file's ``column`` alone, read alone, as a table of one column; None for a text file (its
    column costs a whole parse) or a file without that column."""
    name, suffix, data = _opened(source)
    if suffix not in PARQUET_SUFFIXES or column not in _parquet_names(data):
        return None
    return _read_parquet(name, data, columns=[column])


def _opened(source: Source) -> tuple[str, str, bytes]:
    """A file's display name, lower-case extension and bytes, once its type and size are known to be fine."""
    name, data = _read_bytes(source)
    suffix = Path(name).suffix.lower()
    if suffix not in JSON_SUFFIXES + CSV_SUFFIXES + PARQUET_SUFFIXES:
        shown = f"'{suffix}'" if suffix else "no extension"
        raise InputError(
            f"unsupported file type ({shown})",
            file=name,
            fix=f"save the file as {SUPPORTED} and give it that extension",
        )
    if not data.strip():
        raise InputError("the file is empty", file=name, fix="choose the file that holds the data")
    _check_size(name, len(data), "is")
    return name, suffix, data


def _read_text(name: str, suffix: str, data: bytes) -> Table:
    """A JSON lines, JSON or CSV file's table."""
    data = _strip_bom(name, data)
    text = _decode(name, data)
    if not text.strip():
        raise InputError("the file is empty", file=name, fix="choose the file that holds the data")
    if suffix in CSV_SUFFIXES:
        return _read_csv(name, data, text)
    return _read_json(name, text)


def _strip_bom(name: str, data: bytes) -> bytes:
    """Drop a UTF-8 byte-order mark; refuse UTF-16 (with a mark, or text whose every
    other byte is zero)."""
    if data.startswith(UTF8_BOM):
        return data[len(UTF8_BOM) :]
    head = data[:1024]
    if data.startswith(UTF16_BOMS) or head.count(0) > len(head) // 3:
        raise InputError(
            "the file is UTF-16 text, not UTF-8",
            file=name,
            fix="re-save it as UTF-8 (e.g. in Excel: Save As > CSV UTF-8)",
        )
    return data


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        hint = " (it looks like a Parquet file)" if data.startswith(b"PAR1") else ""
        raise InputError(
            f"the file is not UTF-8 text: byte 0x{byte:02x} cannot be decoded{hint}",
            file=name,
            row=line,
            fix="re-save the file as UTF-8 (e.g. in Excel: Save As > CSV UTF-8)",
        ) from None


class BadJson(ValueError):
    """Text that is not acceptable JSON: `problem` completes "the line is ...",
    `line` says where (1-based)."""

    def __init__(self, problem: str, line: int = 1) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def parse_json(text: str) -> object:
    """json.loads that also refuses a key repeated in one object (json keeps only
    the last value, silently), nesting too deep to parse and an integer of more digits
    than Python converts (a ValueError that answered 500: an attacker's review)."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        problem = error.msg.removesuffix(" at")
        raise BadJson(f"not valid JSON ({problem}, character {error.colno})", error.lineno) from None
    except RecursionError:
        raise BadJson("nested too deeply to read") from None
    except BadJson:  # a key repeated (`_unique_keys`)
        raise
    except ValueError:  # the int conversion limit (sys.get_int_max_str_digits)
        raise BadJson(f"a number of more than {sys.get_int_max_str_digits():,} digits, too long to read") from None
    if ("\\ud" in text or "\\uD" in text) and _LONE_SURROGATE.search(text) and not _encodable(value):
        raise BadJson("not text: a \\u escape holds half a character (a lone UTF-16 surrogate)")
    return value


_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F]"
)
"""A \\u escape of a high surrogate not followed by a low one, or a low one not after a
high one (a fast pre-check: an escaped backslash can make it match valid text)."""


def _encodable(value: object) -> bool:
    """Every string inside a parsed JSON value can be written as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_encodable(key) and _encodable(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_encodable(item) for item in value)
    return True


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise BadJson(f"an object with the key '{repeated}' twice")
    return record


_LINE_BREAK = re.compile(r"\r\n?|\n")
"""A line ends at CRLF, LF or a lone CR, as editors and pandas see it (not at
U+2028, which str.splitlines would split and JSON strings may hold)."""


def _read_json(name: str, text: str) -> Table:
    """JSON lines (blank lines skipped), or in a .json file one array of objects."""
    if Path(name).suffix.lower() == ".json" and text.lstrip().startswith("["):
        return _read_json_array(name, text)
    lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line and not line.isspace()]
    try:  # one C call for the whole file; line by line only to locate an error
        records = parse_json("[" + ",".join(line for _, line in numbered) + "]")
    except BadJson:
        records = []
    if len(records) != len(numbered):
        records = [
            _json_line(name, number, line, first=not position) for position, (number, line) in enumerate(numbered)
        ]
    for position, value in enumerate(records):
        if type(value) is not dict:
            raise InputError(
                f"the line is {kind_of(value)}, not a JSON object",
                file=name,
                row=numbered[position][0],
                fix='write one object per line, e.g. {"id": "q1", "prompt": "...", "response": "..."}',
            )
    check_column_count(name, set().union(*records))
    row_numbers = np.fromiter((number for number, _ in numbered), dtype=np.int64, count=len(numbered))
    return Table(name, pd.DataFrame.from_records(records), lambda: row_numbers)


def _json_line(name: str, number: int, line: str, *, first: bool) -> object:
    try:
        return parse_json(line)
    except BadJson as error:
        fix = "write one JSON object per line, with double-quoted keys and strings, each key once"
        if first:
            fix += "; if the file is CSV, give it the .csv extension"
        raise InputError(
            f"the line is {error.problem}",
            file=name,
            row=number,
            fix=fix,
        ) from None


def _read_json_array(name: str, text: str) -> Table:
    """A .json file holding one array of objects; rows are numbered by element."""
    try:
        values = parse_json(text)
    except BadJson as error:
        raise InputError(
            f"the file is {error.problem}",
            file=name,
            row=error.line,
            fix="write a JSON array of objects, each key once, or one JSON object per line",
        ) from None
    if not values:
        raise InputError("the JSON array is empty", file=name, fix="add one object per item")
    for number, value in enumerate(values, start=1):
        if type(value) is not dict:
            raise InputError(
                f"element {number} of the array is {kind_of(value)}, not a JSON object",
                file=name,
                fix='make every element an object, e.g. {"id": "q1", "prompt": "...", "response": "..."}',
            )
    check_column_count(name, set().union(*values))
    return Table.of_frame(name, pd.DataFrame.from_records(values))


def _check_separator(name: str, header: list[str], line: int) -> None:
    """InputError where the ``header`` (on ``line``) is one column holding ';', a tab or '|': another separator."""
    if len(header) == 1 and re.search(r"[;\t|]", header[0]):
        raise InputError(
            f"the header '{header[0]}' is one column: the file is not comma-separated",
            file=name,
            row=line,
            fix="save it as comma-separated values (CSV with commas between columns; Excel: CSV UTF-8)",
        )


def _read_csv(name: str, data: bytes, text: str) -> Table:
    if text.lstrip("\ufeff \t\r\n").startswith("{"):  # JSON Lines named .csv: said as such, not as CSV rows
        raise InputError(
            "the file holds JSON objects, not comma-separated values",
            file=name,
            fix="name it .jsonl (one JSON object per line) or .json, or save it as CSV",
        )
    header_line = len(_LINE_BREAK.findall(text[: len(text) - len(text.lstrip())])) + 1
    # the header's width before pandas reads every cell: a 2 MB header of 200,003 columns took 10 s to refuse;
    # and one column named with semicolons before a row with commas reads as extra fields (a new user's review)
    with contextlib.suppress(csv.Error):  # a header csv cannot split is pandas' to name
        first = next(csv.reader(io.StringIO(text.lstrip("\r\n"), newline="")), [])
        _check_separator(name, first, header_line)
        check_column_count(name, first)
    try:
        cells = pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.ParserError as error:
        raise _csv_parse_error(name, data, error) from None
    header = [str(cell) for cell in cells.iloc[0]]
    for position, column in enumerate(header, start=1):
        if not column.strip():
            raise InputError(
                f"column {position} has no name in the header",
                file=name,
                row=header_line,
                fix="give every column a name in the first row, or delete the unnamed column"
                + (" (pandas writes its index there unless called with to_csv(index=False))" if position == 1 else ""),
            )
    _check_separator(name, header, header_line)
    _check_unique_columns(name, header)
    check_column_count(name, header)
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    if frame.empty:
        raise InputError("the file has a header but no rows", file=name, fix="add one row per item")
    _check_short_rows(name, data, len(frame), header)
    return Table(name, frame, lambda: _csv_data_lines(data, len(frame)))


def _check_short_rows(name: str, data: bytes, n_rows: int, header: list[str]) -> None:
    """InputError naming the first data row with fewer values than the header has columns: pandas fills the
    missing ones with empty text, so a row cut short (a lost comma, a quote closed too soon) would otherwise
    load with an empty response and no word of it. An empty value written as such (two commas) is kept. Values
    are counted by the commas outside quotes of each record (`_csv_records`); where those records do not pair
    up with pandas' rows (quoting that is not RFC 4180), nothing is checked."""
    buffer, in_quotes, _ = _csv_quoting(data)
    starts, stops, lines = _csv_records(data)
    if len(starts) != n_rows + 1:
        return
    commas = np.concatenate(([0], np.cumsum((buffer == ord(",")) & (in_quotes == 0))))
    values = commas[stops] - commas[starts] + 1
    short = np.flatnonzero(values[1:] < len(header))
    if short.size == 0:
        return
    row, count = int(short[0]) + 1, int(values[int(short[0]) + 1])
    raise InputError(
        f"the row has {count} of the header's {len(header)} values: no {', '.join(header[count:])}",
        file=name,
        row=int(lines[row]),
        fix='write every column\'s value, an empty one as nothing between two commas (or "")',
    )


def _csv_quoting(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bytes, per byte 1 when it lies inside double quotes, and the line breaks.

    RFC 4180: quotes inside a quoted value are doubled, which keeps the parity.
    A line break is LF, or CR not followed by LF (as pandas reads CSV).
    """
    buffer = np.frombuffer(data, dtype=np.uint8)
    in_quotes = np.bitwise_xor.accumulate((buffer == ord('"')).view(np.uint8))
    lone_cr = buffer == ord("\r")
    lone_cr[:-1] &= buffer[1:] != ord("\n")
    return buffer, in_quotes, np.flatnonzero((buffer == ord("\n")) | lone_cr)


def _csv_records(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte offsets where each non-blank CSV record starts and stops, and its 1-based line.

    A line break ends a record unless it is inside quotes. Blank and
    whitespace-only lines are skipped, as pandas does.
    """
    buffer, in_quotes, breaks = _csv_quoting(data)
    ends = breaks[in_quotes[breaks] == 0]
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [len(buffer)]))
    kept = np.fromiter(
        (bool(data[start:stop].strip()) for start, stop in zip(starts.tolist(), stops.tolist())),
        dtype=bool,
        count=len(starts),
    )
    starts, stops = starts[kept], stops[kept]
    return starts, stops, np.searchsorted(breaks, starts) + 1


def _csv_data_lines(data: bytes, n_rows: int) -> np.ndarray:
    """1-based line where each of the n_rows data records starts.

    Where quoting is not RFC 4180 (a lone quote inside an unquoted value) the
    count can disagree with pandas; then rows are numbered as if each record
    held one line, which is exact for most files and never fails.
    """
    lines = _csv_records(data)[2][1:]
    return lines if len(lines) == n_rows else np.arange(2, n_rows + 2)


def _csv_parse_error(name: str, data: bytes, error: Exception) -> InputError:
    """Locate what pandas could not tokenise: an unclosed quote or a row with extra fields."""
    buffer, in_quotes, breaks = _csv_quoting(data)
    if in_quotes[-1]:
        outside = np.flatnonzero(in_quotes == 0)
        opening = int(outside[-1]) + 1 if len(outside) else 0
        return InputError(
            "a double quote opens a value that is never closed",
            file=name,
            row=int(np.searchsorted(breaks, opening)) + 1,
            fix='close the quote; inside a quoted value write a double quote as two ("")',
        )
    starts, stops, lines = _csv_records(data)
    commas = np.flatnonzero((buffer == ord(",")) & (in_quotes == 0))
    fields = np.searchsorted(commas, stops) - np.searchsorted(commas, starts) + 1
    extra = np.flatnonzero(fields > fields[0])
    if not len(extra):  # quoting that is not RFC 4180: pandas' own count is the best we have
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
        return InputError(
            f"a row has {match[3]} fields where the first row has {match[1]} (record {match[2]})"
            if match
            else f"the file is not valid CSV ({error})",
            file=name,
            fix="check the quoting there: a value that holds a comma or a double quote must be in double quotes, "
            'with its own double quotes written twice ("")',
        )
    first = int(extra[0])
    return InputError(
        f"the row has {fields[first]} fields where the first row has {fields[0]}",
        file=name,
        row=int(lines[first]),
        fix="put double quotes around values that contain commas, or remove the extra commas",
    )


def _read_parquet(
    name: str, data: bytes, select: Callable[[Any], np.ndarray] | None = None, columns: list[str] | None = None
) -> Table:
    """A Parquet file's table (``columns``: those alone); ``select``, given the opened file
    (pyarrow.parquet.ParquetFile), returns the ascending positions of the rows to read, and only the row
    groups that hold them are decoded."""
    import pyarrow as pa

    try:
        layout = _parquet_layout(name, data)
        positions = None if select is None else select(layout)
        if positions is None:
            frame = _parquet_frame(name, _read_capped(name, layout, range(layout.num_row_groups), columns))
            if frame.empty:
                raise InputError("the file has no rows", file=name, fix="add one row per item")
        else:
            frame = _parquet_frame(name, _row_group_rows(name, layout, positions, columns))
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError) as error:  # ValueError: e.g. column names not UTF-8
        raise InputError(
            f"the file is not a readable Parquet file ({error})",
            file=name,
            fix="export it again as Parquet, or give the file the extension of its real format (.csv, .jsonl)",
        ) from None
    if positions is None:
        return Table.of_frame(name, frame)
    return Table(name, frame, lambda: positions + 1)


def _parquet_names(data: bytes) -> list[str]:
    """A Parquet file's column names; none when it cannot be read (its full read then says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(pa.BufferReader(data)).names
    except (pa.ArrowException, OSError, ValueError):
        return []


def _parquet_layout(name: str, data: bytes):
    """The opened Parquet file (pyarrow.parquet.ParquetFile), its columns checked, its text and bytes
    read dictionary-encoded where the file stores them so: they stay so until their decoded size is known,
    since a few kilobytes of Parquet can repeat one long value into gigabytes (bytes that are not text did
    so past the check: an attacker's review). A column stored plain is read plain: read into a dictionary,
    a whole row group of it was decoded at once; its declared size bounds it (`_read_capped`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    opened = pq.ParquetFile(pa.BufferReader(data))
    schema, meta = opened.schema, opened.metadata
    names = schema.to_arrow_schema().names
    _check_unique_columns(name, names)
    check_column_count(name, names)
    if meta.num_row_groups > MAX_ROW_GROUPS:
        raise InputError(
            f"the file has {meta.num_row_groups:,} row groups, over the limit of {MAX_ROW_GROUPS:,}",
            file=name,
            fix="write it again with larger row groups (pyarrow's row_group_size, e.g. 100,000 rows or more)",
        )
    groups = range(meta.num_row_groups)
    encoded = [
        schema.column(i).path
        for i in range(len(schema))
        if schema.column(i).physical_type == "BYTE_ARRAY"
        and all(meta.row_group(g).column(i).has_dictionary_page for g in groups)
    ]
    return pq.ParquetFile(pa.BufferReader(data), read_dictionary=encoded)


def _parquet_frame(name: str, table) -> pd.DataFrame:
    """An Arrow table read from a Parquet file as a frame, once its decoded size and its text are
    checked (a pandas index written with the file, e.g. set_index("id"), becomes a column again)."""
    import pyarrow as pa

    _check_size(name, sum(_decoded_bytes(chunk) for column in table.columns for chunk in column.chunks), "holds")
    columns = [column.cast(_plain_type(column.type)) for column in table.columns]
    for column_name, column in zip(table.column_names, columns):
        _check_parquet_column(name, column_name, column)
    frame = pa.table(columns, names=table.column_names, metadata=table.schema.metadata).to_pandas()
    named_index = any(level is not None for level in frame.index.names)
    return frame.reset_index(drop=not named_index)


def _read_capped(name: str, layout, groups: Sequence[int], columns: list[str] | None):
    """The row groups ``groups`` of an opened Parquet file as an Arrow table (``columns``: those alone), decoded
    row group by row group in batches (PARQUET_BATCH_BYTES); InputError as soon as the decoded size so far
    (``_decoded_bytes``, text still dictionary-encoded) passes MAX_FILE_BYTES, before the rest is inflated.
    Each batch that passes is spelt out (plain text), so memory holds the decoded rows so far and one batch's
    dictionary, at most about twice MAX_FILE_BYTES."""
    import pyarrow as pa

    leaves = layout.metadata.num_columns if columns is None else len(columns)
    rows = min(max(PARQUET_BATCH_BYTES // (8 * max(leaves, 1)), 1_024), 262_144)
    # the sizes the file declares (uncompressed, dictionaries still encoded: at most what decoding gives) refuse it
    # before any decoding, and batches hold no more rows than PARQUET_BATCH_BYTES of the widest row group's take:
    # rows of 10 MB each were decoded 700 at a time, 7 GB before any check (an attacker's review)
    declared = [layout.metadata.row_group(group) for group in groups]
    _check_size(name, sum(meta.total_byte_size for meta in declared), "holds")
    for meta in declared:
        rows = min(rows, max(PARQUET_BATCH_BYTES * max(meta.num_rows, 1) // max(meta.total_byte_size, 1), 1))
    # fixed-size bytes are read plain (pyarrow keeps no dictionary for them), each row their whole width: 200,000
    # rows of 20 kB from one dictionary entry decoded at once (a security review)
    fixed = sum(
        leaf.length
        for leaf in (layout.schema.column(i) for i in range(len(layout.schema)))
        if leaf.physical_type == "FIXED_LEN_BYTE_ARRAY" and (columns is None or leaf.path.split(".")[0] in columns)
    )
    rows = min(rows, max(PARQUET_BATCH_BYTES // max(fixed, 1), 1))
    batches, decoded = [], 0
    for batch in layout.iter_batches(batch_size=rows, row_groups=list(groups), columns=columns):
        decoded += sum(_decoded_bytes(column) for column in batch.columns)
        _check_size(name, decoded, "holds")
        # spelt out now: each batch's dictionary holds every text of the row group read so far
        batches.append(pa.record_batch([c.cast(_plain_type(c.type)) for c in batch.columns], names=batch.schema.names))
    if not batches:  # no rows: the file's schema, as a plain read gives it
        return layout.read_row_groups(list(groups), columns=columns)
    return pa.Table.from_batches(batches).replace_schema_metadata(layout.schema_arrow.metadata)


def _row_group_rows(name: str, layout, positions: np.ndarray, columns: list[str] | None = None):
    """The rows at ``positions`` (ascending) of an opened Parquet file as an Arrow table (``columns``:
    those alone), from the row groups that hold them alone (``_read_capped``)."""
    sizes = np.array([layout.metadata.row_group(i).num_rows for i in range(layout.num_row_groups)], dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    group_of = np.searchsorted(bounds, positions, side="right") - 1
    groups = np.unique(group_of)
    read_start = np.concatenate([[0], np.cumsum(sizes[groups])])
    local = positions - bounds[group_of] + read_start[np.searchsorted(groups, group_of)]
    table = _read_capped(name, layout, groups.tolist(), columns)
    return table if np.array_equal(local, np.arange(table.num_rows)) else table.take(local)


def _positions(layout, rows: range) -> np.ndarray:
    """The positions of ``rows`` among an opened Parquet file's rows."""
    return np.arange(layout.metadata.num_rows)[rows.start : rows.stop]


def _kept(name: str, layout, column: str, keep: Callable[[Table], np.ndarray], within: range | None) -> np.ndarray:
    """The positions of an opened Parquet file's rows where ``keep`` is true of ``column``, read alone
    from the rows ``within`` (all when None); every row when the file has no such column."""
    every = np.arange(layout.metadata.num_rows)
    if column not in layout.schema_arrow.names:
        return every
    candidates = every if within is None else every[within.start : within.stop]
    frame = _parquet_frame(name, _row_group_rows(name, layout, candidates, [column]))
    return candidates[keep(Table(name, frame, lambda: candidates + 1))]


def _decoded_bytes(array) -> int:
    """Bytes an Arrow array takes once its dictionary-encoded text is spelt out
    (lists, maps and structs included; an upper bound for sliced arrays)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary)
        return (pc.sum(pc.take(lengths, array.indices)).as_py() or 0) + array.indices.nbytes
    if pa.types.is_map(kind):  # before lists: a map is a list of key-item pairs (it went uncounted: a security review)
        return array.offsets.nbytes + _decoded_bytes(array.keys) + _decoded_bytes(array.items)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return array.offsets.nbytes + _decoded_bytes(array.values)
    if pa.types.is_fixed_size_list(kind):
        return _decoded_bytes(array.values)
    if pa.types.is_struct(kind):
        return sum(_decoded_bytes(array.field(index)) for index in range(kind.num_fields))
    return array.nbytes


def _plain_type(kind):
    """`kind` with every dictionary type replaced by its value type."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _plain_type(kind.value_type)
    if pa.types.is_map(kind):
        return pa.map_(_plain_type(kind.key_type), kind.item_field.with_type(_plain_type(kind.item_type)))
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(kind.value_field.with_type(_plain_type(kind.value_type)), kind.list_size)
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_plain_type(kind.value_type)))
    if pa.types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_plain_type(kind.value_type)))
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_plain_type(field.type)) for field in kind])
    return kind


def _bytes(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size:,} bytes"


def _check_parquet_column(name: str, column_name: str, column) -> None:
    """Parquet does not check its text on writing: refuse bytes that are not UTF-8."""
    import pyarrow as pa

    try:
        column.validate(full=True)
    except pa.ArrowInvalid as error:
        raise InputError(
            f"the column holds data that is not valid ({error})",
            file=name,
            column=column_name,
            fix="export the file again from the original data; text must be UTF-8",
        ) from None


def _check_size(name: str, size: int, verb: str) -> None:
    """Refuse more than MAX_FILE_BYTES; `verb` is "is" (raw file) or "holds" (decoded)."""
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"the file {verb} {_bytes(size)} of data, over the limit of {_bytes(MAX_FILE_BYTES)}",
            file=name,
            fix="split the pool into several projects, or move long documents out of the file",
        )


def check_column_count(name: str, columns: Collection[str]) -> None:
    """Refuse more than MAX_COLUMNS columns (see there)."""
    if len(columns) > MAX_COLUMNS:
        raise InputError(
            f"the file has {len(columns):,} different columns (keys), over the limit of {MAX_COLUMNS:,}",
            file=name,
            fix="use the same keys on every row, and keep extra data in a few columns",
        )


def _check_unique_columns(name: str, columns: list[str]) -> None:
    seen: dict[str, int] = {}
    for position, column in enumerate(columns, start=1):
        if column in seen:
            raise InputError(
                f"the column name appears twice (columns {seen[column]} and {position})",
                file=name,
                column=column,
                fix="rename or remove one of the two columns",
            )
        seen[column] = position


def kind_of(value: object) -> str:
    """How a person would call a value's type in an error message."""
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return f"a true/false value ({str(value).lower()})"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list"
    if isinstance(value, (int, float, np.number)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__} value"
