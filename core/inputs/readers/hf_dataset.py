"""Hugging Face datasets: a folder written by `Dataset.save_to_disk`, or one of a dataset's Arrow files.

A save_to_disk folder holds `dataset_info.json`, `state.json` (which lists the
data files in order) and `data-XXXXX-of-NNNNN.arrow` files in Arrow's
streaming format; they are read with pyarrow, the `datasets` package is not
needed. A DatasetDict folder (`dataset_dict.json`) has one such folder per
split: give the split's folder. In the browser, upload the folder as a .zip
(or .tar.gz) of it: core.inputs.archives reads it in memory, safely, and the
dataset is the archive's shallowest folder holding one of MARKERS. A dataset's
Parquet files are read as any Parquet pool. The dataset's columns are rarely
named id/prompt/response: pick them with
`--columns prompt=instruction,response=output,...` (core.inputs.readers).
The table then goes through the same checks as a Parquet file (core.inputs.tables).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

from core.errors import InputError
from core.inputs.archives import archive_files, is_archive
from core.inputs.tables import Source, Table, _check_size, _read_parquet, name_of

FIX = "give the folder Dataset.save_to_disk wrote (for a DatasetDict, the split's folder), or an .arrow file"
ARCHIVE_FIX = "zip the folder Dataset.save_to_disk wrote (for a DatasetDict, one split's folder) and upload the .zip"
MARKERS = ("state.json", "dataset_info.json", "dataset_dict.json")
"""Files of a save_to_disk folder: a dataset's (the first two) or a DatasetDict's."""


def looks_like(source: Source) -> bool:
    """True for a save_to_disk folder (a dataset or a DatasetDict), an .arrow file, or an uploaded archive
    (core.inputs.archives: a zipped folder)."""
    if isinstance(source, tuple):
        name = name_of(source).lower()
        return name.endswith(".arrow") or is_archive(name)
    path = Path(source)
    if path.is_dir():
        return any((path / name).exists() for name in MARKERS)
    return path.suffix.lower() == ".arrow"


def read_dataset(source: Source) -> Table:
    """The dataset's rows, every column as the dataset holds it, rows numbered 1, 2, ..."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = name_of(source)
    parts = _arrow_files(source)
    try:
        table = _arrow_table(name, parts)
    except (pa.ArrowException, OSError) as error:
        raise InputError(
            f"not a readable Arrow file ({error})", file=name, fix=ARCHIVE_FIX if is_archive(name) else FIX
        ) from None
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return _read_parquet(name, buffer.getvalue())


def _arrow_files(source: Source) -> list[bytes]:
    """The content of the source's Arrow data files, in the dataset's order."""
    if isinstance(source, tuple):
        name, data = str(source[0]), bytes(source[1])
        return _archived_files(name, data) if is_archive(name) else [data]
    path = Path(source)
    if not path.is_dir():
        try:
            return [path.read_bytes()]
        except OSError as error:
            raise InputError(f"cannot be read ({error.strerror})", file=str(path), fix=FIX) from None
    files = {file.name: file.read_bytes for file in path.iterdir() if file.is_file()}
    return _data_files(str(path), files, FIX, lambda split: f"give one split's folder, e.g. {path / split}")


def _archived_files(name: str, data: bytes) -> list[bytes]:
    """The data files of the dataset in an uploaded archive: its shallowest folder holding one of MARKERS."""
    files = archive_files(name, data)
    folders = {PurePosixPath(path).parent for path in files if PurePosixPath(path).name in MARKERS}
    if not folders:
        raise InputError(
            "holds no Hugging Face dataset (no state.json or dataset_info.json in any folder)",
            file=name,
            fix=ARCHIVE_FIX,
        )
    depth = min(len(folder.parts) for folder in folders)
    shallowest = sorted(str(folder) for folder in folders if len(folder.parts) == depth)
    if len(shallowest) > 1:
        raise InputError(
            f"holds several datasets, in the folders {', '.join(shallowest)}", file=name, fix="zip one of them alone"
        )
    folder = PurePosixPath(shallowest[0])
    inside = {PurePosixPath(path).name: read for path, read in files.items() if PurePosixPath(path).parent == folder}
    where = name if not folder.parts else f"{name}, folder {folder}"
    return _data_files(where, inside, ARCHIVE_FIX, lambda split: f"zip one split's folder alone, e.g. {split}")


def _data_files(
    where: str, files: Mapping[str, Callable[[], bytes]], fix: str, one_split: Callable[[str], str]
) -> list[bytes]:
    """The data files of a save_to_disk folder, in order: those its state.json lists, else its .arrow files by
    name. ``files``: the folder's files by name, each with the call that reads it; ``where`` names the folder
    in errors, ``fix`` says what to give instead, ``one_split(split)`` for a DatasetDict."""
    if "dataset_dict.json" in files:
        splits = [str(split) for split in _json(where, files, "dataset_dict.json", fix).get("splits", [])]
        raise InputError(
            f"is a DatasetDict with the splits {', '.join(splits)}",
            file=where,
            fix=one_split(splits[0] if splits else "train"),
        )
    if "state.json" in files:
        entries = _json(where, files, "state.json", fix).get("_data_files", [])
        names = [str(entry.get("filename")) if isinstance(entry, dict) else "" for entry in entries]
    else:
        names = sorted(file for file in files if file.lower().endswith(".arrow"))
    if not names:
        raise InputError("holds no .arrow data file", file=where, fix=fix)
    missing = next((file for file in names if file not in files), None)
    if missing is not None:
        raise InputError(
            f"state.json lists the data file {missing!r}, which the folder does not hold", file=where, fix=fix
        )
    return [files[file]() for file in names]


def _json(where: str, files: Mapping[str, Callable[[], bytes]], file: str, fix: str) -> dict:
    """The folder's JSON ``file`` as a dict; InputError naming it when it is not one."""
    try:
        value = json.loads(files[file]())
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise InputError(f"{file} is not a JSON object, as Dataset.save_to_disk writes it", file=where, fix=fix)
    return value


def _arrow_table(name: str, parts: list[bytes]):
    """The Arrow data files ``parts`` as one table, in order, each an Arrow IPC stream (what
    save_to_disk writes) or an Arrow IPC file, one batch at a time: InputError (core.inputs.tables'
    size check) once the decoded batches so far pass MAX_FILE_BYTES, before the rest is inflated. Read whole, a
    969-byte upload of compressed buffers inflated to 3.2 GB before any check (an attacker's review)."""
    import pyarrow as pa

    batches, decoded, schema = [], 0, None
    for data in parts:
        try:
            reader = pa.ipc.open_stream(pa.BufferReader(data))
            read = iter(reader)
        except pa.ArrowInvalid:
            reader = pa.ipc.open_file(pa.BufferReader(data))
            read = (reader.get_batch(i) for i in range(reader.num_record_batches))
        schema = schema or reader.schema
        for batch in read:
            decoded += batch.nbytes
            _check_size(name, decoded, "holds")
            batches.append(batch)
    return pa.Table.from_batches(batches, schema=schema)
