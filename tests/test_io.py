"""core.inputs.io: reading pools and samples, and what every malformed input gets."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.inputs.io
import core.inputs.tables
from core.errors import InputError
from core.inputs.io import Inputs, load_inputs, spreadsheet_safe
from core.inputs.readers import load, sample_rows_by_chunk
from core.inputs.tables import Table

INPUTS = Path(__file__).parent / "data" / "inputs"

POOL_HEADER = "id,prompt,response,label\n"


def error_of(pool, samples=None) -> str:
    """The one-line message load_inputs raises for these inputs."""
    with pytest.raises(InputError) as caught:
        load_inputs(pool, samples)
    message = str(caught.value)
    assert "\n" not in message
    return message


def assert_names(message: str, file: str, *, row: int | None = None, column: str | None = None) -> None:
    """The message names the file, the row and column when given, and a fix."""
    assert message.startswith(file), message
    if row is not None:
        assert f"row {row}," in message or f"row {row}:" in message, message
    if column is not None:
        assert f"column '{column}'" in message, message
    assert ". Fix: " in message, message


def jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(record) for record in records).encode()


def item(id_: object = "q1", **fields: object) -> dict:
    return {"id": id_, "prompt": "What is 2 + 2?", "response": "4", **fields}


def write_parquet(path: Path, records: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def write_csv(path: Path, records: list[dict]) -> None:
    """RFC 4180 CSV by the standard library (pandas' to_csv leaves a lone CR unquoted)."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_same_inputs(left: Inputs, right: Inputs) -> None:
    pd.testing.assert_frame_equal(left.pool, right.pool)
    pd.testing.assert_frame_equal(left.samples, right.samples)
    assert left.without_samples == right.without_samples


# --------------------------------------------------------------------------- good inputs


@pytest.fixture
def reference() -> Inputs:
    return load_inputs(INPUTS / "pool.jsonl", INPUTS / "samples.jsonl")


def test_reference_inputs_have_the_contract_columns_and_values(reference):
    pool, samples = reference.pool, reference.samples
    assert list(pool.columns) == ["id", "prompt", "response", "answer", "label", "topic"]
    assert pool["id"].tolist() == ["q1", "007", "q3", "q4"]
    assert pool.loc[1, "response"] == "Hello,\nfriend"
    assert pool.loc[2, "prompt"] == "<b>Bold</b> and <script>alert(1)</script>"
    assert pool.loc[2, "response"] == ""
    assert pool.loc[3, "response"] == "=1+1"
    np.testing.assert_array_equal(pool["label"].to_numpy(), [1.0, 0.5, 0.0, np.nan])
    assert pool["label"].dtype == np.float64
    assert list(samples.columns) == ["id", "sample", "logprob", "surrogate"]
    assert samples["sample"].tolist() == ["Paris", "paris.", "Lyon", "hello", "", "2, with a comma"]
    np.testing.assert_array_equal(samples["logprob"].to_numpy(), [-0.5, -1.25, -3.0, np.nan, -2.5, -0.1])
    assert samples["surrogate"].tolist() == ["m1", "m1", "m2", "m1", "", "m2"]
    assert reference.without_samples == ["q3"]


@pytest.mark.parametrize(
    "pool, samples",
    [
        ("pool.csv", "samples.csv"),
        ("pool.csv", "samples.jsonl"),
        ("pool.jsonl", "samples.csv"),
        ("pool_with_samples.jsonl", None),
        ("pool_with_samples.csv", None),
    ],
)
def test_every_text_format_and_layout_gives_the_same_inputs(reference, pool, samples):
    assert_same_inputs(load_inputs(INPUTS / pool, samples and INPUTS / samples), reference)


def test_parquet_in_both_layouts_gives_the_same_inputs(reference, tmp_path):
    pool = write_parquet(tmp_path / "pool.parquet", read_jsonl(INPUTS / "pool.jsonl"))
    samples = write_parquet(tmp_path / "samples.parquet", read_jsonl(INPUTS / "samples.jsonl"))
    assert_same_inputs(load_inputs(pool, samples), reference)
    nested = write_parquet(tmp_path / "nested.parquet", read_jsonl(INPUTS / "pool_with_samples.jsonl"))
    assert_same_inputs(load_inputs(nested), reference)


def test_a_parquet_index_named_id_is_read_as_the_id_column(reference, tmp_path):
    path = tmp_path / "pool.parquet"
    pd.DataFrame(read_jsonl(INPUTS / "pool.jsonl")).set_index("id").to_parquet(path)
    assert_same_inputs(load_inputs(path, INPUTS / "samples.jsonl"), reference)


def test_upload_pairs_equal_paths(reference):
    uploads = (
        ("pool.jsonl", (INPUTS / "pool.jsonl").read_bytes()),
        ("samples.jsonl", (INPUTS / "samples.jsonl").read_bytes()),
    )
    assert_same_inputs(load_inputs(*uploads), reference)


def test_a_json_array_file_is_read_like_json_lines(reference, tmp_path):
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(read_jsonl(INPUTS / "pool.jsonl"), ensure_ascii=False), encoding="utf-8")
    assert_same_inputs(load_inputs(pool, INPUTS / "samples.jsonl"), reference)


def test_a_plain_list_of_sample_strings_is_accepted():
    inputs = load_inputs(("pool.jsonl", jsonl(item("a", samples=["x", "y"]), item("b", samples=None))))
    assert inputs.samples["sample"].tolist() == ["x", "y"]
    assert inputs.samples["id"].tolist() == ["a", "a"]
    assert inputs.samples["logprob"].isna().all()
    assert inputs.without_samples == ["b"]
    assert "samples" not in inputs.pool.columns


def test_integer_ids_become_text_and_still_match_their_samples():
    inputs = load_inputs(("pool.jsonl", jsonl(item(7), item(8))), ("s.jsonl", jsonl({"id": 7, "sample": "4"})))
    assert inputs.pool["id"].tolist() == ["7", "8"]
    assert inputs.samples["id"].tolist() == ["7"]
    assert inputs.without_samples == ["8"]


def cut(inputs: Inputs, rows: range) -> Inputs:
    """The inputs of pool rows ``rows`` and their samples, cut from the whole."""
    pool = inputs.pool.iloc[rows.start : rows.stop].reset_index(drop=True)
    samples = inputs.samples[inputs.samples["id"].isin(set(pool["id"]))].reset_index(drop=True)
    return Inputs(pool, samples, [i for i in inputs.without_samples if i in set(pool["id"])])


@pytest.mark.parametrize(
    "pool, samples", [("pool.jsonl", "samples.jsonl"), ("pool.csv", "samples.csv"), ("pool_with_samples.jsonl", None)]
)
@pytest.mark.parametrize("rows", [range(0, 1), range(1, 3), range(2, 4), range(3, 9)])
def test_rows_read_those_pool_rows_and_their_samples_alone(reference, pool, samples, rows):
    """A chunk of a preparation reads its pool rows and the samples of their ids, nothing else."""
    chunk = load(INPUTS / pool, samples and INPUTS / samples, rows=rows)
    assert_same_inputs(chunk, cut(reference, rows))


def parquet_files(inputs: Inputs, folder: Path) -> tuple[Path, Path]:
    """The inputs as a Parquet pool in row groups of 2 and a Parquet samples file in reversed order, in row
    groups of 1."""
    pool, samples = folder / "pool.parquet", folder / "samples.parquet"
    pq.write_table(pa.Table.from_pandas(inputs.pool), pool, row_group_size=2)
    pq.write_table(pa.Table.from_pandas(inputs.samples.iloc[::-1]), samples, row_group_size=1)
    return pool, samples


def count_row_group_reads(monkeypatch) -> dict[str, list[int]]:
    """Rows of each row group decoded from now on: of the id column alone ("id") and of every column ("all")."""
    decoded: dict[str, list[int]] = {"id": [], "all": []}
    iter_batches = pq.ParquetFile.iter_batches

    def counted(layout, *args, row_groups=None, columns=None, **kwargs):
        groups = range(layout.num_row_groups) if row_groups is None else row_groups
        if len(groups) < layout.num_row_groups:  # a chunk's rows, not the whole file
            decoded["id" if columns == ["id"] else "all"].extend(layout.metadata.row_group(g).num_rows for g in groups)
        return iter_batches(layout, *args, row_groups=row_groups, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    return decoded


@pytest.mark.parametrize("rows", [range(0, 1), range(1, 3), range(2, 4), range(3, 9)])
def test_rows_of_parquet_files_are_read_from_their_row_groups_alone(reference, tmp_path, rows, monkeypatch):
    """A Parquet pool and samples file in small row groups, the samples in another order than the pool's: a
    chunk decodes only the row groups that hold its rows, and reads what cutting the whole files gives."""
    pool, samples = parquet_files(reference, tmp_path)
    whole = load_inputs(pool, samples)
    decoded = count_row_group_reads(monkeypatch)
    chunk = load(pool, samples, rows=rows)
    assert_same_inputs(chunk, cut(whole, rows))
    assert sum(decoded["all"]) < len(whole.pool) + len(whole.samples)


def test_each_chunk_searches_only_the_sample_rows_of_its_items(reference, tmp_path, monkeypatch):
    """The preparation reads the samples' ids once for every chunk's first and last sample row; a chunk then
    reads the ids of those rows alone, and still reads exactly its samples."""
    pool, samples = parquet_files(reference, tmp_path)
    whole = load_inputs(pool, samples)
    bounds = sample_rows_by_chunk(samples, whole.pool["id"], "pool.parquet", 2)
    assert bounds is not None and len(bounds) == 2
    assert sample_rows_by_chunk(INPUTS / "samples.jsonl", whole.pool["id"], "pool.parquet", 2) is None  # parsed anyway
    stray = pa.Table.from_pandas(whole.samples.iloc[:2].assign(id=["q1", " q3"]))
    pq.write_table(stray, tmp_path / "stray.parquet")
    message = str(
        pytest.raises(
            InputError, sample_rows_by_chunk, tmp_path / "stray.parquet", whole.pool["id"], "p.jsonl", 2
        ).value
    )
    assert_names(message, str(tmp_path / "stray.parquet"), row=2, column="id")  # a sample of no pool item
    assert "id ' q3' is not in the pool p.jsonl" in message and "remove the spaces" in message
    decoded = count_row_group_reads(monkeypatch)
    for k, within in enumerate(bounds):
        rows = range(2 * k, 2 * k + 2)
        assert_same_inputs(load(pool, samples, rows=rows, sample_rows=within), cut(whole, rows))
    assert sum(decoded["id"]) == sum(len(within) for within in bounds) < 2 * len(whole.samples)


def test_an_error_in_a_chunk_names_its_row_in_the_file():
    pool = ("pool.csv", (POOL_HEADER + "a,Q,R,1\nb,Q,R,0\nc,Q,R,1\n").encode())
    samples = ("samples.csv", b"id,sample,logprob\nc,4,-1\nb,5,-1\nc,6,2.5\n")
    message = str(pytest.raises(InputError, load, pool, samples, rows=range(2, 3)).value)
    assert_names(message, "samples.csv", row=4, column="logprob")
    nested = (
        "pool.jsonl",
        jsonl(item("a"), item("b", samples=[{"sample": "x", "logprob": -1}, {"sample": "y", "logprob": 3}])),
    )
    message = str(pytest.raises(InputError, load, nested, rows=range(1, 2)).value)
    assert_names(message, "pool.jsonl", row=2, column="samples")
    assert "(element 2 of the list)" in message


def test_an_error_in_a_parquet_chunk_names_its_row_in_the_file(tmp_path):
    pool, samples = tmp_path / "pool.parquet", tmp_path / "samples.parquet"
    pq.write_table(pa.table({"id": list("abcd"), "prompt": ["Q"] * 4, "response": ["R"] * 4}), pool, row_group_size=1)
    rows = {"id": list("dcbadc"), "sample": list("123456"), "logprob": [-1.0, -1.0, -1.0, -1.0, -1.0, 2.5]}
    pq.write_table(pa.table(rows), samples, row_group_size=2)
    message = str(pytest.raises(InputError, load, pool, samples, rows=range(2, 3)).value)
    assert_names(message, str(samples), row=6, column="logprob")  # item c's samples: rows 2 and 6 of the file


def test_a_pool_without_samples_lists_every_item_as_without_samples():
    inputs = load_inputs(("pool.jsonl", jsonl(item("a"), item("b"))))
    assert inputs.samples.empty
    assert list(inputs.samples.columns) == ["id", "sample", "logprob", "surrogate"]
    assert inputs.without_samples == ["a", "b"]


def test_a_utf8_byte_order_mark_is_accepted():
    inputs = load_inputs(("pool.csv", b"\xef\xbb\xbf" + (POOL_HEADER + "q1,Hi?,Hello,1\n").encode()))
    assert inputs.pool.columns[0] == "id"
    assert inputs.pool["id"].tolist() == ["q1"]


def test_text_that_looks_like_other_types_is_kept_exactly():
    csv = POOL_HEADER + "0042,NA,null,\n1e3,  spaced  ,TRUE,0\n"
    pool = load_inputs(("pool.csv", csv.encode())).pool
    assert pool["id"].tolist() == ["0042", "1e3"]
    assert pool["prompt"].tolist() == ["NA", "  spaced  "]
    assert pool["response"].tolist() == ["null", "TRUE"]


def test_shared_gsm8k_loads(gsm8k):
    inputs = load_inputs(*gsm8k)
    assert len(inputs.pool) == 1319
    assert len(inputs.samples) == 6592
    assert inputs.without_samples == []
    assert set(inputs.pool["label"].unique()) <= {0.0, 1.0}
    assert {"answer", "reference"} <= set(inputs.pool.columns)


def test_shared_truthfulqa_loads_and_keeps_empty_answers(truthfulqa):
    inputs = load_inputs(*truthfulqa)
    assert len(inputs.pool) == 417
    assert len(inputs.samples) == 4100
    assert (inputs.pool["response"] == "").sum() == 3
    assert (inputs.samples["sample"] == "").sum() == 7


# --------------------------------------------------------------------------- reading errors


def test_an_error_message_is_one_line_with_hidden_characters_shown():
    message = str(InputError("bad\nvalue\x0e", file="evil\u202egnp.csv", column="a\r\nb", fix="re-save\n"))
    assert message == "evil\\u202egnp.csv, column 'a b': bad value\\x0e. Fix: re-save"


def test_a_quote_inside_an_unquoted_value_is_pointed_at():
    message = error_of(("pool.csv", b'id,prompt,response\nq1,a"b,c\nq2,x,y,z\n'))
    assert_names(message, "pool.csv", row=2)
    assert "never closed" in message


def test_a_missing_file_is_named():
    assert_names(error_of("/nonexistent/pool.jsonl"), "/nonexistent/pool.jsonl")


@pytest.mark.parametrize("name", ["pool.xlsx", "pool.txt", "pool"])
def test_an_unsupported_extension_is_refused(name):
    message = error_of((name, b"id,prompt,response\n"))
    assert_names(message, name)
    assert "unsupported file type" in message and ".jsonl" in message


@pytest.mark.parametrize("name, content", [("pool.jsonl", b""), ("pool.csv", b"\n \n"), ("pool.parquet", b"")])
def test_an_empty_file_is_refused(name, content):
    message = error_of((name, content))
    assert_names(message, name)
    assert "empty" in message


def test_a_csv_with_only_a_header_is_refused():
    assert "header but no rows" in error_of(("pool.csv", POOL_HEADER.encode()))


def test_latin1_text_is_refused_with_the_line_and_a_re_save_fix():
    content = (POOL_HEADER + "q1,Hi,Hello,1\n").encode() + "q2,Café?,Oui,0\n".encode("latin-1")
    message = error_of(("pool.csv", content))
    assert_names(message, "pool.csv", row=3)
    assert "not UTF-8" in message and "re-save" in message and "0xe9" in message


def test_utf16_text_is_refused_by_name():
    message = error_of(("pool.csv", (POOL_HEADER + "q1,Hi,Hello,1\n").encode("utf-16")))
    assert_names(message, "pool.csv")
    assert "UTF-16" in message and "UTF-8" in message


def test_a_broken_json_line_is_named():
    content = jsonl(item("a"), item("b")) + b'\n{"id": "c", "prompt": "x", \n'
    message = error_of(("pool.jsonl", content))
    assert_names(message, "pool.jsonl", row=3)
    assert "not valid JSON" in message


def test_csv_content_in_a_jsonl_file_suggests_the_csv_extension():
    message = error_of(("pool.jsonl", (POOL_HEADER + "q1,Hi,Hello,1\n").encode()))
    assert_names(message, "pool.jsonl", row=1)
    assert ".csv extension" in message


def test_json_lines_in_a_csv_file_suggest_the_jsonl_extension():
    """It said "the row has 3 of the header's 7 values", as if the JSON were CSV."""
    message = error_of(("pool.csv", jsonl(item("a")) + b"\n" + jsonl(item("b", prompt="p, q"))))
    assert "pool.csv" in message and "JSON objects, not comma-separated values" in message and ".jsonl" in message


def test_a_repeated_key_in_a_json_line_is_refused():
    message = error_of(
        ("pool.jsonl", jsonl(item("a")) + b'\n{"id": "b", "prompt": "x", "response": "y", "prompt": "z"}')
    )
    assert_names(message, "pool.jsonl", row=2)
    assert "the line is an object with the key 'prompt' twice" in message


def test_json_nested_too_deeply_is_refused():
    message = error_of(
        ("pool.jsonl", jsonl(item("a")) + b'\n{"id": "b", "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    )
    assert_names(message, "pool.jsonl", row=2)
    assert "the line is nested too deeply" in message


@pytest.mark.parametrize(
    "hidden", ["\u202e", "\u200b", "\t", "\u2060", "\u00ad", "\U000e0041", "\u061c", "\u3164", "\u2800", "\u00a0"]
)
def test_an_id_with_an_invisible_character_is_refused_by_its_row(hidden):
    """An id holding a bidirectional override, a zero-width, format, filler or odd space character shows as
    another id on every card, export and API answer (attacker's reviews: "ab\u202ecd", then "a\u20601")."""
    line = json.dumps({"id": f"ab{hidden}cd", "prompt": "x", "response": "y"}).encode()
    message = error_of(("pool.jsonl", jsonl(item("a")) + b"\n" + line))
    assert_names(message, "pool.jsonl", row=2)
    assert f"holds the invisible character {ascii(hidden)[1:-1]}" in message


def test_an_id_with_a_space_at_an_end_is_refused():
    message = error_of(
        ("pool.jsonl", jsonl(item("a")) + b"\n" + json.dumps({"id": "a ", "prompt": "x", "response": "y"}).encode())
    )
    assert_names(message, "pool.jsonl", row=2)
    assert "a space at its start or end" in message


def test_a_number_too_long_to_read_is_refused_by_its_row():
    """An integer of more digits than Python converts raised a ValueError that answered 500 (an attacker's review)."""
    message = error_of(
        (
            "pool.jsonl",
            jsonl(item("a")) + b'\n{"id": "b", "prompt": "x", "response": "y", "label": ' + b"9" * 5000 + b"}",
        )
    )
    assert_names(message, "pool.jsonl", row=2)
    assert "digits, too long to read" in message


@pytest.mark.parametrize("line, kind", [(b"[1, 2]", "a list"), (b'"text"', "text"), (b"3", "a number")])
def test_a_json_line_that_is_not_an_object_is_named(line, kind):
    message = error_of(("pool.jsonl", jsonl(item("a")) + b"\n\n" + line))
    assert_names(message, "pool.jsonl", row=3)
    assert f"is {kind}" in message and "not a JSON object" in message


def test_a_file_that_is_not_parquet_is_refused():
    message = error_of(("pool.parquet", b"id,prompt,response\nq1,a,b\n"))
    assert_names(message, "pool.parquet")
    assert "not a readable Parquet file" in message


def test_a_parquet_file_named_csv_is_called_not_utf8():
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist([item("a")]), buffer)
    message = error_of(("pool.csv", buffer.getvalue().to_pybytes()))
    assert "not UTF-8" in message and "Parquet" in message


def test_a_csv_row_with_too_many_fields_is_named_by_its_line():
    csv = POOL_HEADER + 'q1,"Hi,\nthere",Hello,1\n\nq2,Hi, there,Hello,1\n'
    message = error_of(("pool.csv", csv.encode()))
    assert_names(message, "pool.csv", row=5)
    assert "the row has 5 fields where the first row has 4" in message


@pytest.mark.parametrize("name", ["pool.csv", "pool.jsonl"])
def test_old_mac_line_ends_count_as_lines(name):
    rows = (
        [POOL_HEADER.strip(), "q1,Hi,Hello,1", "q2,Hi,Hello,7"]
        if name.endswith(".csv")
        else [json.dumps(item("q1")), json.dumps(item("q2", label=7))]
    )
    message = error_of((name, "\r".join(rows).encode()))
    assert_names(message, name, row=len(rows), column="label")


def test_an_unclosed_quote_is_named_by_its_line():
    message = error_of(("pool.csv", (POOL_HEADER + 'q1,Hi,Hello,1\nq2,"Hi,Hello,1\nq3,Hi,Hello,1\n').encode()))
    assert_names(message, "pool.csv", row=3)
    assert "never closed" in message


def test_a_row_cut_short_is_named_not_loaded_with_empty_values():
    """A row with fewer values than the header (a lost comma) was loaded with an empty response; an empty
    value written as such is still a value."""
    message = error_of(("pool.csv", (POOL_HEADER + 'q1,Hi,Hello,1\n\nq2,"What is 1 plus 1?"\nq3,Hi,,1\n').encode()))
    assert_names(message, "pool.csv", row=4)
    assert "2 of the header's 4 values: no response, label" in message
    assert len(load_inputs(("pool.csv", (POOL_HEADER + "q1,Hi,,1\n").encode())).pool) == 1


def test_a_semicolon_separated_file_is_recognised():
    message = error_of(("pool.csv", b"id;prompt;response\nq1;Hi;Hello\n"))
    assert_names(message, "pool.csv", row=1)
    assert "not comma-separated" in message


def test_a_repeated_column_name_is_refused():
    message = error_of(("pool.csv", b"id,prompt,response,id\nq1,Hi,Hello,q2\n"))
    assert_names(message, "pool.csv", column="id")
    assert "columns 1 and 4" in message


def test_a_pandas_index_column_is_explained():
    message = error_of(("pool.csv", b",id,prompt,response\n0,q1,Hi,Hello\n"))
    assert_names(message, "pool.csv", row=1)
    assert "column 1 has no name" in message and "to_csv(index=False)" in message


def test_a_folder_is_not_a_file(tmp_path):
    assert_names(error_of(tmp_path), str(tmp_path))
    assert "is a folder" in error_of(tmp_path)


def test_an_unnamed_csv_column_is_refused():
    message = error_of(("pool.csv", b"id,prompt,response,\nq1,Hi,Hello,\n"))
    assert_names(message, "pool.csv", row=1)
    assert "column 4 has no name" in message


# --------------------------------------------------------------------------- column errors


@pytest.mark.parametrize(
    "header, column, fix",
    [
        ("id,promt,response", "prompt", "rename column 'promt' to 'prompt'"),
        ("id,Prompt,response", "prompt", "rename column 'Prompt' to 'prompt'"),
        ("ID,prompt,response", "id", "rename column 'ID' to 'id'"),
        ("id,question_text,response", "prompt", "add a 'prompt' column (columns found: id, question_text, response)"),
    ],
)
def test_a_missing_column_gets_the_closest_name(header, column, fix):
    message = error_of(("pool.csv", f"{header}\nq1,Hi,Hello\n".encode()))
    assert_names(message, "pool.csv", column=column)
    assert "required column is missing" in message and fix in message


@pytest.mark.parametrize("misspelt, expected", [("lable", "label"), ("refrence", "reference"), ("Answer", "answer")])
def test_a_misspelt_optional_column_is_refused(misspelt, expected):
    message = error_of(("pool.csv", f"id,prompt,response,{misspelt}\nq1,Hi,Hello,1\n".encode()))
    assert_names(message, "pool.csv", column=misspelt)
    assert f"misspelling of '{expected}'" in message


def test_a_misspelt_samples_column_is_named():
    pool = ("pool.jsonl", jsonl(item("a")))
    message = error_of(pool, ("samples.csv", b"id,samples\na,x\n"))
    assert_names(message, "samples.csv", column="sample")
    assert "rename column 'samples' to 'sample'" in message


# --------------------------------------------------------------------------- value errors


def test_duplicate_ids_name_both_rows_and_count_the_others():
    content = jsonl(item("a"), item("b"), item("a"), item("c"), item("b"))
    message = error_of(("pool.jsonl", content))
    assert_names(message, "pool.jsonl", row=1, column="id")
    assert "id 'a' is used more than once, on rows 1, 3 (and 1 more repeated id)" in message


def test_duplicate_ids_in_a_csv_count_the_header_and_quoted_newlines():
    csv = POOL_HEADER + 'q1,"two\nlines",Hello,1\nq2,Hi,Hello,1\n\nq1,Hi,Hello,0\n'
    message = error_of(("pool.csv", csv.encode()))
    assert "on rows 2, 6" in message


@pytest.mark.parametrize(
    "value, fragment",
    [
        (True, "a true/false value"),
        ({"a": 1}, "a JSON object"),
        (["a"], "a list"),
    ],
)
def test_an_id_that_is_not_text_is_refused(value, fragment):
    message = error_of(("pool.jsonl", jsonl(item("a"), item(value))))
    assert_names(message, "pool.jsonl", row=2, column="id")
    assert f"the id must be text, but it is {fragment}" in message


@pytest.mark.parametrize("value", [None, "", "   "])
def test_an_empty_id_is_refused(value):
    message = error_of(("pool.jsonl", jsonl(item("a"), item(value))))
    assert_names(message, "pool.jsonl", row=2, column="id")
    assert "the id is missing or empty" in message


@pytest.mark.parametrize("prompt", ["", " \t "])
def test_an_empty_prompt_is_refused_with_its_csv_row(prompt):
    csv = POOL_HEADER + f"q1,Hi,Hello,1\nq2,{prompt},Hello,1\nq3,,Hello,1\n"
    message = error_of(("pool.csv", csv.encode()))
    assert_names(message, "pool.csv", row=3, column="prompt")
    assert "the prompt is missing or empty (and 1 more row)" in message


def test_a_missing_response_is_refused_but_an_empty_one_is_kept():
    message = error_of(("pool.jsonl", jsonl(item("a", response=""), {"id": "b", "prompt": "Hi"})))
    assert_names(message, "pool.jsonl", row=2, column="response")
    assert "the response is missing" in message


def test_counts_further_offending_rows():
    records = [item(f"q{k}", label=2) for k in range(14)]
    message = error_of(("pool.jsonl", jsonl(*records)))
    assert "(and 13 more rows)" in message


@pytest.mark.parametrize(
    "label, fragment",
    [
        ("yes", "the label is not a number: 'yes'"),
        ('"0,5"', "the label is not a number: '0,5'"),
        ("1.5", "the label 1.5 is outside [0, 1]"),
        ("-1", "the label -1 is outside [0, 1]"),
        ("inf", "is outside [0, 1]"),
    ],
)
def test_a_bad_label_in_a_csv_is_named(label, fragment):
    message = error_of(("pool.csv", (POOL_HEADER + f"q1,Hi,Hello,1\nq2,Hi,Hello,{label}\n").encode()))
    assert_names(message, "pool.csv", row=3, column="label")
    assert fragment in message and "number from 0 to 1" in message


@pytest.mark.parametrize("label, fragment", [("high", "not a number: 'high'"), (3, "3 is outside")])
def test_a_bad_label_in_json_is_named(label, fragment):
    message = error_of(("pool.jsonl", jsonl(item("a", label=label))))
    assert_names(message, "pool.jsonl", row=1, column="label")
    assert fragment in message


def test_json_true_and_false_are_labels_1_and_0():
    """How evaluation tools write correctness; a proxy column read them so, and the label refused them."""
    inputs = load_inputs(("pool.jsonl", jsonl(item("a", label=True), item("b", label=False), item("c", label=None))))
    assert inputs.pool["label"].tolist()[:2] == [1.0, 0.0] and pd.isna(inputs.pool["label"].iat[2])


def test_the_words_true_and_false_are_labels_1_and_0_in_any_case():
    """A CSV cannot hold JSON's true and false, and Excel writes TRUE: the words were refused by a message whose
    fix offered them (a new user's review)."""
    rows = "".join(f"q{k},Hi,Hello,{word}\n" for k, word in enumerate(("true", "TRUE", " False ", "1", "")))
    inputs = load_inputs(("pool.csv", (POOL_HEADER + rows).encode()))
    assert inputs.pool["label"].tolist()[:4] == [1.0, 1.0, 0.0, 1.0] and pd.isna(inputs.pool["label"].iat[4])
    strings = load_inputs(("pool.jsonl", jsonl(item("a", label="TRUE"), item("b", label="false"))))
    assert strings.pool["label"].tolist() == [1.0, 0.0]


def test_a_too_long_field_is_refused(monkeypatch):
    monkeypatch.setattr(core.inputs.io, "MAX_FIELD_CHARS", 20)
    message = error_of(("pool.jsonl", jsonl(item("a"), item("b", response="x" * 21))))
    assert_names(message, "pool.jsonl", row=2, column="response")
    assert "21 characters long, over the limit of 20" in message


def arrow_text(values: list[str]) -> pd.Series:
    return pd.Series(values, dtype=pd.StringDtype("pyarrow"))


def test_arrow_text_columns_are_checked_from_their_buffers(monkeypatch):
    """The fast path (core.inputs.io._arrow_text_is_clean) passes only what the cell-by-cell check passes, and
    a NUL or an over-long cell in an Arrow-backed column (what readers make) is still named with its row."""
    monkeypatch.setattr(core.inputs.io, "MAX_FIELD_CHARS", 20)
    check = core.inputs.io._check_cells
    clean = arrow_text(["a", "", "é" * 20, "b"])  # 40 bytes but 20 characters: the cells decide
    check(Table.of_frame("t.jsonl", pd.DataFrame({"c": clean})), "c", clean)
    assert core.inputs.io._arrow_text_is_clean(arrow_text(["a", "", "bc"]))
    sliced = arrow_text(["x\x00y", "fine", "also fine"])[1:]  # the NUL lies in the buffer, outside the slice
    check(Table.of_frame("t.jsonl", pd.DataFrame({"c": sliced.reset_index(drop=True)})), "c", sliced)
    for bad, fragment, row in ((["a", "b\x00", "c"], "NUL character", 2), (["a", "b", "x" * 21], "21 characters", 3)):
        values = arrow_text(bad)
        with pytest.raises(InputError, match=fragment) as error:
            check(Table.of_frame("t.jsonl", pd.DataFrame({"c": values})), "c", values)
        assert_names(str(error.value), "t.jsonl", row=row, column="c")


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12), max_size=6))
def test_the_arrow_fast_path_passes_exactly_the_text_without_nul(texts):
    """Short texts (far under MAX_FIELD_CHARS): clean exactly when no cell holds a NUL."""
    assert core.inputs.io._arrow_text_is_clean(arrow_text(texts)) == (not any("\x00" in t for t in texts))


def test_a_file_over_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(core.inputs.tables, "MAX_FILE_BYTES", 100)
    message = error_of(("pool.jsonl", jsonl(*(item(f"q{k}") for k in range(5)))))
    assert_names(message, "pool.jsonl")
    assert "of data, over the limit of 100 bytes" in message


def test_too_many_columns_are_refused(monkeypatch):
    monkeypatch.setattr(core.inputs.tables, "MAX_COLUMNS", 4)
    message = error_of(("pool.csv", b"id,prompt,response,a,b\nq1,Hi,Hello,1,2\n"))
    assert_names(message, "pool.csv")
    assert "5 different columns (keys), over the limit of 4" in message
    # refused from the header, before pandas reads the cells (a 200,003-column header took 10 s before)
    monkeypatch.setattr(core.inputs.tables.pd, "read_csv", lambda *a, **k: pytest.fail("the cells were parsed"))
    assert "over the limit of 4" in error_of(("pool.csv", b"id,prompt,response,a,b\nq1,Hi,Hello,1,2\n"))


def test_a_too_long_metadata_field_is_refused(monkeypatch):
    monkeypatch.setattr(core.inputs.io, "MAX_FIELD_CHARS", 20)
    message = error_of(("pool.csv", (POOL_HEADER[:-1] + ",notes\nq1,Hi,Hello,1," + "n" * 30 + "\n").encode()))
    assert_names(message, "pool.csv", row=2, column="notes")


# --------------------------------------------------------------------------- sample errors

POOL = ("pool.jsonl", jsonl(item("a"), item("b")))


def test_samples_of_an_unknown_id_are_named():
    samples = (
        "samples.jsonl",
        jsonl({"id": "a", "sample": "4"}, {"id": "zz", "sample": "5"}, {"id": "yy", "sample": "5"}),
    )
    message = error_of(POOL, samples)
    assert_names(message, "samples.jsonl", row=2, column="id")
    assert "id 'zz' is not in the pool pool.jsonl (and 1 more row)" in message


def test_sample_ids_with_extra_spaces_get_a_specific_fix():
    message = error_of(POOL, ("samples.csv", b"id,sample\na,4\n b ,5\n"))
    assert_names(message, "samples.csv", row=3, column="id")
    assert "id ' b ' is not in the pool" in message and "remove the spaces" in message


def test_a_missing_sample_is_refused_but_an_empty_one_is_kept():
    samples = ("samples.csv", b"id,sample\na,\nb,5\n")
    assert load_inputs(POOL, samples).samples["sample"].tolist() == ["", "5"]
    message = error_of(POOL, ("samples.jsonl", jsonl({"id": "a", "sample": "4"}, {"id": "b", "sample": None})))
    assert_names(message, "samples.jsonl", row=2, column="sample")
    assert "the sample is missing" in message


@pytest.mark.parametrize(
    "logprob, fragment",
    [("abc", "the logprob is not a number: 'abc'"), ("2.5", "is positive"), ("-inf", "is not finite")],
)
def test_a_bad_logprob_is_named(logprob, fragment):
    samples = ("samples.csv", f"id,sample,logprob\na,4,-1\nb,5,{logprob}\n".encode())
    message = error_of(POOL, samples)
    assert_names(message, "samples.csv", row=3, column="logprob")
    assert fragment in message


def test_samples_given_twice_are_refused():
    pool = ("pool.jsonl", jsonl(item("a", samples=["4"])))
    message = error_of(pool, ("samples.jsonl", jsonl({"id": "a", "sample": "4"})))
    assert_names(message, "pool.jsonl", column="samples")
    assert "given twice" in message


@pytest.mark.parametrize(
    "cell, fragment",
    [("Paris", "the samples cell is not valid JSON"), ('{""sample"": ""x""}', "a JSON object, not a list")],
)
def test_a_csv_samples_cell_that_is_not_a_list_is_named(cell, fragment):
    csv = f'id,prompt,response,samples\nq1,Hi,Hello,"[""x""]"\nq2,Hi,Hello,"{cell}"\n'
    message = error_of(("pool.csv", csv.encode()))
    assert_names(message, "pool.csv", row=3, column="samples")
    assert fragment in message


def test_a_bad_element_of_a_samples_list_names_its_place():
    pool = ("pool.jsonl", jsonl(item("a", samples=["x"]), item("b", samples=["y", ["z"]])))
    message = error_of(pool)
    assert_names(message, "pool.jsonl", row=2, column="samples")
    assert "the sample must be text, but it is a list (element 2 of the list)" in message


def test_a_sample_object_with_its_own_id_is_named():
    pool = ("pool.jsonl", jsonl(item("a", samples=["x"]), item("b", samples=["y", {"id": "a", "sample": "z"}])))
    message = error_of(pool)
    assert_names(message, "pool.jsonl", row=2, column="samples")
    assert "element 2 of the samples list has its own 'id'" in message


def test_a_positive_logprob_inside_the_pool_names_its_place():
    pool = ("pool.jsonl", jsonl(item("a", samples=[{"sample": "x", "logprob": -1}, {"sample": "y", "logprob": 3}])))
    message = error_of(pool)
    assert_names(message, "pool.jsonl", row=1, column="samples")
    assert "(element 2 of the list)" in message and "positive" in message


# --------------------------------------------------------------------------- export helper


@pytest.mark.parametrize("cell", ["=1+1", "+33 1", "-2", "@SUM(A1)", "\tx", "\rx", "\0x", '=HYPERLINK("http://x")'])
def test_spreadsheet_safe_quotes_formula_triggers(cell):
    assert spreadsheet_safe(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["Paris", "", " =1", "'=1", "a=b", 3, -2.5, None])
def test_spreadsheet_safe_leaves_everything_else(cell):
    assert spreadsheet_safe(cell) == cell


# --------------------------------------------------------------------------- through the CLI


def test_the_cli_prints_one_line_exits_2_and_writes_nothing(tmp_path, capsys):
    from core.cli import main

    pool = tmp_path / "pool.csv"
    pool.write_text(POOL_HEADER + "q1,Hi,Hello,1\nq1,Hi,Hello,0\n", encoding="utf-8")
    out = tmp_path / "items.csv"
    assert main(["prepare", "--pool", str(pool), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {pool}, row 2, column 'id'")
    assert not out.exists()


# --------------------------------------------------------------------------- round trip

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(prompts=st.lists(TEXT.filter(str.strip), min_size=1, max_size=5), response=TEXT, sample=TEXT)
def test_any_text_written_by_standard_writers_is_read_back_exactly(tmp_path, prompts, response, sample):
    records = [{"id": f"q{k}", "prompt": prompt, "response": response} for k, prompt in enumerate(prompts)]
    samples = [{"id": record["id"], "sample": sample} for record in records]
    csv_pool, csv_samples = tmp_path / "pool.csv", tmp_path / "samples.csv"
    write_csv(csv_pool, records)
    write_csv(csv_samples, samples)
    json_pool = ("pool.jsonl", jsonl(*records))
    parquet_pool = write_parquet(tmp_path / "pool.parquet", records)
    for pool, sample_file in (
        (csv_pool, csv_samples),
        (json_pool, ("s.jsonl", jsonl(*samples))),
        (parquet_pool, csv_samples),
    ):
        inputs = load_inputs(pool, sample_file)
        assert inputs.pool["prompt"].tolist() == prompts
        assert inputs.pool["response"].tolist() == [response] * len(prompts)
        assert inputs.samples["sample"].tolist() == [sample] * len(prompts)


@pytest.mark.parametrize(
    "text", ["id;prompt;response\nq1;Hi;Hello\n", "id;prompt;response\nq1;Hi, there;Hello\nq2;Hi;Hello\n"]
)
def test_a_csv_separated_by_semicolons_is_named_so(text):
    """Excel in much of Europe writes ';': the error spoke of commas to put in quotes, or of a missing 'id' (a new
    user's review)."""
    message = error_of(("pool.csv", text.encode()))
    assert "is one column: the file is not comma-separated" in message and "CSV UTF-8" in message, message
