"""scripts/outside_check.py, the API's outside check (docs/api.md, *An outside check*), against the served app
(test_api_served's ``served``: serve.py on 127.0.0.1 with sign-in): with only HTTP and a fresh token it creates a
project from tests/data/app's files, grades 30 items and recomputes the API's estimate from the grades CSV."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import activegrade
from core.services import auth, tokens
from core.testing.appserver import ROOT
from tests.app import test_api_served
from tests.app.test_api_served import DATA

SCRIPT = ROOT / "scripts" / "outside_check.py"

served = test_api_served.served
"""The served app and its store (the admin ``root`` among its accounts): reused, not started a second way."""


def test_the_outside_check_imports_only_the_standard_library_requests_and_pandas():
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0}
    outside = {name.split(".")[0] for name in imported} - set(sys.stdlib_module_names)
    assert outside == {"requests", "pandas"}


def test_the_outside_check_grades_30_items_and_recomputes_the_estimate(served, tmp_path):
    server, store, _, _, _ = served
    token = tokens.create(store, auth.OPERATOR, "root", "outside check")[1]
    command = [sys.executable, str(SCRIPT), "--url", server.url, "--grades", "30"]
    command += ["--pool", str(DATA / "pool.jsonl"), "--samples", str(DATA / "samples.jsonl")]
    env = os.environ | {"ACTIVEGRADE_TOKEN": token}  # the token from the environment, not the command line
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    project_id = int(re.search(r"^created project (\d+)", run.stdout, re.M).group(1))
    printed = float(re.search(r"^estimate \(API reading\): (\S+)", run.stdout, re.M).group(1))
    reading = activegrade.Client(server.url, token).project(project_id).reading()
    assert reading.graded == 30 and printed == reading.estimate
    assert run.stdout.count("(the pool's label)") == 30  # tests/data/app's pool labels every item
    grades = store.grades(project_id)
    assert len(grades) == 30 and set(grades["grader"]) == {"root"}
    assert run.stdout.rstrip().splitlines()[-1].startswith("OK: the estimate recomputed from the grades CSV")
