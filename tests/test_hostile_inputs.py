"""The hostile-input corpus (tests/data/hostile): each file gives a specific error or
loads with its text kept exactly, and a refused upload leaves nothing in the database."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.inputs.io import load_inputs, spreadsheet_safe
from core.services.project import create_project, start_preparation
from core.store import Store

HOSTILE = Path(__file__).parent / "data" / "hostile"


def _load_corpus():
    spec = importlib.util.spec_from_file_location("hostile_corpus", HOSTILE / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
REFUSED = [entry for entry in corpus.HOSTILE_CORPUS if entry.error]
INERT = [entry for entry in corpus.HOSTILE_CORPUS if not entry.error]


def label(entry) -> str:
    return entry.name + (f"+{entry.samples}" if entry.samples else "")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    return Store.open(f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'store.db'}")


def test_the_corpus_has_at_least_20_files_and_lists_every_committed_one():
    assert len(corpus.HOSTILE_CORPUS) >= 20
    assert len(REFUSED) >= 20 and len(INERT) >= 5
    listed = {name for entry in corpus.HOSTILE_CORPUS for name in (entry.name, entry.samples) if name}
    committed = {path.name for path in HOSTILE.iterdir() if path.is_file() and path.name != "corpus.py"}
    assert committed == listed - set(corpus.GENERATED)
    assert not set(corpus.GENERATED) & committed


@pytest.mark.parametrize("entry", REFUSED, ids=label)
def test_a_malformed_file_gets_its_specific_error(entry):
    with pytest.raises(InputError) as caught:
        load_inputs(entry.upload(), entry.samples_upload())
    message = str(caught.value)
    assert entry.error in message
    assert "\n" not in message and ". Fix: " in message
    assert message.startswith((entry.name, entry.samples or entry.name))


@pytest.mark.parametrize("entry", INERT, ids=label)
def test_a_hostile_text_file_loads_with_its_text_kept_exactly(entry):
    inputs = load_inputs(entry.upload(), entry.samples_upload())
    frames = {"pool": inputs.pool, "samples": inputs.samples}
    assert entry.kept
    for frame, row, column, text in entry.kept:
        assert frames[frame].loc[row, column] == text, (frame, row, column)


def test_a_file_written_to_disk_reads_like_its_upload(tmp_path):
    entry = next(entry for entry in INERT if entry.samples)
    from_disk = load_inputs(entry.write(tmp_path), tmp_path / entry.samples)
    from_upload = load_inputs(entry.upload(), entry.samples_upload())
    assert from_disk.pool.equals(from_upload.pool) and from_disk.samples.equals(from_upload.samples)


@pytest.mark.parametrize("entry", REFUSED, ids=label)
def test_a_refused_upload_saves_nothing(store, entry):
    before = [project.id for project in store.projects()]
    with pytest.raises(InputError):
        create_project(store, f"hostile {label(entry)}", entry.upload(), entry.samples_upload(), start=False)
    assert [project.id for project in store.projects()] == before


@pytest.mark.parametrize("entry", INERT, ids=label)
def test_hostile_text_survives_storage_and_preparation_unchanged(store, entry):
    project = create_project(store, f"inert {label(entry)}", entry.upload(), entry.samples_upload(), start=False)
    assert store.input_files(project)["pool"] == entry.upload()
    start_preparation(store, project, wait=True)
    assert store.project(project).status == "ready", store.project(project).error
    items = store.load_items(project)
    for frame, row, column, text in entry.kept:
        if frame == "pool":
            assert items.loc[row, column] == text, (row, column)


@pytest.mark.parametrize("cell", corpus.FORMULAS)
def test_every_formula_payload_is_made_inert_for_export(cell):
    safe = spreadsheet_safe(cell)
    assert safe == "'" + cell
    assert not safe.startswith(("=", "+", "-", "@", "\t", "\r"))


VALID = [entry for entry in INERT if not entry.samples]


@settings(max_examples=150, deadline=None)
@given(
    source=st.sampled_from(VALID),
    name=st.sampled_from(["pool.jsonl", "pool.csv", "pool.parquet", "pool.json"]),
    cut=st.integers(min_value=0),
    flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=4),
)
def test_damaged_files_give_an_input_error_or_load_never_a_crash(source, name, cut, flips):
    data = bytearray(source.upload()[1])
    data = data[: cut % (len(data) + 1)] if cut % 3 == 0 else data
    for position, value in flips:
        if data:
            data[position % len(data)] = value
    try:
        load_inputs((name, bytes(data)))
    except InputError as error:
        assert "\n" not in str(error) and ". Fix: " in str(error)


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(["pool.jsonl", "pool.csv", "pool.parquet", "pool.json"]), data=st.binary(max_size=300))
def test_random_bytes_give_an_input_error_never_a_crash(name, data):
    with pytest.raises(InputError):
        load_inputs((name, data))


def _refused_at(monkeypatch, read) -> int:
    """Arrow's allocated bytes (above those before ``read``) when the size check refused what ``read`` reads."""
    import pyarrow as pa

    from core.inputs import tables

    at_refusal = []
    check_size = tables._check_size

    def measured(name: str, size: int, verb: str) -> None:
        try:
            check_size(name, size, verb)
        except InputError:
            at_refusal.append(pa.total_allocated_bytes())
            raise

    monkeypatch.setattr(tables, "_check_size", measured)
    monkeypatch.setattr("core.inputs.readers.hf_dataset._check_size", measured)  # imported by name there
    before = pa.total_allocated_bytes()
    with pytest.raises(InputError, match="over the limit of"):
        read()
    return at_refusal[0] - before


def test_a_parquet_bomb_is_refused_before_it_inflates(monkeypatch):
    """A row group of 20 million run-length-encoded zeros: about 90 kB of file, 160 MB once decoded. The read
    stops once the decoded size passes the limit (here 10 MB), with not much more than that in memory."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.inputs import tables

    rows = 20_000_000
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": np.zeros(rows, dtype=np.int64)}), buffer, row_group_size=rows, compression="zstd")
    assert len(buffer.getvalue()) < 200_000
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 10_000_000)
    held = _refused_at(monkeypatch, lambda: tables.read_table(("bomb.parquet", buffer.getvalue())))
    assert held < 20_000_000  # the limit and a batch, not the 160 MB


@pytest.mark.parametrize("dictionary", [True, False])
def test_parquet_rows_of_large_values_are_decoded_a_few_at_a_time(monkeypatch, dictionary):
    """40 rows of 1 MB of bytes (not text) each decoded as one 40 MB batch before the size check (an attacker's
    review: 700 rows of 10 MB, 7 GB from a 230 kB file): bytes are now read dictionary-encoded as text is, and
    batches are sized by the row group's declared bytes a row too (a file written without dictionaries)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.inputs import tables

    buffer = io.BytesIO()
    blobs = pa.table({"blob": [b"\0" * 1_000_000] * 40})
    pq.write_table(blobs, buffer, row_group_size=40, compression="zstd", use_dictionary=dictionary)
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 5_000_000)
    monkeypatch.setattr(tables, "PARQUET_BATCH_BYTES", 2_000_000)
    held = _refused_at(monkeypatch, lambda: tables.read_table(("wide.parquet", buffer.getvalue())))
    assert held < 12_000_000  # the limit and a batch, not the 40 MB


def test_an_arrow_upload_is_refused_before_its_compressed_batches_inflate(monkeypatch):
    """An Arrow stream of zstd-compressed batches was read whole before any check (an attacker's review: 969
    bytes to 3.2 GB); now batch by batch."""
    import pyarrow as pa

    from core.inputs import tables
    from core.inputs.readers import load

    sink = pa.BufferOutputStream()
    batch = pa.record_batch({"id": pa.array(["x"] * 250_000), "prompt": pa.array(["a" * 8] * 250_000)})
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        for _ in range(20):
            writer.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 10_000_000)
    held = _refused_at(monkeypatch, lambda: load(("data-00000-of-00001.arrow", data)))
    assert held < 25_000_000  # the limit and a batch or two, not the 70 MB of 20 batches


def test_an_inspect_log_whose_members_together_pass_the_limit_is_refused(monkeypatch, tmp_path):
    """Each member was capped but not their sum (an attacker's review: four of 950 MB, 3.8 GB in all)."""
    import zipfile

    from core.inputs import tables
    from core.inputs.readers import inspect_log, load

    log = tmp_path / "big.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        for k in range(4):
            archive.writestr(f"samples/q{k}_epoch_1.json", json.dumps({"id": f"q{k}", "pad": " " * 400_000}))
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 1_000_000)
    monkeypatch.setattr(inspect_log, "MAX_FILE_BYTES", 1_000_000)
    with pytest.raises(InputError, match=r"the \.eval archive holds 1,600,\d+ bytes, over the limit"):
        load(str(log))


def test_an_inspect_logs_samples_are_read_one_member_at_a_time_and_a_member_of_too_many_values_is_refused(
    monkeypatch, tmp_path
):
    """Every member was parsed before any was read: 35 KB of members holding `{"pad": [{}, {}, ...]}`, whose
    Python objects take 25 times their text, held 890 MB in the server and again in the worker (an attacker's
    review). Now each sample's fields are taken before the next is parsed, and a member is refused before it is
    parsed where its values would pass MAX_MEMBER_VALUES."""
    import tracemalloc
    import zipfile

    from core.inputs.readers import inspect_log, load

    log = tmp_path / "wide.eval"
    padding = "[" + ",".join(["{}"] * 100_000) + "]"  # 300 kB of text, about 7 MB as Python objects
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"model": "m"}}))
        for k in range(20):
            sample = f'{{"id": "q{k}", "input": "p", "target": "t", "pad": {padding}, "output": {{"choices": [{{"message": {{"content": "r"}}}}]}}}}'
            archive.writestr(f"samples/q{k}_epoch_1.json", sample)
    tracemalloc.start()
    try:
        pool, _ = inspect_log.read_pool(str(log))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(pool.frame) == 20 and peak < 40_000_000  # one member's objects at a time: 140 MB all together
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_VALUES", 50_000)
    with pytest.raises(InputError, match=r"samples/q0_epoch_1\.json holds up to 100,\d+ JSON values, over the limit"):
        load(str(log))


def test_an_inspect_sample_that_is_no_object_is_named(tmp_path):
    """A member holding a JSON list was read as a sample: AttributeError, a traceback."""
    import zipfile

    from core.inputs.readers import load

    log = tmp_path / "list.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"model": "m"}}))
        archive.writestr("samples/q0_epoch_1.json", "[{}, {}]")
    with pytest.raises(InputError, match="sample 1 is a list, not a JSON object"):
        load(str(log))


@pytest.mark.parametrize(
    ("member", "content", "said"),
    [
        ("header.json", b"{not json", "header.json is not JSON"),
        ("samples/q0_epoch_1.json", b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
        ("samples/q0_epoch_1.json", b'{"id": "q0", "x": "\xff"}', "samples/q0_epoch_1.json is not JSON"),
        ("samples/q0_epoch_1.json", b'{"id": "q0", "target": "t", "input": ' + b"[" * 900 + b"]" * 900 + b"}", None),
    ],
)
def test_a_malformed_inspect_log_is_an_input_error_not_a_500(tmp_path, member, content, said):
    """Members that are not JSON, not UTF-8 or nested too deeply answered 500 with a traceback (a security
    review's re-check)."""
    import zipfile

    from core.inputs.readers import load

    log = tmp_path / "bad.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        if member != "header.json":
            archive.writestr("header.json", json.dumps({"eval": {"model": "m"}}))
        else:
            archive.writestr("samples/q0_epoch_1.json", json.dumps({"id": "q0", "input": "p", "target": "t"}))
        archive.writestr(member, content)
    try:
        load(str(log))
    except InputError as refused:
        assert said is None or said in str(refused)


@pytest.mark.parametrize("kind", ["map", "fixed_size_list", "fixed_size_binary"])
def test_a_parquet_bomb_in_a_map_a_fixed_size_list_or_fixed_size_bytes_is_refused_before_it_inflates(monkeypatch, kind):
    """One 7 kB text repeated through a dictionary inside a map or a fixed-size list was counted once and the
    file accepted, then spelt out in full; dictionary-encoded fixed-size bytes were read plain (a security
    review's re-check: 1.7 MB of file past 9 GB)."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.inputs import tables

    n, width = 20_000, 7_000
    repeated = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array(["a" * width]))
    column = {
        "map": lambda: pa.MapArray.from_arrays(
            pa.array(np.arange(n + 1, dtype=np.int32)), pa.array(["k"] * n), repeated
        ),
        "fixed_size_list": lambda: pa.FixedSizeListArray.from_arrays(repeated, 1),
        "fixed_size_binary": lambda: pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(n, np.int32)), pa.array([b"\0" * width], pa.binary(width))
        ),
    }[kind]()
    rows = {"id": [f"i{k}" for k in range(n)], "prompt": ["p"] * n, "response": ["r"] * n}
    buffer = io.BytesIO()
    pq.write_table(pa.table({**rows, "x": column}), buffer, compression="zstd")
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 20_000_000)
    monkeypatch.setattr(tables, "PARQUET_BATCH_BYTES", 2_000_000)
    held = _refused_at(monkeypatch, lambda: tables.read_table((f"{kind}.parquet", buffer.getvalue())))
    assert held < 40_000_000  # the limit and a batch or two, not the 140 MB spelt out


def test_a_parquet_file_of_too_many_row_groups_is_refused_before_any_is_read(monkeypatch):
    """Each row group costs a metadata pass and a batch: 50,000 one-row groups (224 MB) took the server to 9 GB
    (a security review)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.inputs import tables

    buffer = io.BytesIO()
    rows = {"id": [f"i{k}" for k in range(12)], "prompt": ["p"] * 12, "response": ["r"] * 12}
    pq.write_table(pa.table(rows), buffer, row_group_size=1)
    monkeypatch.setattr(tables, "MAX_ROW_GROUPS", 10)
    with pytest.raises(InputError, match="the file has 12 row groups, over the limit of 10"):
        tables.read_table(("groups.parquet", buffer.getvalue()))
    monkeypatch.setattr(tables, "MAX_ROW_GROUPS", 12)
    assert len(tables.read_table(("groups.parquet", buffer.getvalue())).frame) == 12
