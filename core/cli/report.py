"""`activegrade report`: a project's report (the Export page's), as JSON, Markdown or one-page HTML.

    activegrade report "My project" --format md --out report.md
    activegrade report 3 --format json --out - | jq .estimate

The report's bytes depend only on the data (its time is the last grade's), as on the Export page.
"""

from __future__ import annotations

import argparse

from core.cli.output import STDOUT, add_output_options, check_writable, say, write_bytes
from core.cli.projects import add_project_arguments, project_from_args
from core.exports.project_export import REPORT_EXPORTED, REPORT_FORMATS, ProjectFiles, file_name, report_bytes
from core.services import audit, auth


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_arguments(parser)
    parser.add_argument("--format", choices=list(REPORT_FORMATS), default="md", help="json, md or html (default: md)")
    parser.add_argument("--out", help="file to write ('-': standard output; default: the Export page's file name)")
    add_output_options(parser, json_report=False)  # --format json --out - is the report as JSON


def run(args: argparse.Namespace) -> int:
    store, project = project_from_args(args)
    out = args.out or file_name(project, "report", args.format)
    check_writable(out, "the report")
    data = ProjectFiles.of(store, project).require_report()
    write_bytes(out, report_bytes(data, args.format), "the report")
    audit.exported(store, auth.OPERATOR, REPORT_EXPORTED[args.format], project.id, auth.EXPORT)
    if out != STDOUT:
        say(args, f"wrote the report of project {project.name!r} to {out}")
    return 0
