"""`activegrade export`: a project's grades, or the grades written into the tools evaluations come from, as a file.

    activegrade export "My project" --format csv --out grades.csv          # the Export page's grades CSV
    activegrade export 3 --format parquet --texts --out grades.parquet     # with each item's prompt and response
    activegrade export 3 --format jsonl --out - | jq .grade                # to standard output
    activegrade export 3 --format inspect --out graded.eval                # the Inspect log with the human score
    activegrade export 3 --format lm-eval --model my-model --out results.json   # lm-eval's results JSON

The database is --db-url (default $ACTIVEGRADE_DB_URL); the export is recorded in the audit trail, by `cli`.
"""

from __future__ import annotations

import argparse
import hashlib

from core.cli.output import STDOUT, add_output_options, check_writable, say, write_bytes, write_json
from core.cli.projects import add_project_arguments, project_from_args
from core.exports.formats import EXPORTS, export_name, exported_what
from core.exports.project_export import ProjectFiles
from core.services import audit, auth


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_arguments(parser)
    parser.add_argument(
        "--format",
        choices=list(EXPORTS),
        default="csv",
        help="what to write: "
        + "; ".join(f"{name}: {export.what}" for name, export in EXPORTS.items())
        + " (default: csv)",
    )
    parser.add_argument(
        "--texts", action="store_true", help="add each item's prompt and response to the grades (csv, jsonl, parquet)"
    )
    parser.add_argument("--task", help="lm-eval: the task's name (default: from the samples file's name)")
    parser.add_argument("--model", help="lm-eval: the model's name (lm-eval's samples file does not hold it)")
    parser.add_argument("--out", help="file to write ('-': standard output; default: the Export page's file name)")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    store, project = project_from_args(args)
    files = ProjectFiles.of(store, project, texts=args.texts, task=args.task, model=args.model)
    out = args.out or export_name(files, args.format)
    check_writable(out, "the export")
    export = EXPORTS[args.format]
    data = export.write(files)
    write_bytes(out, data, "the export")
    audit.exported(store, auth.OPERATOR, exported_what(args.format, args.texts), project.id, auth.EXPORT)
    if out != STDOUT:
        cards = files.table[["position", "grader"]].drop_duplicates().shape[0]
        counted = f"{len(files.table):,} grades" + (
            "" if project.settings.rubric is None else f": {cards:,} cards, a grade per criterion answered"
        )  # `activegrade status` counts a rubric's cards
        say(args, f"wrote {export.what} of project {project.name!r} ({counted}) to {out}")
    write_json(
        args,
        {
            "project": {"id": project.id, "name": project.name},
            "format": args.format,
            "file": out,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "grades": len(files.table),
        },
    )
    return 0
