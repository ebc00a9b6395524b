"""`activegrade status`: the projects in the database and their state (new, preparing, ready, failed).

activegrade status                    # one line per project
activegrade status "My project"       # one project
activegrade status --json -           # as JSON, for a script that waits until a project is ready
activegrade status --audit            # also seal the audit trail and check its hash chain (exit 1 if broken)
"""

from __future__ import annotations

import argparse
from typing import Any

from core.cli.output import add_output_options, say, write_json
from core.cli.projects import add_database_argument, existing_store, find_project
from core.services.preparation import project_state
from core.store import audit_chain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", help="one project's id or name (default: every project)")
    parser.add_argument(
        "--audit",
        action="store_true",
        help="seal the audit trail's events and check its hash chain; exit status 1 names the first broken link",
    )
    add_database_argument(parser)
    add_output_options(parser)


def line(state: dict[str, Any]) -> str:
    """One project's state as a line of text."""
    head = f"{state['id']}\t{state['name']}\t{state['status']}"
    if state["status"] == "ready":
        return f"{head}\t{state['graded_items']:,} of {state['items']:,} items graded ({state['grades']:,} grades)"
    if state["status"] == "failed":
        return f"{head}\t{state['error']}"
    progress = state["progress"]
    done = f"{progress['done']:,} of {progress['total']:,}" if progress["total"] else ""
    return "\t".join(part for part in (head, done, progress["message"]) if part)


def run(args: argparse.Namespace) -> int:
    store = existing_store(args.db_url)
    projects = [find_project(store, args.project)] if args.project else store.projects()
    states = [project_state(store, project) for project in projects]
    say(args, "\n".join(line(state) for state in states) if states else "no project in the database")
    if not args.audit:
        write_json(args, {"projects": states})
        return 0
    sealed = audit_chain.seal(store)
    broken = audit_chain.verify(store)
    say(
        args,
        f"audit trail: {sealed:,} events sealed now; "
        + (
            "the hash chain holds"
            if broken is None
            else f"the hash chain breaks at event {broken}: it or one before it was changed"
        ),
    )
    write_json(args, {"projects": states, "audit": {"sealed": sealed, "broken_at": broken}})
    return 0 if broken is None else 1
