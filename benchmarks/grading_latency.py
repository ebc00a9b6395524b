"""Time from pressing a grade key to the next item shown, in Chromium, on a 10,000-item project.

Builds a synthetic 10,000-item pool with 5 surrogate samples per item,
prepares it through the app's own path (core.project, exact backend), serves
the app with `streamlit run`, and grades GRADES items with the keyboard in a
headless Chromium. Each latency runs from the key press to the moment the
next item's id and its enabled grade buttons are on screen (checked once per
animation frame). Also times the server-side work per grade without
a browser (record the grade, pick the next item, load it).

Writes benchmarks/grading_latency.md. Run: python benchmarks/grading_latency.py
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from core import reservations
from core.allocation import design_from_items
from core.appserver import CHROMIUM, CHROMIUM_ARGS, ITEM_SHOWN, Server, press_grade_key
from core.project import create_project, start_preparation
from core.scales import BINARY
from core.store import Store

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # the screenshot (not committed)

N_ITEMS = 10_000
GRADES = 40
WARMUP = 5
TARGET_MS = 300
PROGRESS = """(expected) => {
  const progress = document.querySelector('[data-testid=stProgress]');
  return progress !== null && progress.textContent.includes(expected);
}"""


def synthetic_pool(folder: Path) -> tuple[Path, Path]:
    """10,000 arithmetic items; surrogate samples agree on most items, split on some."""
    import random

    rng = random.Random(0)
    pool, samples = [], []
    for i in range(N_ITEMS):
        a, b = rng.randint(2, 999), rng.randint(2, 999)
        right = a + b
        answer = right if rng.random() < 0.75 else right + rng.choice([-10, -1, 1, 100])
        pool.append(
            {
                "id": f"i{i:05d}",
                "prompt": f"Item {i:05d}: what is {a} + {b}?",
                "response": f"Adding the two numbers gives **{answer}**.",
                "answer": str(answer),
                "reference": str(right),
            }
        )
        wrong = rng.choice([0, 0, 0, 1, 2, 3])
        samples += [{"id": f"i{i:05d}", "sample": str(right if k >= wrong else right + k + 1)} for k in range(5)]
    pool_path, samples_path = folder / "pool.jsonl", folder / "samples.jsonl"
    pool_path.write_text("\n".join(json.dumps(r) for r in pool) + "\n")
    samples_path.write_text("\n".join(json.dumps(r) for r in samples) + "\n")
    return pool_path, samples_path


def server_side(store: Store, project_id: int, grades: int) -> list[float]:
    """Milliseconds per grade for what the grade page does, no browser: record the grade and free
    the reservation, claim (reserve) the next item, load it."""
    items = store.load_items(project_id)
    design = design_from_items(items, stratify_by=None)
    times = []
    position = reservations.claim(store, project_id, design, 0, "server-bench")
    for _ in range(grades):
        start = time.perf_counter()
        reservations.grade(store, project_id, position, BINARY, "Correct", "server-bench", seconds=1.0)
        position = reservations.claim(store, project_id, design, 0, "server-bench")
        store.item(project_id, position)
        times.append((time.perf_counter() - start) * 1000)
    return times


def browser_side(server: Server, project_id: int) -> list[float]:
    """Milliseconds from each key press until the next item is on screen with its grade buttons
    ready (core.appserver.press_grade_key)."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/grade?project={project_id}&grader=bench")
        page.get_by_text("0 of 10,000 items graded").wait_for(timeout=120_000)
        page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=120_000)
        page.get_by_role("heading", name="Grade", exact=True, level=1).click()
        for k in range(1, GRADES + 1):
            times.append(press_grade_key(page, "y"))
            page.wait_for_function(PROGRESS, arg=f"{k:,} of 10,000 items graded", timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / "grade-10000.png", full_page=True)
        browser.close()
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))], "max": ordered[-1]}


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db_url = f"sqlite:///{folder / 'bench.db'}"
        store = Store.open(db_url)
        pool, samples = synthetic_pool(folder)
        start = time.perf_counter()
        project_id = create_project(
            store, "Latency", (pool.name, pool.read_bytes()), (samples.name, samples.read_bytes()), start=False
        )
        start_preparation(store, project_id, wait=True)
        prepare_s = time.perf_counter() - start
        assert store.project(project_id).status == "ready", store.project(project_id).error
        load_before = os.getloadavg()[0]
        with Server(db_url, folder, folder / "streamlit.log") as server:
            browser = browser_side(server, project_id)[WARMUP:]
        python = server_side(store, project_id, GRADES)[WARMUP:]
    b, s = summary(browser), summary(python)
    verdict = "met" if b["median"] <= TARGET_MS else "NOT met"
    lines = [
        "# Grading latency",
        "",
        f"Key press to next item on screen, {N_ITEMS:,}-item project, {len(browser)} grades timed after "
        f"{WARMUP} warm-up grades; SQLite (WAL) database; app and headless Chromium on the same machine "
        f"({os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after: other work shares these CPUs).",
        f"Target: median at most {TARGET_MS} ms: **{verdict}**. Each key is pressed 0.35 s after its item "
        "appeared (the page ignores grades given sooner, as repeated keys).",
        "",
        "| measure | median ms | p90 ms | max ms |",
        "|---|---|---|---|",
        f"| key press to next item shown (Chromium) | {b['median']:.0f} | {b['p90']:.0f} | {b['max']:.0f} |",
        f"| server work per grade: save and release, claim next, load it (Python) | {s['median']:.1f} | {s['p90']:.1f} | {s['max']:.1f} |",
        "",
        f"Preparing the {N_ITEMS:,} items (upload check, exact clustering, strata, save): {prepare_s:.1f} s.",
        "",
        "Reproduce: `python benchmarks/grading_latency.py` (needs Chromium at /usr/bin/chromium).",
        "",
    ]
    (Path(__file__).with_suffix(".md")).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
