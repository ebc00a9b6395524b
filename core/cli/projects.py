"""`python -m core projects create`: a project from a pool file, as the Projects page creates one; and the
options of the commands that read a project from the database (`export`, `report`, `status`), and finding
the project a user names by id or by name.

python -m core projects create "My project" --pool pool.jsonl --samples samples.jsonl
python -m core projects create "Rubric" --pool pool.jsonl --criteria rubric.json --primary-criterion helpful \
    --allocate-for all --settings settings.json --json -
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.cli.output import add_output_options, say, write_json
from core.errors import InputError
from core.rubric import ALLOCATE_FOR, PRIMARY
from core.rubric_table import rubric_from_file
from core.services import auth, project_actions
from core.services.outcome import Refused
from core.settings import DEFAULTS
from core.store import ProjectInfo, Store
from core.store.engine import database_url, parse_url, sqlite_file

RUBRIC_OPTIONS = ("primary_criterion", "allocate_for")
"""The options that only go with ``--criteria``."""


def add_database_argument(parser: argparse.ArgumentParser, *, again: bool = False) -> None:
    """``--db-url`` (also ``--db``, as `users` and `worker` spell it). ``again``: the same option on an action's
    own parser, for a command that takes it before its action too (`users --db-url URL assign ...`): given after
    the action it is read there (`users assign bob 2 --db-url URL` was "unrecognized arguments"), and left out
    there it keeps the value given before."""
    parser.add_argument(
        "--db-url",
        "--db",
        dest="db_url",
        metavar="URL",
        help="database URL (default: $ACTIVEGRADE_DB_URL or ./.activegrade/activegrade.db)",
        **({"default": argparse.SUPPRESS} if again else {}),
    )


def add_project_arguments(parser: argparse.ArgumentParser) -> None:
    """The database and the project (its id or its name)."""
    parser.add_argument("project", help="the project's id or its name (as `activegrade status` lists them)")
    add_database_argument(parser)


def find_project(store: Store, name_or_id: str) -> ProjectInfo:
    """The project with this id (a number), else with this name; InputError naming the projects there are, and
    for a number that is one project's id and another's name (made before such names were refused)."""
    project = store.project_by_name(name_or_id)
    if name_or_id.strip().isdecimal():  # int() reads these ('²' is a digit, no number: it raised)
        try:
            by_id = store.project(int(name_or_id))
        except KeyError:
            by_id = None
        if by_id is not None and project is not None and by_id.id != project.id:
            raise InputError(
                f"{name_or_id!r} is project {by_id.id}'s id ({by_id.name}) and project {project.id}'s name",
                fix=f"name project {by_id.id} by its name, {by_id.name!r}; project {project.id} has no other name",
            )
        project = by_id or project
    if project is None:
        names = ", ".join(f"{p.id} ({p.name})" for p in store.projects()[:10]) or "none"
        raise InputError(
            f"no project {name_or_id!r} in the database (projects: {names})",
            fix="give a project's id or name as `activegrade status` lists them, or check --db-url",
        )
    return project


def existing_store(url: str | None) -> Store:
    """The store at ``url`` (default: database_url's) for a command that needs one already made: InputError
    where it names a SQLite file that is not there (a mistyped --db-url made a new, empty database, and the
    command then said there was no project)."""
    file = sqlite_file(parse_url(database_url(url)))
    if file is not None and not file.exists():
        raise InputError(
            f"no database at {file}",
            fix="check --db-url (or $ACTIVEGRADE_DB_URL): it names the database `activegrade projects create` made",
        )
    return Store.open(url)


def project_from_args(args: argparse.Namespace) -> tuple[Store, ProjectInfo]:
    """The store at ``--db-url`` and the project the command names."""
    store = existing_store(args.db_url)
    return store, find_project(store, args.project)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `projects` command: an action (``create``), then its arguments and the database."""
    sub = parser.add_subparsers(dest="projects_action", required=True)
    create = sub.add_parser(
        "create", help="a project from a pool file, its preparation queued for a worker (`activegrade worker`)"
    )
    create.add_argument("name", help="the project's name (one line)")
    create.add_argument("--pool", required=True, help="the pool file, as the Projects page takes it")
    create.add_argument("--samples", help="the surrogate samples file (optional, as on the Projects page)")
    create.add_argument(
        "--settings",
        metavar="FILE.json",
        help="a JSON object of the project's settings (docs/configuration.md), e.g. "
        '{"backend": "embedding", "n_strata": 8, "guidelines": "..."}; unset ones take their defaults',
    )
    create.add_argument(
        "--columns",
        metavar="TARGET=SOURCE,...",
        help="columns to pick after reading, as prepare's --columns (e.g. id=qid,prompt=question): the setting "
        "columns, over --settings' (it was only in a settings file, which the missing column's error did not name)",
    )
    create.add_argument(
        "--criteria",
        metavar="FILE",
        help="a rubric: a .json list of criteria as the settings store them "
        '([{"name": "correct", "scale": {"kind": "binary"}, "guidelines": "...", "required": true}, ...]) '
        "or a .csv table with the columns name, scale, labels, guidelines, required (docs/cli.md)",
    )
    create.add_argument(
        "--primary-criterion",
        metavar="NAME",
        help="with --criteria: the criterion the design, the stopping rule and the forecast read (default: the first)",
    )
    create.add_argument(
        "--allocate-for",
        choices=ALLOCATE_FOR,
        help=f"with --criteria: allocate for the primary criterion or all criteria together (default: {PRIMARY})",
    )
    add_database_argument(create)
    add_output_options(create)
    demo = sub.add_parser(
        "demo",
        help="the demo project (data/demo/, or $ACTIVEGRADE_DEMO_DIR) created and prepared now, so that the app "
        "opens on it ready (`make demo` runs this before it starts the app)",
    )
    add_database_argument(demo)
    add_output_options(demo)


def run(args: argparse.Namespace) -> int:
    """`projects create ...` or `projects demo` as the operator (``cli`` in the audit trail); a refusal is bad
    input (exit 2)."""
    if args.projects_action == "demo":
        return _demo(args)
    settings = settings_from_args(args)
    pool = _upload(args.pool)
    samples = _upload(args.samples) if args.samples else None
    store = Store.open(args.db_url)
    try:
        project_id = project_actions.create(store, auth.OPERATOR, args.name, pool, samples, settings)
    except Refused as exc:
        raise InputError(str(exc)) from None
    project = store.project(project_id)
    say(args, f"created project {project.id} ({project.name}), {project.status}; `activegrade worker` prepares it")
    write_json(args, {"id": project.id, "name": project.name, "status": project.status})
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The demo project, created if it is not there and prepared in this process unless it is ready."""
    store = Store.open(args.db_url)
    try:
        project_id = project_actions.open_demo(store, auth.OPERATOR, start=False)
    except Refused as exc:
        raise InputError(str(exc)) from None
    project_actions.prepare(store, auth.OPERATOR, project_id, wait=True)
    project = store.project(project_id)
    say(args, f"demo project {project.id} ({project.name}): {project.status}")
    write_json(args, {"id": project.id, "name": project.name, "status": project.status})
    return 0 if project.status == "ready" else 1


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``--settings`` gives, with the rubric of ``--criteria``, ``--primary-criterion`` and
    ``--allocate-for`` over them; InputError naming the file, the criterion's row and the fix."""
    settings = _settings_file(args.settings) if args.settings else {}
    if args.columns is not None:
        settings = _checked(settings | {"columns": args.columns}, "--columns")
    given = [f"--{o.replace('_', '-')}" for o in RUBRIC_OPTIONS if getattr(args, o) is not None]
    if not args.criteria:
        if given:
            raise InputError(f"{' and '.join(given)} without --criteria", fix="give the rubric with --criteria FILE")
        return settings
    text = _read_text(args.criteria)
    rubric = rubric_from_file(args.criteria, text, args.primary_criterion or "", args.allocate_for or PRIMARY)
    return settings | rubric


def _settings_file(path: str) -> dict[str, Any]:
    """A JSON object of settings, each checked (core.settings) with the file named in the error."""
    try:
        settings = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg}, line {exc.lineno})", file=path, fix="give a JSON object") from None
    if not isinstance(settings, dict):
        raise InputError("the file does not hold a JSON object", file=path, fix='give {"setting": value, ...}')
    return _checked(settings, path)


def _checked(settings: dict[str, Any], source: str) -> dict[str, Any]:
    """``settings``, each checked (core.settings), the file or option they came from named in the error."""
    try:
        DEFAULTS.with_changes(settings)
    except InputError as exc:
        raise InputError(exc.problem, file=source, row=exc.row, column=exc.column, fix=exc.fix) from None
    return settings


def _read_text(path: str) -> str:
    """The file's text; a byte-order mark, which Excel's "CSV UTF-8" and Notepad write, dropped (a rubric's
    first column read as '\ufeffname', a settings file as not JSON: a new user's review)."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("the file is not UTF-8 text", file=path, fix="save it as UTF-8") from None


def _upload(path: str) -> tuple[str, bytes]:
    """A file as the Projects page receives an upload: its name and its bytes."""
    file = Path(path)
    return file.name, file.read_bytes()
