"""An uploaded archive of a folder (.zip, .tar.gz or .tgz), read in memory: a browser uploads files, not folders,
so a folder such as a Hugging Face `save_to_disk` one (core.inputs.readers.hf_dataset) comes zipped.

Nothing is written to disk. `archive_files` lists the archive's regular files by their path inside it and
reads each only when asked, after refusing, with an InputError that names the member and what to do:
- a member whose path leaves the folder (an absolute path, a drive letter, a `..` part; backslashes read as
  slashes) or names one file twice;
- a link or a device (a folder holds none);
- more than MAX_MEMBERS members, or more than core.inputs.tables.MAX_FILE_BYTES of content, by the sizes the
  archive declares (a zip member is never read past its declared size; a .tar.gz is unpacked up to that
  limit only, whatever it would inflate to);
- an encrypted, damaged or unsupported archive.
"""

from __future__ import annotations

import gzip
import io
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import PurePosixPath

from core.errors import InputError
from core.inputs import tables

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
MAX_MEMBERS = 10_000
"""Most members an archive may hold (a save_to_disk folder holds a few; one per 500 MB of data)."""

ArchiveFiles = dict[str, Callable[[], bytes]]
"""A regular file's path inside the archive (slashes, no leading ./) -> a call that reads its content."""

_DRIVE = re.compile(r"^[A-Za-z]:")
_BROKEN = (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError)
"""What reading a damaged, encrypted or unsupported archive raises (zipfile: RuntimeError when encrypted)."""


def is_archive(name: str) -> bool:
    """Whether a file's name says it is an archive this module reads."""
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def archive_files(name: str, data: bytes) -> ArchiveFiles:
    """The archive's regular files (see the module docstring); InputError naming ``name`` when it is refused."""
    try:
        listed = _zip_files(name, data) if name.lower().endswith(".zip") else _tar_files(name, data)
    except _BROKEN as error:
        raise _broken(name, error) from None
    if len(listed) > MAX_MEMBERS:
        raise InputError(
            f"holds {len(listed):,} members, over the limit of {MAX_MEMBERS:,}",
            file=name,
            fix="archive the dataset's folder alone",
        )
    tables._check_size(name, sum(size for _, size, _ in listed), "unpacks to")
    files: ArchiveFiles = {}
    for member, _, read in listed:
        path = member_path(name, member)
        if not path:
            continue
        if path in files:
            raise InputError(f"holds {path} twice", file=name, fix="archive the folder again, each file once")
        files[path] = _reading(name, read)
    return files


def member_path(name: str, member: str) -> str:
    """A member's path inside the archive's folder ('' for the folder itself); InputError when it leaves it."""
    text = member.replace("\\", "/")
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if text.startswith("/") or _DRIVE.match(text) or ".." in parts:
        raise InputError(
            f"holds the member {member!r}, whose path leads outside the archived folder",
            file=name,
            fix="archive the folder itself, with paths relative to it (e.g. `zip -r data.zip my_dataset`)",
        )
    return str(PurePosixPath(*parts)) if parts else ""


def _zip_files(name: str, data: bytes) -> list[tuple[str, int, Callable[[], bytes]]]:
    """(member, declared size, reader) of a zip's files; folders left out, links and devices refused."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    found = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no type recorded (Windows, Python's writestr)
        if kind not in (0, stat.S_IFREG):
            raise _not_a_file(name, info.filename)
        found.append((info.filename, info.file_size, lambda info=info: archive.read(info)))
    return found


def _tar_files(name: str, data: bytes) -> list[tuple[str, int, Callable[[], bytes]]]:
    """(member, size, reader) of a gzipped tar's files, unpacked in memory up to MAX_FILE_BYTES; folders left
    out, links and devices refused."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        raw = stream.read(tables.MAX_FILE_BYTES + 1)
    tables._check_size(name, len(raw), "unpacks to at least")
    archive = tarfile.open(fileobj=io.BytesIO(raw), mode="r:")
    found = []
    for member in archive.getmembers():
        if member.isdir():
            continue
        if not member.isfile():
            raise _not_a_file(name, member.name)
        found.append((member.name, member.size, lambda member=member: archive.extractfile(member).read()))
    return found


def _reading(name: str, read: Callable[[], bytes]) -> Callable[[], bytes]:
    """``read``, its archive's errors (a bad checksum, a truncated member) as InputErrors naming ``name``."""

    def content() -> bytes:
        try:
            return read()
        except _BROKEN as error:
            raise _broken(name, error) from None

    return content


def _not_a_file(name: str, member: str) -> InputError:
    return InputError(
        f"holds {member!r}, a link or device rather than a file",
        file=name,
        fix="archive the folder's files themselves (zip without --symlinks)",
    )


def _broken(name: str, error: Exception) -> InputError:
    return InputError(
        f"is not a readable archive ({type(error).__name__}: {error})"[:300],
        file=name,
        fix="archive the folder again as a plain .zip (or .tar.gz), without a password",
    )
