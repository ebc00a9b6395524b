"""Inspect AI eval logs (`.eval`, or `.json` written with --log-format json) as a pool or as samples.

The log's layout is Inspect's (https://inspect.aisi.org.uk/eval-logs.html): a
`.eval` file is a zip archive with `header.json` (the eval's spec: task,
model, ...) and one `samples/<id>_epoch_<n>.json` per sample and epoch; a
`.json` log is one object with `eval` and a `samples` list. Both are read
with the standard library, not through `inspect_ai.log`: installing
inspect-ai downgrades packages the app uses. Checked with
`pip install --dry-run inspect-ai` on 2026-12-02: inspect-ai 0.3.285, the
newest release, would replace fsspec 2026.9.0 by 2026.6.0 (inspect-ai's own
requirement, with s3fs 2026.6.0) and python-dateutil 4.0.0 by 2.9.0.post0
(aiobotocore, through s3fs, needs python-dateutil < 3). docs/dependencies.md points
here. The tests read logs made by the real `inspect eval`
(scripts/make_eval_logs.py), and read the logs ActiveGrade writes back
(core.exports.inspect_export) with `inspect_ai.log.read_eval_log`: inspect-ai
is a test dependency only (requirements-dev.txt), never the app's.

As the pool (the target model's log), one item per sample id:
- prompt = the sample's input (a string, or its chat messages written out as
  "role: content" blocks); reference = target (a list joined with " | ");
- response = epoch 1's output, choices[0].message.content (text parts joined);
- every scorer gives a column of its name: a number as it is, True/False as
  1/0, Inspect's letter grades C/P/I/N as 1, 1/2, 0, 0; a proxy
  (`--proxy match`) or, with `--columns label=match`, the label;
- surrogate samples, way 1: the outputs of epochs 2, 3, ... (a samples
  table beside the pool, when the log has several epochs).
As the samples file (way 2: another model's log of the same task): every
epoch's output of every sample is a sample of item id, surrogate = the log's
model. Large strings that Inspect moved to the sample's `attachments` (written
`attachment://<hash>`) are put back.
"""

from __future__ import annotations

import functools
import json
import re
import struct
import zipfile
from collections.abc import Callable, Iterable, Iterator
from io import BytesIO
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd

from core.errors import InputError
from core.inputs.tables import MAX_FILE_BYTES, Source, Table, _read_bytes, kind_of, name_of

SUFFIXES = (".eval",)
ZIP_ZSTANDARD = 93
FIX = "give a log written by `inspect eval` (.eval, or .json with --log-format json)"
LETTER_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""inspect_ai.scorer's CORRECT, PARTIAL, INCORRECT and NOANSWER as numbers (its value_to_float)."""
_SAMPLE_FILE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")


def looks_like(source: Source, head: bytes | None = None) -> bool:
    """True for a .eval file, or a .json file that starts like an Inspect log."""
    name = source[0] if isinstance(source, tuple) else str(source)
    if name.lower().endswith(SUFFIXES):
        return True
    return name.lower().endswith(".json") and head is not None and b'"eval"' in head and b'"version"' in head


T = TypeVar("T")


def _shallow(read: Callable[[Source], T]) -> Callable[[Source], T]:
    """``read`` with a sample nested too deeply to walk (`_resolve` recurses) an InputError, not a 500."""

    @functools.wraps(read)
    def guarded(source: Source) -> T:
        try:
            return read(source)
        except RecursionError:
            raise InputError("a sample nests too deeply to read", file=name_of(source), fix=FIX) from None

    return guarded


@_shallow
def read_pool(source: Source) -> tuple[Table, Table | None]:
    """The target model's log as a pool table, and the samples table of its later epochs when it has any
    (see the module docstring)."""
    name, model, samples = _samples(source)
    records: dict[str, dict] = {}
    extra: list[tuple[str, str]] = []
    for place, sample in enumerate(samples):
        item = _id(name, place, sample)
        if int(sample.get("epoch", 1)) > 1:
            extra.append((item, _output(name, place, sample)))
            continue
        record = {
            "id": item,
            "prompt": _prompt(name, place, sample),
            "response": _output(name, place, sample),
            "reference": _text(_resolve(sample, sample.get("target", ""))),
        }
        for scorer, score in (sample.get("scores") or {}).items():
            record[scorer] = _score(score.get("value") if isinstance(score, dict) else score)
        records[item] = record
    if not records:
        raise InputError("the log has no sample of epoch 1", file=name, fix=FIX)
    pool = Table.of_frame(name, pd.DataFrame.from_records(list(records.values())))
    if not extra:
        return pool, None
    later = pd.DataFrame(extra, columns=["id", "sample"]).assign(surrogate=f"{model or Path(name).stem} (epochs 2+)")
    return pool, Table.of_frame(name, later)


@_shallow
def read_samples(source: Source) -> Table:
    """Another model's log as a long samples table: every epoch's output of every sample."""
    name, model, samples = _samples(source)
    rows = [(_id(name, place, sample), _output(name, place, sample)) for place, sample in enumerate(samples)]
    frame = pd.DataFrame(rows, columns=["id", "sample"]).assign(surrogate=model or Path(name).stem)
    return Table.of_frame(name, frame)


def _samples(source: Source) -> tuple[str, str, Iterable[dict]]:
    """(file name, the eval's model, the samples in epoch then id order as the log lists them): a .eval archive's
    read one member at a time, each dropped once its fields are taken (`_from_zip`)."""
    name, data = _read_bytes(source)
    if data[:2] == b"PK":
        model, samples = _from_zip(name, data)
    else:
        log = _parsed(name, data, "the log is neither a .eval archive nor JSON")
        if not isinstance(log, dict) or not isinstance(log.get("samples"), list):
            raise InputError("the log has no 'samples' list", file=name, fix=FIX + "; was the eval run to its end?")
        model, samples = _model(log), log["samples"]
    return name, model, _objects(name, samples)


def _objects(name: str, samples: Iterable[object]) -> Iterator[dict]:
    """The samples, each a JSON object, else InputError naming it (a list read as a sample was a traceback)."""
    for place, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise InputError(f"sample {place + 1} is {kind_of(sample)}, not a JSON object", file=name, fix=FIX)
        yield sample


def _from_zip(name: str, data: bytes) -> tuple[str, Iterator[dict]]:
    """The eval's model, and its samples parsed one member at a time as they are asked for (each one's fields
    are taken before the next is parsed). Parsed all at once, they were all in memory together: 35 KB of
    members holding `[{},{},...]`, whose Python objects take 25 times their text, held 890 MB (an attacker's
    review); and no member is parsed whose values would take more than MAX_MEMBER_VALUES objects."""
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except zipfile.BadZipFile as error:
        raise InputError(f"the .eval archive cannot be read ({error})", file=name, fix=FIX) from None
    with archive:
        files = [(m.group(2), m.group(1), f) for f in archive.namelist() if (m := sample_file(f))]
        if not files:
            raise InputError("the .eval archive holds no samples/", file=name, fix=FIX)
        names = set(archive.namelist())
        spec = next((f for f in ("header.json", "_journal/start.json") if f in names), None)
        # each member is capped as it is read (`member_bytes`), and so is their sum: four of 950 MB each, 117 KB
        # compressed, inflated to 3.8 GB (an attacker's review)
        total = sum(archive.getinfo(f).file_size for f in [*(f for _, _, f in files), *([spec] if spec else [])])
        if total > MAX_FILE_BYTES:
            raise InputError(f"the .eval archive holds {total:,} bytes, over the limit", file=name, fix=FIX)
        header = _member(name, archive, spec) if spec else {}
        files.sort(key=lambda entry: (int(entry[0]), entry[1]))

    def each() -> Iterator[dict]:
        with zipfile.ZipFile(BytesIO(data)) as opened:
            for _, _, member in files:
                yield _member(name, opened, member)

    return _model(header), each()


MAX_MEMBER_VALUES = 5_000_000
"""The most JSON values one member of a .eval archive may hold (counted as its commas and colons, an upper
bound): Python takes up to about 100 bytes for each parsed value, so a member is at most about 0.5 GB in memory
beside its text. An Inspect sample's messages, scores and events hold thousands to a few hundred thousand."""


def _member(name: str, archive: zipfile.ZipFile, member: str) -> object:
    """One archive member parsed as JSON, once its count of values is under MAX_MEMBER_VALUES."""
    data = member_bytes(name, archive, member)
    values = data.count(b",") + data.count(b":") + 1
    if values > MAX_MEMBER_VALUES:
        raise InputError(
            f"{member} holds up to {values:,} JSON values, over the limit of {MAX_MEMBER_VALUES:,}",
            file=name,
            fix=FIX + "; a sample's log this large is no eval sample",
        )
    return _parsed(name, data, f"{member} is not JSON")


def _parsed(name: str, data: bytes, problem: str) -> object:
    """``data`` parsed as JSON, or InputError saying ``problem`` and why: text that is not JSON, not UTF-8 or
    nested too deeply answered 500 with a traceback (a security review)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise InputError(f"{problem}: it nests too deeply to read", file=name, fix=FIX) from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise InputError(f"{problem} ({str(error)[:200]})", file=name, fix=FIX) from None


def member_bytes(name: str, archive: zipfile.ZipFile, member: str) -> bytes:
    """One archive member's bytes. Inspect compresses with zstandard (zip method 93), which Python's zipfile
    reads only from 3.14: such a member's raw bytes are taken after its local header and decompressed with
    the zstandard package, never to more than the size the archive declares (MAX_FILE_BYTES at most)."""
    info = archive.getinfo(member)
    if info.file_size > MAX_FILE_BYTES:
        raise InputError(f"{member} holds {info.file_size:,} bytes, over the limit", file=name, fix=FIX)
    if info.compress_type != ZIP_ZSTANDARD:
        return archive.read(info)
    import zstandard

    handle = archive.fp
    handle.seek(info.header_offset)
    local = handle.read(30)
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    try:
        data = zstandard.ZstdDecompressor().decompress(handle.read(info.compress_size), max_output_size=info.file_size)
    except zstandard.ZstdError as error:
        raise InputError(f"{member} cannot be decompressed ({error})", file=name, fix=FIX) from None
    if len(data) != info.file_size:
        raise InputError(f"{member} is not the size the archive declares", file=name, fix=FIX)
    return data


def sample_file(member: str) -> re.Match | None:
    """The match of an archive member named samples/<id>_epoch_<n>.json (groups: id, epoch), else None."""
    return _SAMPLE_FILE.match(member)


def _model(log: dict) -> str:
    spec = log.get("eval")
    return str(spec.get("model", "")) if isinstance(spec, dict) else ""


def _missing(name: str, place: int, sample: dict, field: str) -> InputError:
    which = f"sample {sample['id']!r} (epoch {sample.get('epoch', 1)})" if "id" in sample else f"sample {place + 1}"
    return InputError(f"{which} has no '{field}'", file=name, fix=FIX)


def _id(name: str, place: int, sample: dict) -> str:
    if sample.get("id") is None:
        raise _missing(name, place, sample, "id")
    return str(sample["id"])


def _prompt(name: str, place: int, sample: dict) -> str:
    if sample.get("input") is None:
        raise _missing(name, place, sample, "input")
    value = _resolve(sample, sample["input"])
    if isinstance(value, str):
        return value
    messages = [m for m in value if isinstance(m, dict)]
    if len(messages) == 1:
        return _content(sample, messages[0].get("content"))
    return "\n\n".join(f"{m.get('role', 'user')}: {_content(sample, m.get('content'))}" for m in messages)


def _output(name: str, place: int, sample: dict) -> str:
    output = sample.get("output")
    choices = output.get("choices") if isinstance(output, dict) else None
    if not choices or not isinstance(choices[0], dict) or "message" not in choices[0]:
        if isinstance(output, dict) and isinstance(output.get("completion"), str):
            return _resolve(sample, output["completion"])
        raise _missing(name, place, sample, "output.choices[0].message")
    return _content(sample, choices[0]["message"].get("content"))


def _content(sample: dict, content: object) -> str:
    """A message's content: a string, or the text of its text parts (reasoning and images left out)."""
    content = _resolve(sample, content)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            _resolve(sample, p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _resolve(sample: dict, value: object) -> object:
    """Put back a string Inspect moved to the sample's attachments (attachment://<hash>), recursively in lists."""
    if isinstance(value, str) and value.startswith("attachment://"):
        return (sample.get("attachments") or {}).get(value.removeprefix("attachment://"), value)
    if isinstance(value, list):
        return [_resolve(sample, v) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(sample, v) for k, v in value.items()}
    return value


def _text(value: object) -> str:
    if isinstance(value, list):
        return " | ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _score(value: object) -> float:
    """A scorer's value as a number (NaN when it is not one: a dict of values, free text)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value in LETTER_GRADES:
            return LETTER_GRADES[value]
        try:
            return float(value)
        except ValueError:
            return np.nan
    return np.nan
