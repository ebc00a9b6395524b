"""Command-line entry point: `activegrade prepare|simulate|sample|projects|export|report|status|import|users|tokens|worker ...`
(also `python -m core ...`).

Each sub-command lives in core/cli/<name>.py and exposes
`add_arguments(parser)` and `run(args) -> int`. Bad input raises
core.errors.InputError, which is printed as one line, exit status 2.
How commands write files, JSON, messages and progress: core/cli/output.py.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import logging
import os
import sys
from pathlib import Path

from core import logs
from core.cli.output import STDOUT, show_progress
from core.errors import InputError, one_line
from core.version import version

COMMANDS = {
    "prepare": "Cluster surrogate answers, score semantic entropy and agreement, stratify.",
    "simulate": "Replay grading on a labelled pool and compare sampling methods.",
    "sample": "Sample surrogate answers from a local causal language model or an OpenAI-compatible server.",
    "projects": "Create a project from a pool file (its settings and rubric from files).",
    "export": "Write a project's grades (CSV, JSONL, Parquet) or the grades put back into an evaluation log.",
    "report": "Write a project's report (JSON, Markdown, HTML).",
    "status": "List the projects in the database and their state.",
    "import": "Record grades given in Label Studio as the project's grades, graders kept.",
    "users": "Create accounts, change roles, assign accounts to projects.",
    "tokens": "Create, list and revoke personal API tokens for the HTTP API.",
    "worker": "Claim jobs (preparation, simulations) from the database and run them.",
}


MODULES = {"import": "import_grades"}
"""Commands whose module is not named as they are (`import` is a Python keyword)."""


def build_parser(prog: str = "activegrade", argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; ``prog`` is how the user called it (the console script, or `python -m core`). Of the
    commands, only the one ``argv`` names (its first word not an option; every one where ``argv`` is None) is
    imported and given its arguments: a command's module imports what it runs (pandas, scipy, the database),
    and `activegrade --help` or `activegrade status` took 2.5 s importing every command's."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    named = None if argv is None else next((word for word in argv if not word.startswith("-")), "")
    for name, help_text in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if named in (None, name):
            module = importlib.import_module(f"core.cli.{MODULES.get(name, name)}")
            module.add_arguments(command)
            command.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None, prog: str = "activegrade") -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(prog, argv).parse_args(argv)
    try:
        _one_stream(args)
        _quiet_libraries(args)
        logs.configure()  # the worker (`worker`) and every other command log as the operator set
        status = int(args.run(args) or 0)
        sys.stdout.flush()  # a reader gone (`| head`) shows here, not in the interpreter's flush at exit
        return status
    except BrokenPipeError:
        return _reader_gone()
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(f"error: {error.filename}: no such file. Fix: check the path.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if not _database_failure(error):
            raise
        return _database_failed(args, error)


def _database_failure(error: BaseException) -> bool:
    """Whether ``error`` is the database's (SQLAlchemy's: an unreachable server, a database not there), read
    without importing SQLAlchemy, which `activegrade --help` does not load (a quarter of a second)."""
    exc = sys.modules.get("sqlalchemy.exc")
    return exc is not None and isinstance(error, exc.SQLAlchemyError)


def _database_failed(args: argparse.Namespace, error: BaseException) -> int:
    """A database that cannot be opened or did not answer, said in one line with the fix (it was a 118-line
    traceback: an operator's review) and logged at ERROR, as docs/configuration.md promises; exit status 2."""
    from core.store.engine import database_url, describe_failure, redact_url

    url = database_url(getattr(args, "db_url", None))
    reason = one_line(describe_failure(url, error).split("(Background on this error")[0])
    logging.getLogger(__name__).error("the database at %s failed: %s", redact_url(url), reason)
    print(
        f"error: the database at {redact_url(url)} cannot be opened or did not answer: {reason}. Fix: check "
        "--db-url (or $ACTIVEGRADE_DB_URL) and that its server is running",
        file=sys.stderr,
    )
    return 2


def _quiet_libraries(args: argparse.Namespace) -> None:
    """Where the command draws no progress bar (``--quiet``, or standard error no terminal), the libraries it
    runs draw none either: transformers' GGUF de-quantizing and weight loading, the hub's downloads (`sample -q`
    wrote them into logs, a new user's review). tqdm reads TQDM_DISABLE as its default; the hub its own."""
    if not show_progress(args):
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


INPUT_OPTIONS = ("pool", "samples", "settings", "criteria", "label_studio")
"""The options that name files a command reads (`_one_stream`)."""


def _one_stream(args: argparse.Namespace) -> None:
    """InputError where two outputs name one place: both standard output (``--out -`` and ``--json -``: a pipe
    would get the file and the JSON report run together, which no reader can split), both one file (the report
    written over the export just made), or an output a file the command reads (the pool or the samples, which
    may have cost hours of sampling, replaced by the items table or the report: a new user's review)."""
    if getattr(args, "out", None) == STDOUT and getattr(args, "json", None) == STDOUT:
        raise InputError("--out - and --json - both write to standard output", fix="send one of them to a file")
    outputs = {f"--{o}": getattr(args, o) for o in ("out", "json") if getattr(args, o, None) not in (None, STDOUT)}
    inputs = {f"--{o.replace('_', '-')}": getattr(args, o) for o in INPUT_OPTIONS if getattr(args, o, None)}
    named = list(outputs.items())
    for k, (option, path) in enumerate(named):
        for other, read in [*named[k + 1 :], *inputs.items()]:
            if _same_file(path, read):
                lost = "the other output" if other in outputs else "what the command reads"
                raise InputError(
                    f"{option} {path} is the file of {other}: writing it would replace {lost}",
                    fix=f"give {option} another file",
                )


def _same_file(one: str, other: str) -> bool:
    """Whether two paths name one file: a link to it, or a path through a folder not made yet and back (``..``:
    the output's missing folders are made before it is written, so nope/../pool.jsonl replaced the pool)."""
    first, second = Path(one), Path(other)
    if first.exists() and second.exists():
        return os.path.samefile(first, second)
    return first.resolve() == second.resolve()


def _reader_gone() -> int:
    """The reader of standard output closed it early (`activegrade status | head -2`): no traceback, as for
    any command; standard output points at devnull so the interpreter's last flush finds nowhere to fail.
    Status 1, Python's own for a broken pipe (the recipe of the signal module's documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1
