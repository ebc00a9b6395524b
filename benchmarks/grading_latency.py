"""Time from pressing a grade key to "sending" and to the next item shown "saved", in Chromium, on a
10,000-item project: the Grade page's card (Streamlit) and the fast grading page (/grade-fast,
core/api/fast.py), beside a bare one-button Streamlit app's round trip in the same run.

Builds a synthetic 10,000-item pool with 5 surrogate samples per item,
prepares it through the app's own path (core.services.project, exact backend), serves
the app with `streamlit run`, and grades GRADES items with the keyboard in a
headless Chromium on each page, timing inside the page. Then serves a bare Streamlit app
(one button, a counter) with the same flags and times its key-press round
trip. Also times the server-side work per grade without a browser (record
the grade, pick the next item, load it), and follows the server's memory (RSS) and CPU time over a
long session of LONG_GRADES keyboard grades in one tab, with the server's configuration as shipped
(.streamlit/config.toml: no file watcher, no full garbage collection after each rerun).

Writes benchmarks/grading_latency.md. Run: python benchmarks/grading_latency.py
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from core.scales import BINARY
from core.services import reservations
from core.services.project import create_project, start_preparation
from core.stats.allocation import design_from_items
from core.store import Store
from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, Server

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # the screenshot (not committed)

N_ITEMS = 10_000
GRADES = 40
WARMUP = 5
LONG_GRADES = 500  # each grade is one rerun of the page (its fragment), at the card's pace
SAMPLE_EVERY = 50
BUSY_PROCESSES = 4
"""CPU-bound processes competing during the busy round, as benchmarks/ci_busy.sh does for the test suite
(load average 5-7 on 2 cores: the shared machine of issue 28's busy walk-through)."""


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


def benchmark_project(folder: Path, name: str, settings: dict | None = None) -> tuple[Store, str, int]:
    """The 10,000-item `synthetic_pool` as a prepared project in a SQLite file under ``folder``, with
    ``settings``: the store, its URL and the project's id."""
    url = f"sqlite:///{folder / 'bench.db'}"
    store = Store.open(url)
    files = [(p.name, p.read_bytes()) for p in synthetic_pool(folder)]
    project_id = create_project(store, name, *files, settings or {}, start=False)
    start_preparation(store, project_id, wait=True)
    return store, url, project_id


def server_side(store: Store, project_id: int, grades: int) -> list[float]:
    """Milliseconds per grade for what the grade page does, no browser: record the grade and free
    the reservation, claim (reserve) the next item, load it."""
    items = store.load_items(project_id)
    design = design_from_items(items, stratify_by=None)
    times = []
    position = reservations.claim(store, project_id, design, 0, "server-bench")
    for _ in range(grades):
        start = time.perf_counter()
        reservations.record_grade(store, project_id, position, BINARY, "Correct", "server-bench", seconds=1.0)
        position = reservations.claim(store, project_id, design, 0, "server-bench")
        store.item(project_id, position)
        times.append((time.perf_counter() - start) * 1000)
    return times


# Timestamps taken inside the page (performance.now): each keydown, the card's "sending" mark, and
# the animation frame after the next card arrives marked "saved" (the grade is committed).
CARD_CLOCK = """
window.__t = {press: [], sending: [], saved: []};
window.addEventListener('keydown', () => window.__t.press.push(performance.now()), true);
new MutationObserver((changes) => {
  for (const c of changes) {
    if (c.type !== 'attributes' || c.attributeName !== 'data-ag-state') continue;
    const state = c.target.dataset.agState;
    if (state === 'sending') window.__t.sending.push(performance.now());
    if (state === 'saved') requestAnimationFrame(() => window.__t.saved.push(performance.now()));
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ag-state']});
"""
CARD_READY = """() => { const c = document.querySelector('.ag-card');
  return c !== null && c.dataset.agShownAt !== undefined && c.dataset.agState !== 'sending'
    && performance.now() - Number(c.dataset.agShownAt) > 350; }"""

# The fast page (core/api/fast.py) paints the item expected next on the keydown's task while the grade is
# saved ("pending"), and makes it pressable ("ready") when the server's answer comes, or first puts the item
# the server handed out instead (counted by the page's data-replaced). Per press: the animation frame after
# the texts of the card that ends up held were put in the page, and the frame after it became pressable.
FAST_CLOCK = """
window.__t = {press: [], painted: [], saved: [], ready: 0};
let waiting = false, itemFrame = 0;
window.addEventListener('keydown', () => { window.__t.press.push(performance.now()); waiting = true; }, true);
new MutationObserver((changes) => {
  const card = document.getElementById('card');
  for (const c of changes) {
    if (!waiting || c.target !== card) continue;
    if (c.attributeName === 'data-item') requestAnimationFrame(() => { itemFrame = performance.now(); });
    if (c.attributeName === 'data-state' && card.dataset.state === 'ready') {
      waiting = false;
      requestAnimationFrame(() => {
        const now = performance.now();
        window.__t.painted.push(itemFrame); window.__t.saved.push(now); window.__t.ready = now;
      });
    }
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-item', 'data-state']});
"""
FAST_READY = """(k) => { const c = document.getElementById('card');
  return c !== null && c.dataset.state === 'ready' && window.__t.saved.length >= k
    && performance.now() - Math.max(Number(c.dataset.shownAt), window.__t.ready) > 350; }"""

BARE_APP = """import streamlit as st

st.session_state.setdefault("n", 0)


def add() -> None:
    st.session_state.n += 1


st.button("Add", on_click=add, shortcut="Y")
st.markdown(f"count {st.session_state.n}")
"""
BARE_CLOCK = """
window.__t = {press: [], shown: []};
window.addEventListener('keydown', () => window.__t.press.push(performance.now()), true);
new MutationObserver(() => {
  const text = [...document.querySelectorAll('[data-testid=stMarkdownContainer] p')].map((p) => p.textContent).join(' ');
  const m = text.match(/count (\\d+)/);
  if (m && Number(m[1]) > window.__t.shown.length) requestAnimationFrame(() => window.__t.shown.push(performance.now()));
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def _launch(p):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    return browser, browser.new_page(viewport={"width": 1400, "height": 1000})


def card_side(server: Server, project_id: int) -> dict[str, list[float]]:
    """Milliseconds from each key press to the card's "sending" mark and to the next card shown
    "saved", measured inside the page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = _launch(p)
        page.add_init_script(CARD_CLOCK)
        page.goto(f"{server.url}/grade?project={project_id}&grader=bench")
        for k in range(1, GRADES + 1):
            page.wait_for_function(CARD_READY, polling="raf", timeout=120_000)
            page.keyboard.press("y")
            page.wait_for_function("(k) => window.__t.saved.length >= k", arg=k, polling="raf", timeout=30_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / "grade-10000.png", full_page=True)
        t = page.evaluate("window.__t")
        browser.close()
    return {
        "sending": [s - k for k, s in zip(t["press"], t["sending"])],
        "saved": [s - k for k, s in zip(t["press"], t["saved"])],
    }


def fast_side(server: Server, project_id: int) -> dict[str, list[float] | float]:
    """Milliseconds from each key press to the next card painted and to it held (the grade saved, the card
    pressable) on the fast grading page, measured inside the page; the cards it painted ahead and those of
    them it replaced; and the server's CPU milliseconds per grade over the run."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = _launch(p)
        page.add_init_script(FAST_CLOCK)
        page.goto(f"{server.url}/grade-fast?project={project_id}&grader=fast-bench")
        page.wait_for_function(FAST_READY, arg=0, polling="raf", timeout=120_000)
        _, cpu0 = process_usage(server.process.pid)
        for k in range(1, GRADES + 1):
            page.keyboard.press("1")
            page.wait_for_function(FAST_READY, arg=k, polling="raf", timeout=30_000)
        _, cpu = process_usage(server.process.pid)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / "grade-fast-10000.png", full_page=True)
        t = page.evaluate("window.__t")
        ahead, replaced = (int(page.get_attribute("#card", f"data-{n}") or 0) for n in ("ahead", "replaced"))
        browser.close()
    return {
        "painted": [s - k for k, s in zip(t["press"], t["painted"])],
        "saved": [s - k for k, s in zip(t["press"], t["saved"])],
        "ahead": ahead,
        "replaced": replaced,
        "cpu_ms": (cpu - cpu0) / GRADES * 1000,
    }


def process_usage(pid: int) -> tuple[float, float]:
    """(resident set size in MB, user + system CPU seconds) of process ``pid``, from Linux's /proc."""
    rss_kb = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS:")
    )
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return rss_kb / 1024, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def long_session(server: Server, project_id: int) -> list[tuple[int, float, float]]:
    """(grades so far, server RSS MB, server CPU s since the first card) every SAMPLE_EVERY of LONG_GRADES
    keyboard grades in one tab, each pressed 0.35 s after its item was painted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = _launch(p)
        page.add_init_script(CARD_CLOCK)
        page.goto(f"{server.url}/grade?project={project_id}&grader=long")
        page.wait_for_function(CARD_READY, polling="raf", timeout=120_000)
        rss, cpu0 = process_usage(server.process.pid)
        samples = [(0, rss, 0.0)]
        for k in range(1, LONG_GRADES + 1):
            page.wait_for_function(CARD_READY, polling="raf", timeout=120_000)
            page.keyboard.press("y")
            page.wait_for_function("(k) => window.__t.saved.length >= k", arg=k, polling="raf", timeout=30_000)
            if k % SAMPLE_EVERY == 0:
                rss, cpu = process_usage(server.process.pid)
                samples.append((k, rss, cpu - cpu0))
        browser.close()
    return samples


def bare_side(folder: Path) -> list[float]:
    """Milliseconds from a key press to the new count on screen in a one-button Streamlit app,
    served with the same flags (its callback increments a counter)."""
    from playwright.sync_api import sync_playwright

    script = folder / "bare_app.py"
    script.write_text(BARE_APP)
    with Server(f"sqlite:///{folder / 'unused.db'}", folder, folder / "bare.log", script=str(script)) as bare:
        with sync_playwright() as p:
            browser, page = _launch(p)
            page.add_init_script(BARE_CLOCK)
            page.goto(bare.url)
            page.get_by_text("count 0").wait_for(timeout=60_000)
            for k in range(1, GRADES + 1):
                page.wait_for_timeout(350)  # the same pace as the card's presses
                page.keyboard.press("y")
                page.wait_for_function("(k) => window.__t.shown.length >= k", arg=k, polling="raf", timeout=30_000)
            t = page.evaluate("window.__t")
            browser.close()
    return [s - k for k, s in zip(t["press"], t["shown"])]


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` CPU-bound Python processes (`while True: pass`) running until the block ends."""
    competitors = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for competitor in competitors:
            competitor.kill()
            competitor.wait()


def busy_round(db_url: str, folder: Path, project_id: int) -> dict[str, object]:
    """The Grade page, the fast page and the bare app timed again while BUSY_PROCESSES compete for the CPUs,
    with the load average the round ended at."""
    with busy(BUSY_PROCESSES):
        time.sleep(10)  # let the load average show the competitors before the clock starts
        with Server(db_url, folder, folder / "streamlit-busy.log") as server:
            card = {k: v[WARMUP:] for k, v in card_side(server, project_id).items()}
            fast = fast_side(server, project_id)
        bare = bare_side(folder)[WARMUP:]
        load = os.getloadavg()[0]
    return {
        "card": summary(card["saved"]),
        "fast": summary(fast["painted"][WARMUP:]),
        "bare": summary(bare),
        "load": load,
    }


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))], "max": ordered[-1]}


def busy_ratio(loaded: dict[str, object], key: str) -> float:
    """Median time of ``key``'s measure over the bare app's, in the busy round."""
    return loaded[key]["median"] / loaded["bare"]["median"]


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
        load = {"before": os.getloadavg()[0]}
        with Server(db_url, folder, folder / "streamlit.log") as server:
            card = {k: v[WARMUP:] for k, v in card_side(server, project_id).items()}
            load["Grade page"] = os.getloadavg()[0]
            fast = fast_side(server, project_id)
            load["fast page"] = os.getloadavg()[0]
            long = long_session(server, project_id)
        bare = bare_side(folder)[WARMUP:]
        load["bare app, after"] = os.getloadavg()[0]
        python = server_side(store, project_id, GRADES)[WARMUP:]
        loaded = busy_round(db_url, folder, project_id)
    saved, sending, b, s = summary(card["saved"]), summary(card["sending"]), summary(bare), summary(python)
    painted, held = summary(fast["painted"][WARMUP:]), summary(fast["saved"][WARMUP:])
    ratio = saved["median"] / b["median"]
    fast_ratio = painted["median"] / b["median"]
    loads = ", ".join(f"{name} {value:.2f}" for name, value in load.items())
    lines = [
        "# Grading latency",
        "",
        f"{N_ITEMS:,}-item project, {len(card['saved'])} grades timed after {WARMUP} warm-up grades; SQLite (WAL); "
        f"app and headless Chromium on the same machine ({os.cpu_count()} CPUs, "
        f"{platform.python_implementation()} {platform.python_version()}; other work shares these CPUs; load "
        f"average (1 min) {loads}). Times are taken inside the page "
        '(`performance.now`): on the Grade page (Streamlit), from the keydown to the card\'s "sending" mark, and '
        'to the animation frame after the next card arrives marked "saved" (the grade is committed before the '
        "server sends it). On the fast grading page (/grade-fast, core/api/fast.py, the same server, "
        f"{GRADES - WARMUP} grades after {WARMUP}): from the keydown to the animation frame after the next card's "
        "texts are in the page (painted ahead while the grade is saved: the item the previous answer named as "
        "expected next; when the server hands out another item, the frame after that one replaces it), and to "
        "the frame after it became pressable (the server's answer in: the grade saved, the card's token held). "
        "The bare app is one `st.button` whose callback increments a counter, served in the same run with the "
        "same flags; its time runs from the key press to the frame showing the new count. Each key is pressed "
        "0.35 s after its item was painted (the Grade page ignores grades given sooner), on the fast page 0.35 s "
        "after its card was painted and pressable.",
        "",
        "| measure | median ms | p90 ms | max ms |",
        "|---|---|---|---|",
        f'| Grade page: key press to "sending" on the card | {sending["median"]:.0f} | {sending["p90"]:.0f} | {sending["max"]:.0f} |',
        f'| Grade page: key press to next card shown, "saved" | {saved["median"]:.0f} | {saved["p90"]:.0f} | {saved["max"]:.0f} |',
        f"| fast page: key press to next card painted | {painted['median']:.0f} | {painted['p90']:.0f} | {painted['max']:.0f} |",
        f"| fast page: key press to next card pressable, grade saved | {held['median']:.0f} | {held['p90']:.0f} | {held['max']:.0f} |",
        f"| bare Streamlit app: key press to new count shown | {b['median']:.0f} | {b['p90']:.0f} | {b['max']:.0f} |",
        f"| server work per grade: save and release, claim next, load it (Python) | {s['median']:.1f} | {s['p90']:.1f} | {s['max']:.1f} |",
        "",
        f"Ratio of the medians, next card / bare round trip: Grade page **{ratio:.2f}** (goal: 1.5 or less); fast "
        f"page, painted, **{fast_ratio:.2f}** (issue 28's goal on a busy machine: 0.5 or less; on a quiet one "
        f"median 30 ms or less, p90 60 ms or less). The fast page painted {fast['ahead']} of its {GRADES} "
        f"next cards ahead and replaced {fast['replaced']} of those; the server's CPU time during its {GRADES} grades: {fast['cpu_ms']:.0f} ms per "
        f'grade (goal: 5 ms). Goals: "sending" within 50 ms (median {sending["median"]:.0f} ms, max '
        f"{sending['max']:.0f} ms); next card median 250 ms or less when the load average is under 1.",
        "",
        "## Busy machine",
        "",
        f"The same three timed again in the same run while {BUSY_PROCESSES} CPU-bound processes compete for the "
        f"{os.cpu_count()} CPUs (load average (1 min) at the round's end {loaded['load']:.2f}).",
        "",
        "| measure | median ms | p90 ms | max ms |",
        "|---|---|---|---|",
        *(
            f"| {name} | {loaded[key]['median']:.0f} | {loaded[key]['p90']:.0f} | {loaded[key]['max']:.0f} |"
            for name, key in (
                ('Grade page: key press to next card shown, "saved"', "card"),
                ("fast page: key press to next card painted", "fast"),
                ("bare Streamlit app: key press to new count shown", "bare"),
            )
        ),
        "",
        f"Ratio of the medians, next card / bare round trip, busy: Grade page **{busy_ratio(loaded, 'card'):.2f}**, fast "
        f"page, painted, **{busy_ratio(loaded, 'fast'):.2f}** (issue 28's goal: 0.5 or less).",
        "",
        "## Memory and CPU over a long session",
        "",
        f"One tab grading {LONG_GRADES} items with the keyboard (each press one rerun of the grade page's "
        "fragment), on the server started as above, after the timed grades; the server process's resident "
        "memory (VmRSS) and CPU time (user + system) every "
        f"{SAMPLE_EVERY} grades. The server runs without a full garbage collection after each rerun "
        "(`[runner] postScriptGC = false`) and without a file watcher (.streamlit/config.toml).",
        "",
        "| grades | server RSS MB | server CPU s since the first card |",
        "|---|---|---|",
        *(f"| {k} | {rss:.0f} | {cpu:.1f} |" for k, rss, cpu in long),
        "",
        f"Resident memory from grade {long[2][0]} to {long[-1][0]}: {long[2][1]:.0f} -> {long[-1][1]:.0f} MB "
        f"({(long[-1][1] - long[2][1]) / (long[-1][0] - long[2][0]) * 100:+.1f} MB per 100 grades); "
        f"server CPU {long[-1][2] / long[-1][0] * 1000:.0f} ms per grade.",
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
