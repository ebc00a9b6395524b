"""`activegrade import`: grades given elsewhere, recorded as the project's grades under their graders' names.

    activegrade export "My project" --format label-studio --out tasks.json              # tasks to grade there
    activegrade export "My project" --format label-studio-config --out config.xml       # their labeling config
    activegrade import "My project" --label-studio project-1-at-2026-12-03.json         # its JSON export, back

Each grade goes through the grade pages' own service; the import is recorded in the audit trail, by `cli`
(core.exports.label_studio).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.output import add_output_options, say, write_json
from core.cli.projects import add_project_arguments, project_from_args
from core.exports.label_studio import import_annotations
from core.services import auth


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_arguments(parser)
    parser.add_argument(
        "--label-studio",
        metavar="FILE",
        required=True,
        help="a Label Studio project's JSON export (annotations of the tasks `export --format label-studio` wrote)",
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    store, project = project_from_args(args)
    path = Path(args.label_studio)
    outcome = import_annotations(store, auth.OPERATOR, project.id, args.label_studio, path.read_bytes())  # as given
    say(args, outcome.message)
    write_json(
        args,
        {"project": {"id": project.id, "name": project.name}, "status": outcome.status, "message": outcome.message},
    )
    return 0
