"""Check that a command's output file can be written before the command's long work starts."""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import InputError


def check_writable(out: str | Path, what: str) -> None:
    """InputError unless `out` could be written once its missing folders are made; writes nothing.

    `what` names the output in the message ("the samples", "the items table").
    """
    path = Path(out).absolute()
    folder = next(parent for parent in path.parents if parent.exists())
    if path.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"{folder} is a file, not a folder"
    elif not os.access(path if path.exists() else folder, os.W_OK):
        problem = "permission denied"
    else:
        return
    raise InputError(f"cannot write {what} ({problem})", file=str(out), fix="give an output file in a writable folder")
