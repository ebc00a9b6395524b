"""In-app preparation against the CLI on the same pool, and how often the app reports progress.

For each pool (the shared TruthfulQA and GSM8K pools when /work/shared/data is present), with the
embedding backend and a fresh, empty result cache for every run:
- CLI: ``python -m core prepare`` in a subprocess, wall time from start to exit;
- app: the app served by ``streamlit run`` (open demo), the project created with its uploads, and
  "Prepare" clicked on the Projects page in headless Chromium, which stays open showing progress;
  wall time from the click until the project is ready. The project row is read every 0.2 s to
  record the stages it reported and the longest time without a new report.

Writes benchmarks/preparation.md. Run: python benchmarks/preparation.py [pool names]
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.config import CACHE_DIR as CACHE_ENV
from core.services.project import create_project
from core.store import Store
from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, Server

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared" / "data"
POOLS = ["truthfulqa", "gsm8k"]
SETTINGS = {"backend": "embedding"}
GOAL = 1.3


def cli_seconds(pool: Path, samples: Path, folder: Path) -> float:
    env = {**os.environ, CACHE_ENV: str(folder / "cli-cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "core", "prepare", "--pool", str(pool), "--samples", str(samples)]
        + ["--out", str(folder / "items.parquet"), "--backend", "embedding"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def app_seconds(pool: Path, samples: Path, folder: Path) -> tuple[float, list[str], float, int]:
    """(seconds from the click to ready, the distinct stages reported, longest seconds between reports,
    items prepared)."""
    from playwright.sync_api import sync_playwright

    os.environ[CACHE_ENV] = str(folder / "app-cache")
    db_url = f"sqlite:///{folder / 'app.db'}"
    store = Store.open(db_url)
    pid = create_project(
        store, "Bench", (pool.name, pool.read_bytes()), (samples.name, samples.read_bytes()), SETTINGS, start=False
    )
    with Server(db_url, folder, folder / "streamlit.log") as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/?project={pid}&grader=bench")
        button = page.get_by_role("button", name="Prepare", exact=True)
        button.wait_for(timeout=120_000)
        start = time.perf_counter()
        button.click()
        stages, last, longest, seen = [], start, 0.0, None
        while True:
            info = store.project(pid)
            now = time.perf_counter()
            report = (info.progress_message, info.progress_done)
            if report != seen and info.status == "preparing":
                seen, longest, last = report, max(longest, now - last), now
                stage = re.sub(r": ([\d,]+ of [\d,]+ \w+|\d+ s)$", "", info.progress_message)
                if stage and stage not in stages:
                    stages.append(stage)
            if info.status in ("ready", "failed"):
                break
            if now - start > 1800:
                raise RuntimeError("preparation did not finish in 30 minutes")
            time.sleep(0.2)
        elapsed = time.perf_counter() - start
        assert info.status == "ready", info.error
        browser.close()
    return elapsed, stages, longest, store.item_count(pid)


def main() -> None:
    rows = []
    for name in sys.argv[1:] or POOLS:
        pool, samples = SHARED / name / "pool.jsonl", SHARED / name / "samples.jsonl"
        if not pool.exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            load = os.getloadavg()[0]
            cli = cli_seconds(pool, samples, folder)
            app, stages, longest, n_items = app_seconds(pool, samples, folder)
            rows.append((name, n_items, cli, app, longest, stages, load, os.getloadavg()[0]))
            print(rows[-1], flush=True)
    lines = [
        "# Preparation: in the app against the CLI",
        "",
        f"Embedding backend (default model), a fresh empty result cache per run; {os.cpu_count()} CPUs shared with "
        f"other work, {platform.python_implementation()} {platform.python_version()}. CLI: `python -m core prepare`, "
        "process start to exit (imports and model load included). App: `streamlit run` server, Projects page open in "
        "headless Chromium, from the click on Prepare until the project is ready. Goal: app at most "
        f"{GOAL} times the CLI, and a progress report at least every 2 s.",
        "",
        "| pool | items | CLI s | app s | app / CLI | longest s without a new report | load average before, after |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, n, cli, app, longest, _, before, after in rows:
        lines.append(
            f"| {name} | {n:,} | {cli:.1f} | {app:.1f} | {app / cli:.2f} | {longest:.1f} | {before:.2f}, {after:.2f} |"
        )
    if rows:
        lines += ["", "Stages the app reported, in order: " + "; ".join(rows[0][5]) + "."]
    lines += ["", "Reproduce: `python benchmarks/preparation.py` (needs ../shared/data and Chromium).", ""]
    Path(__file__).with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
