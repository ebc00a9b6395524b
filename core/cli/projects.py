"""The options of the commands that read a project from the database (`export`, `report`, `status`), and
finding the project a user names by id or by name."""

from __future__ import annotations

import argparse

from core.errors import InputError
from core.store import ProjectInfo, Store


def add_database_argument(parser: argparse.ArgumentParser) -> None:
    """``--db-url`` (also ``--db``, as `users` and `worker` spell it)."""
    parser.add_argument(
        "--db-url",
        "--db",
        dest="db_url",
        metavar="URL",
        help="database URL (default: $ACTIVEGRADE_DB_URL or ./.activegrade/activegrade.db)",
    )


def add_project_arguments(parser: argparse.ArgumentParser) -> None:
    """The database and the project (its id or its name)."""
    parser.add_argument("project", help="the project's id or its name (as `activegrade status` lists them)")
    add_database_argument(parser)


def find_project(store: Store, name_or_id: str) -> ProjectInfo:
    """The project with this name, else with this id; InputError naming the projects there are."""
    project = store.project_by_name(name_or_id)
    if project is None and name_or_id.strip().isdigit():
        try:
            project = store.project(int(name_or_id))
        except KeyError:
            project = None
    if project is None:
        names = ", ".join(f"{p.id} ({p.name})" for p in store.projects()[:10]) or "none"
        raise InputError(
            f"no project {name_or_id!r} in the database (projects: {names})",
            fix="give a project's id or name as `activegrade status` lists them, or check --db-url",
        )
    return project


def project_from_args(args: argparse.Namespace) -> tuple[Store, ProjectInfo]:
    """The store at ``--db-url`` and the project the command names."""
    store = Store.open(args.db_url)
    return store, find_project(store, args.project)
