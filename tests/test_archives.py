"""A Hugging Face `save_to_disk` folder uploaded as a .zip or .tar.gz (core.inputs.archives, read by
core.inputs.readers.hf_dataset): read as the folder itself; a member that leaves the folder, a link, too much
content, a damaged archive or one without a dataset refused with the archive, the member and the fix named."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from core.errors import InputError
from core.inputs import archives, tables
from core.inputs.readers import detect, load

COLUMNS = "id=idx,prompt=instruction,response=output"
ROWS = {
    "idx": ["a1", "a2", "a3"],
    "instruction": ["2 + 2?", "3 + 4?", "Capital of France?"],
    "output": ["4", "7", "Paris"],
}


def save_tiny_dataset(folder: Path) -> Path:
    """ROWS as Dataset.save_to_disk writes them into ``folder`` (dataset_info.json, state.json, one .arrow file)."""
    from datasets import Dataset

    Dataset.from_dict(ROWS).save_to_disk(str(folder))
    return folder


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return save_tiny_dataset(tmp_path_factory.mktemp("saved") / "arith")


def zipped(folder: Path, prefix: str = "arith/", extra: dict[str, bytes] | None = None) -> bytes:
    """The folder's files zipped under ``prefix`` (as `zip -r arith.zip arith` does), and ``extra`` members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, prefix + file.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def error_of(name: str, data: bytes) -> str:
    with pytest.raises(InputError) as error:
        load((name, data), columns=COLUMNS)
    return str(error.value)


def test_a_zipped_save_to_disk_folder_is_read_as_the_folder(saved):
    folder = load(str(saved), columns=COLUMNS).pool
    for data in (zipped(saved), zipped(saved, prefix=""), zipped(saved, extra={"__MACOSX/arith/._state.json": b"x"})):
        assert detect(("arith.zip", data)) == "hf"
        pool = load(("arith.zip", data), columns=COLUMNS).pool
        assert pool["id"].tolist() == ROWS["idx"] and pool["prompt"].tolist() == ROWS["instruction"]
        assert pool.equals(folder)


def test_a_tar_gz_of_the_folder_is_read_too(saved):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(saved, arcname="arith")
    for name in ("arith.tar.gz", "arith.tgz"):
        assert load((name, buffer.getvalue()), columns=COLUMNS).pool["id"].tolist() == ROWS["idx"]


@pytest.mark.parametrize("member", ["../evil.arrow", "arith/../../evil.arrow", "/etc/evil.arrow", "..\\evil", "C:/x"])
def test_a_member_leading_outside_the_folder_is_refused(saved, member, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = error_of("arith.zip", zipped(saved, extra={member: b"payload"}))
    assert message.startswith("arith.zip: holds the member") and repr(member) in message
    assert "leads outside the archived folder" in message and "Fix: archive the folder itself" in message
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "evil.arrow").exists()  # nothing written


def test_a_link_is_refused(saved):
    link = zipfile.ZipInfo("arith/data.arrow")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(link, "/etc/passwd")
    assert "holds 'arith/data.arrow', a link or device rather than a file" in error_of("arith.zip", buffer.getvalue())


def test_content_over_the_file_limit_is_refused_before_it_is_unpacked(saved, monkeypatch):
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 1_000)
    message = error_of("arith.zip", zipped(saved))
    assert message.startswith("arith.zip: the file unpacks to") and "over the limit of 1,000 bytes" in message
    bomb = io.BytesIO()
    with gzip.GzipFile(fileobj=bomb, mode="wb") as stream:
        stream.write(bytes(10_000_000))  # 10 MB of zeros in 10 kB
    assert "unpacks to at least 1,001 bytes of data, over the limit of 1,000 bytes" in error_of(
        "b.tgz", bomb.getvalue()
    )


def test_too_many_members_are_refused(saved, monkeypatch):
    monkeypatch.setattr(archives, "MAX_MEMBERS", 2)
    assert "members, over the limit of 2" in error_of("arith.zip", zipped(saved))


def test_an_archive_without_a_dataset_or_with_a_dataset_dict_says_what_to_zip(saved, tmp_path):
    message = error_of("pool.zip", zipped(tmp_path, extra={"pool.jsonl": b'{"id": "q1"}\n'}))
    assert (
        "pool.zip: holds no Hugging Face dataset" in message and "Fix: zip the folder Dataset.save_to_disk" in message
    )
    from datasets import DatasetDict, load_from_disk

    DatasetDict({"test": load_from_disk(str(saved))}).save_to_disk(str(tmp_path / "dict"))
    message = error_of("dict.zip", zipped(tmp_path / "dict", prefix="dict/"))
    assert "dict.zip, folder dict: is a DatasetDict with the splits test" in message
    assert "zip one split's folder alone, e.g. test" in message


def test_a_damaged_archive_or_a_missing_data_file_is_named(saved):
    data = zipped(saved)
    assert "arith.zip: is not a readable archive (BadZipFile" in error_of("arith.zip", data[: len(data) // 2])
    arrow = next(saved.glob("*.arrow")).name
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(saved / "state.json", "arith/state.json")
    message = error_of("arith.zip", buffer.getvalue())
    assert (
        f"arith.zip, folder arith: state.json lists the data file {arrow!r}, which the folder does not hold" in message
    )


def test_a_zipped_samples_dataset_is_read_as_the_samples(saved, tmp_path):
    from datasets import Dataset

    samples = tmp_path / "samples"
    Dataset.from_dict({"id": ["a1", "a1", "a3"], "sample": ["4", "four", "Paris"]}).save_to_disk(str(samples))
    pool = ("pool.jsonl", b"".join(f'{{"id": "{i}", "prompt": "q", "response": "r"}}\n'.encode() for i in ROWS["idx"]))
    inputs = load(pool, ("samples.zip", zipped(samples, prefix="samples/")))
    assert inputs.samples["sample"].tolist() == ["4", "four", "Paris"]
