"""An outside check of ActiveGrade's HTTP API (docs/api.md) with nothing but HTTP and a token.

    python scripts/outside_check.py --url http://127.0.0.1:8501 --token ag_... \\
        --pool tests/data/app/pool.jsonl --samples tests/data/app/samples.jsonl --grades 30

It creates a project from the pool and samples files (the stratified estimator, so that the estimate can be
recomputed from the grades alone), waits until it is ready, grades ``--grades`` items through ``next`` and
``grades`` (with the pool's ``label`` where the pool has one, else alternating through the scale; each grade
sent once the card's ``min_view_s`` has passed), reads the estimate, downloads the grades CSV and recomputes the
estimate from it with pandas. It exits 0 when the two agree within TOLERANCE, 1 with the reason otherwise.

It imports nothing from ActiveGrade: the standard library, ``requests`` and ``pandas`` only. The token
(``--token`` or ACTIVEGRADE_TOKEN) must be an admin's, who may create projects, grade and export.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import requests

PREFIX = "/api/v1"
TOLERANCE = 1e-9
"""The largest difference allowed between the API's estimate and the one recomputed from the grades CSV."""
POOL_READERS = {
    ".jsonl": lambda path: pd.read_json(path, lines=True),
    ".json": pd.read_json,
    ".csv": pd.read_csv,
    ".parquet": pd.read_parquet,
}
"""Pool file suffix -> the pandas reader of its ``id`` and ``label`` columns."""


class CheckFailed(Exception):
    """A step of the check did not do what the API promises; the message says which and why."""


class Api:
    """The API at ``url`` acting as ``token``'s account: one connection pool, a timeout on every call."""

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/") + PREFIX
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One call to ``path`` under /api/v1; CheckFailed with the server's own message for any non-2xx answer."""
        response = self.session.request(method, self.url + path, timeout=self.timeout, **kwargs)
        if response.status_code >= 300:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:500] or response.reason
            raise CheckFailed(f"{method} {PREFIX}{path} answered {response.status_code}: {message}")
        return response


def create_project(api: Api, name: str, pool: Path, samples: Path | None) -> int:
    """A new project of the stratified estimator from the files; its id."""
    files = {"pool": (pool.name, pool.read_bytes())}
    if samples is not None:
        files["samples"] = (samples.name, samples.read_bytes())
    settings = json.dumps({"name": name, "method": "stratified"})
    return int(api.call("POST", "/projects", files=files, data={"settings": settings}).json()["id"])


def wait_ready(api: Api, project_id: int, timeout: float) -> dict[str, Any]:
    """The project's state once ``status`` is ready; CheckFailed if its preparation failed or outlasts ``timeout``."""
    deadline = time.monotonic() + timeout
    while (state := api.call("GET", f"/projects/{project_id}").json())["status"] != "ready":
        if state["status"] == "failed":
            raise CheckFailed(f"the preparation of project {project_id} failed: {state.get('error')}")
        if time.monotonic() > deadline:
            raise CheckFailed(f"project {project_id} is still {state['status']} after {timeout:.0f} s")
        time.sleep(0.5)
    return state


def pool_labels(pool: Path) -> dict[str, Any]:
    """The pool's ``label`` by item id (ids as text, as the API names items); empty when the pool has no
    ``id`` and ``label`` columns or is of a format read here neither (POOL_READERS)."""
    reader = POOL_READERS.get(pool.suffix.lower())
    if reader is None:
        return {}
    table = reader(pool)
    if not {"id", "label"} <= set(table.columns):
        return {}
    return dict(zip(table["id"].astype(str), table["label"]))


def choose_label(card: dict[str, Any], known: dict[str, Any], count: int) -> tuple[str, str]:
    """The scale label for ``card`` and where it came from: the one whose label or value is the pool's label
    for the item, else the scale's labels in turn by ``count`` (the grades sent so far)."""
    scale = card["labels"]
    truth = known.get(card["item_id"])
    matches = [c["label"] for c in scale if truth is not None and truth in (c["label"], c["value"])]
    if matches:
        return matches[0], "the pool's label"
    return scale[count % len(scale)]["label"], "in turn"


def grade(api: Api, project_id: int, count: int, known: dict[str, Any]) -> None:
    """Grade ``count`` items through ``next`` and ``grades``, each once the card's ``min_view_s`` has passed,
    printing each grade. CheckFailed when the queue runs dry first or a grade is not saved on the item handed
    out."""
    for n in range(count):
        answer = api.call("GET", f"/projects/{project_id}/next").json()
        card = answer["item"]
        if card is None:
            raise CheckFailed(f"next handed out {n} items of {count}, then none: {answer['reason']}")
        label, source = choose_label(card, known, n)
        time.sleep(float(card.get("min_view_s") or 0.0))
        body = {"item_id": card["item_id"], "token": card["token"], "label": label}
        outcome = api.call("POST", f"/projects/{project_id}/grades", json=body).json()
        if outcome["status"] != "saved" or outcome["item_id"] != card["item_id"]:
            raise CheckFailed(f"the grade of {card['item_id']} was not saved on it: {outcome}")
        print(f"  grade {n + 1}: {card['item_id']} {label} ({source}), saved as grade {outcome['grade_id']}")


def recompute(grades_csv: bytes) -> float:
    """The stratified estimate from the grades CSV alone: each item's mean grade, averaged per stratum, the
    strata's means weighted by their ``weight`` (N_h / N); the report's RECOMPUTE_SCRIPT."""
    grades = pd.read_csv(io.BytesIO(grades_csv))
    items = grades.groupby(["stratum", "position"], as_index=False).agg(y=("grade", "mean"), W=("weight", "first"))
    strata = items.groupby("stratum").agg(mean=("y", "mean"), W=("W", "first"))
    return float((strata["mean"] * strata["W"]).sum())


def check(args: argparse.Namespace, token: str) -> None:
    """The whole check, printing each step; CheckFailed at the first that does not hold."""
    api = Api(args.url, token)
    project_id = create_project(api, args.name, args.pool, args.samples)
    print(
        f"created project {project_id} ({args.name!r}) from {args.pool.name}"
        + (f" and {args.samples.name}" if args.samples else "")
    )
    started = time.monotonic()
    state = wait_ready(api, project_id, args.timeout)
    print(f"project {project_id} is ready after {time.monotonic() - started:.1f} s: {state.get('items')} items")
    known = pool_labels(args.pool)
    print(f"grading {args.grades} items through next and grades, each after the card's min_view_s")
    grade(api, project_id, args.grades, known)
    reading = api.call("GET", f"/projects/{project_id}/reading").json()
    estimate = reading["estimate"]
    print(
        f"estimate (API reading): {estimate['value']!r} from {reading['counts']['graded']} graded items, method {estimate['method']}"
    )
    grades_csv = api.call("GET", f"/projects/{project_id}/export", params={"format": "csv"}).content
    recomputed = recompute(grades_csv)
    print(f"estimate (recomputed from the grades CSV with pandas): {recomputed!r}")
    if estimate["value"] is None or abs(recomputed - estimate["value"]) > TOLERANCE:
        raise CheckFailed(
            f"the estimate recomputed from the grades CSV, {recomputed!r}, is not the API's {estimate['value']!r} "
            f"(allowed difference {TOLERANCE:g})"
        )


def arguments(argv: list[str] | None) -> tuple[argparse.Namespace, str]:
    """The command line and the token (``--token``, else ACTIVEGRADE_TOKEN); exits 2 without a token."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the app's address, e.g. http://127.0.0.1:8501")
    parser.add_argument("--token", help="an admin's API token (default: the environment variable ACTIVEGRADE_TOKEN)")
    parser.add_argument("--pool", type=Path, required=True, help="the pool file (JSONL, JSON, CSV or Parquet)")
    parser.add_argument("--samples", type=Path, help="the surrogate's samples file (optional)")
    parser.add_argument("--grades", type=int, default=30, help="how many items to grade (default 30)")
    parser.add_argument(
        "--name", default=f"Outside check {time.strftime('%Y-%m-%d %H:%M:%S')}", help="the project's name"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the preparation (default 600)"
    )
    args = parser.parse_args(argv)
    token = args.token or os.environ.get("ACTIVEGRADE_TOKEN")
    if not token:
        parser.error("no token: pass --token or set ACTIVEGRADE_TOKEN")
    return args, token


def main(argv: list[str] | None = None) -> int:
    """Run the check: 0 when the recomputed estimate is the API's, 1 with the reason otherwise."""
    args, token = arguments(argv)
    try:
        check(args, token)
    except (CheckFailed, requests.RequestException) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"OK: the estimate recomputed from the grades CSV is the API's within {TOLERANCE:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
