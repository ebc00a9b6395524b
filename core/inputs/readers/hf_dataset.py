"""Hugging Face datasets: a folder written by `Dataset.save_to_disk`, or one of a dataset's Arrow files.

A save_to_disk folder holds `dataset_info.json`, `state.json` (which lists the
data files in order) and `data-XXXXX-of-NNNNN.arrow` files in Arrow's
streaming format; they are read with pyarrow, the `datasets` package is not
needed. A DatasetDict folder (`dataset_dict.json`) has one such folder per
split: give the split's folder. A dataset's Parquet files are read as any
Parquet pool. The dataset's columns are rarely named id/prompt/response: pick
them with `--columns prompt=instruction,response=output,...` (core.inputs.readers).
The table then goes through the same checks as a Parquet file (core.inputs.tables).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from core.errors import InputError
from core.inputs.tables import Source, Table, _read_parquet, name_of

FIX = "give the folder Dataset.save_to_disk wrote (for a DatasetDict, the split's folder), or an .arrow file"


def looks_like(source: Source) -> bool:
    """True for a save_to_disk folder (a dataset or a DatasetDict) or an .arrow file."""
    if isinstance(source, tuple):
        return name_of(source).lower().endswith(".arrow")
    path = Path(source)
    if path.is_dir():
        return any((path / name).exists() for name in ("state.json", "dataset_info.json", "dataset_dict.json"))
    return path.suffix.lower() == ".arrow"


def read_dataset(source: Source) -> Table:
    """The dataset's rows, every column as the dataset holds it, rows numbered 1, 2, ..."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = name_of(source)
    parts = _arrow_files(source)
    try:
        tables = [_read_arrow(data) for data in parts]
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    except (pa.ArrowException, OSError) as error:
        raise InputError(f"not a readable Arrow file ({error})", file=name, fix=FIX) from None
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return _read_parquet(name, buffer.getvalue())


def _arrow_files(source: Source) -> list[bytes]:
    if isinstance(source, tuple):
        return [bytes(source[1])]
    path = Path(source)
    if not path.is_dir():
        try:
            return [path.read_bytes()]
        except OSError as error:
            raise InputError(f"cannot be read ({error.strerror})", file=str(path), fix=FIX) from None
    if (path / "dataset_dict.json").exists():
        splits = json.loads((path / "dataset_dict.json").read_text()).get("splits", [])
        raise InputError(
            f"is a DatasetDict with the splits {', '.join(splits)}",
            file=str(path),
            fix=f"give one split's folder, e.g. {path / (splits[0] if splits else 'train')}",
        )
    state = path / "state.json"
    if state.exists():
        files = [entry["filename"] for entry in json.loads(state.read_text()).get("_data_files", [])]
    else:
        files = sorted(p.name for p in path.glob("*.arrow"))
    if not files:
        raise InputError("holds no .arrow data file", file=str(path), fix=FIX)
    return [(path / file).read_bytes() for file in files]


def _read_arrow(data: bytes):
    """An Arrow IPC stream (what save_to_disk writes), or an Arrow IPC file."""
    import pyarrow as pa

    try:
        return pa.ipc.open_stream(pa.BufferReader(data)).read_all()
    except pa.ArrowInvalid:
        return pa.ipc.open_file(pa.BufferReader(data)).read_all()
