"""The HTTP API's grade round trip on 127.0.0.1: ``GET next`` then ``POST grades`` through the Python client,
against the served app (serve.py) on a 10,000-item project, one grader.

For each of GRADES grades (after WARMUP): the server's own time on each request (its ``Server-Timing``
header, core.api.http: from the request's first byte to the response) and the client's wall time for the
pair, and the server process's CPU time per grade over the GRADES (user + system, /proc, every thread: the
web server's share too). Then GRADES more as one round trip each, ``POST grades?then=next`` (the grade and
the next card in one answer). The goals: median server time of a grade round trip at most 20 ms (issue 29)
and server CPU per grade at most 5 ms (issue 28). The load average is recorded before and after (the
machine may be shared).

Writes benchmarks/api_latency.md. Run: python -m benchmarks.api_latency
"""

from __future__ import annotations

import importlib.util
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import activegrade
from benchmarks.grading_latency import N_ITEMS, benchmark_project
from core import config
from core.services import auth, team, tokens
from core.testing.appserver import ROOT, Server

GRADES = 200
WARMUP = 10
OUT = ROOT / "benchmarks" / "api_latency.md"


def server_ms(response) -> float:
    return float(response.headers["Server-Timing"].split("dur=")[1])


def server_stack() -> str:
    """The event loop and HTTP parser uvicorn takes for serve.py here: uvloop and httptools when installed
    (requirements.txt), else asyncio's loop and h11."""
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio's loop"
    parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return f"the server on uvicorn with {loop} and {parser}"


def cpu_s(pid: int) -> float:
    """The CPU seconds (user + system, every thread) process ``pid`` has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        store, url, pid = benchmark_project(folder, "API latency", {"min_view_s": 0})
        team.create_account(store, auth.OPERATOR, "bench", auth.GRADER, password="a long enough password")
        team.assign(store, auth.OPERATOR, pid, "bench")
        secret = tokens.create(store, auth.OPERATOR, "bench", "benchmark")[1]
        os.environ[config.OPEN_DEMO] = "0"
        load_before = os.getloadavg()[0]
        with Server(url, folder, folder / "streamlit.log") as server:
            client = activegrade.Client(server.url, secret)
            path = f"/projects/{pid}"
            rows, cpu = [], {}
            for i in range(WARMUP + GRADES):
                if i == WARMUP:
                    cpu["pair"] = cpu_s(server.process.pid)
                start = time.perf_counter()
                got = client.request("GET", path + "/next")
                item = got.json()["item"]
                body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
                graded = client.request("POST", path + "/grades", json=body)
                rows.append((server_ms(got), server_ms(graded), (time.perf_counter() - start) * 1000))
            cpu["pair"] = (cpu_s(server.process.pid) - cpu["pair"]) * 1000 / GRADES
            item = client.request("GET", path + "/next").json()["item"]
            chained = []
            for i in range(WARMUP + GRADES):  # one round trip per grade: the answer carries the next card
                if i == WARMUP:
                    cpu["chained"] = cpu_s(server.process.pid)
                body = {"item_id": item["item_id"], "token": item["token"], "label": item["labels"][0]["label"]}
                start = time.perf_counter()
                graded = client.request("POST", path + "/grades?then=next", json=body)
                chained.append((server_ms(graded), (time.perf_counter() - start) * 1000))
                item = graded.json()["next"]["item"]
            cpu["chained"] = (cpu_s(server.process.pid) - cpu["chained"]) * 1000 / GRADES
            health = []
            for _ in range(50):  # Streamlit's own health check, through the same client: the web server's share
                start = time.perf_counter()
                client.session.get(server.url + "/_stcore/health", timeout=60)
                health.append((time.perf_counter() - start) * 1000)
        load_after = os.getloadavg()[0]
        rows, chained = rows[WARMUP:], chained[WARMUP:]
    nxt, grade, wall = ([r[i] for r in rows] for i in range(3))
    then_next, then_next_wall = ([r[i] for r in chained] for i in range(2))
    pair = [a + b for a, b, _ in rows]

    def q(values: list[float], share: float) -> float:
        return statistics.quantiles(values, n=100)[int(share * 100) - 1]

    lines = [
        "# HTTP API: grade round trip on 127.0.0.1",
        "",
        f"`python -m benchmarks.api_latency`: {GRADES} grades (after {WARMUP} warm-up) through the Python client "
        f"(`activegrade.Client`) against serve.py on a {N_ITEMS:,}-item project (SQLite), one grader: `GET next` "
        "then `POST grades`. Server time is the API's own `Server-Timing` (request in to response out, "
        "core/api/http.py); the client's wall time adds HTTP on 127.0.0.1 and `requests`.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other work: load average {load_before:.2f} "
        f"before, {load_after:.2f} after), Python {platform.python_version()}; {server_stack()}.",
        "",
        "| ms | median | p90 | max |",
        "|---|---|---|---|",
    ]
    for name, values in (
        ("server: GET next", nxt),
        ("server: POST grades", grade),
        ("server: next + grade", pair),
        ("client wall time: next + grade", wall),
        ("server: POST grades?then=next (grade and next card, one round trip)", then_next),
        ("client wall time: POST grades?then=next", then_next_wall),
    ):
        lines.append(f"| {name} | {statistics.median(values):.1f} | {q(values, 0.9):.1f} | {max(values):.1f} |")
    lines.append(
        f"| client wall time: Streamlit's `/_stcore/health` | {statistics.median(health):.1f} | {q(health, 0.9):.1f} "
        f"| {max(health):.1f} |"
    )
    lines += [
        "",
        f"Server CPU per grade (the server process's user + system time over the {GRADES} grades, every thread, "
        f"/proc): **{cpu['pair']:.1f} ms** with `GET next` then `POST grades`, **{cpu['chained']:.1f} ms** with "
        f"`POST grades?then=next` (goal, issue 28: at most 5 ms; {'met' if cpu['chained'] <= 5 else 'not met'}).",
        "",
        "The wall time beyond the server's is the web server's and HTTP's on 127.0.0.1: Streamlit's health check, "
        f"which runs no code of ours, takes {statistics.median(health):.1f} ms a request through the same client. "
        "With asyncio's loop and h11 it took about 40 ms, for this route as for ours (a delayed acknowledgement "
        "between the server and the client); with uvloop and httptools (requirements.txt) the client's wall time "
        "is the server's plus about 1 ms.",
    ]
    goal = statistics.median(pair)
    alone = statistics.median(grade)
    lines += [
        "",
        f"Goal (issue 29): median server time of a grade round trip at most 20 ms: `POST grades` alone "
        f"**{alone:.1f} ms** ({'met' if alone <= 20 else 'not met'}); with the `GET next` that fetches the item, "
        f"**{goal:.1f} ms** ({'met' if goal <= 20 else 'not met'}); as one round trip (`then=next`), "
        f"**{statistics.median(then_next):.1f} ms** ({'met' if statistics.median(then_next) <= 20 else 'not met'}). "
        "A press checks the grader, their assignment and the project once (grade_actions.check, for the grade and "
        "the claim of `then=next` together), its reads share one connection (Store.shared_reads) and it runs 24 "
        "statements (tests/test_press_statements.py keeps it so). What is left is the queue's draw of the next "
        "item (core.stats.queue.Draws) and the stopping rule's step for the new grade (core.stats.stopping."
        "LookReplay: the estimate's moments and the look's exact interval at every grade), each about 0.6 ms; "
        "the four write transactions (the grade, the token spent, the next item's reservation, its showing); and "
        "the web server's own share (issue 28).",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
