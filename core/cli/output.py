"""How commands write: output files (``-`` is standard output), JSON reports, messages and progress bars.

The conventions every command follows:
- an output file is written whole or not at all: to a temporary file beside it, renamed into place once
  complete, so a run that fails leaves no empty or half-written file;
- ``-`` as a file (``--out -``, ``--json -``) is standard output; the command's messages then go to
  standard error, so the data on standard output stays clean for a pipe;
- ``--quiet`` silences the messages (errors and warnings are still printed, on standard error);
- a progress bar is drawn only when standard error is a terminal, never into a log file or CI output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from core.errors import InputError

STDOUT = "-"


def check_writable(out: str | Path, what: str) -> None:
    """InputError unless `out` could be written once its missing folders are made; writes nothing.

    `what` names the output in the message ("the samples", "the items table"). ``-`` (standard output) is
    always writable.
    """
    if str(out) == STDOUT:
        return
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


def add_output_options(parser: argparse.ArgumentParser, *, json_report: bool = True) -> None:
    """``--quiet`` and (for a command that reports) ``--json FILE``, ``-`` for standard output."""
    parser.add_argument("-q", "--quiet", action="store_true", help="print no messages and no progress bar")
    if json_report:
        parser.add_argument(
            "--json", metavar="FILE", help="write what the command reports as JSON to FILE ('-': stdout)"
        )


def uses_stdout(args: argparse.Namespace) -> bool:
    """Whether the command writes data to standard output (``--out -`` or ``--json -``)."""
    return STDOUT in (getattr(args, "out", None), getattr(args, "json", None))


def say(args: argparse.Namespace, text: str) -> None:
    """Print a message for the user, unless ``--quiet``; on standard error when standard output carries data."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr if uses_stdout(args) else sys.stdout, flush=True)


def warn(text: str) -> None:
    """A warning on standard error, ``--quiet`` or not: the run goes on, but its result may not be what the
    user meant."""
    print(f"warning: {text}", file=sys.stderr, flush=True)


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to draw a progress bar: standard error is a terminal and the user did not ask for quiet."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def progress_bar(args: argparse.Namespace, **options: Any):
    """A tqdm bar on standard error, drawn only when ``show_progress``; updating a hidden bar costs nothing."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=not show_progress(args), **options)


def write_with(out: str | Path, writer: Callable[[Path], object], what: str) -> None:
    """``writer(path)`` on a temporary file beside ``out``, renamed to ``out`` once it returns: ``out`` is
    written whole or not at all (a writer that fails leaves nothing behind). ``what`` names it in errors."""
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.part")  # the user's umask, as `out` would get
        try:
            writer(Path(temporary))
            os.replace(temporary, path)
        finally:
            Path(temporary).unlink(missing_ok=True)
    except OSError as error:
        raise InputError(
            f"cannot write {what} ({error.strerror})", file=str(out), fix="check the folder is writable"
        ) from None


def write_bytes(out: str | Path, data: bytes, what: str) -> None:
    """Write ``data`` to ``out`` whole (write_with), or to standard output for ``-``."""
    if str(out) == STDOUT:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    write_with(out, lambda path: path.write_bytes(data), what)


def json_text(data: Any) -> str:
    """``data`` as indented JSON: a number not known (NaN) or infinite is null, as the HTTP API writes it (Python's
    json wrote a bare NaN, which is not JSON: JSON.parse refused the simulator's report), numpy numbers as
    numbers; json itself where orjson refuses (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"
    except TypeError:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_json(args: argparse.Namespace, data: Any) -> None:
    """The command's report as JSON to ``--json`` (``-``: standard output); nothing without ``--json``."""
    if args.json:
        write_bytes(args.json, json_text(data).encode(), "the JSON report")
        if args.json != STDOUT:
            say(args, f"wrote {args.json}")
