"""Error texts and small defects of the command line: a rate limit says to lower the concurrency, a malformed
answer is a clear error, failed runs leave no file; `prepare --columns ...,samples=LIST` writes an items table
that `prepare` takes back; a pool without samples is warned about; verdict words as --proxy."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.stats.proxy import proxy_values

DATA = Path(__file__).parent / "data"
PORTS = range(18750, 18800)


@contextmanager
def answering(status: int, body: bytes) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 that answers every POST with ``status`` and ``body``: its /v1 URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address) -> None:
            pass  # the client hanging up on a refused run's other requests is no error of the test's

    for port in PORTS:
        try:
            server = Server(("127.0.0.1", port), Handler)
            break
        except OSError:
            continue
    else:
        pytest.skip("no free port in 18750-18799")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _sample(url: str, out: Path) -> list[str]:
    pool = str(DATA / "app" / "pool.jsonl")
    return [
        "sample",
        "--pool",
        pool,
        "--api-base",
        url,
        "--model",
        "m",
        "--k",
        "2",
        "--retries",
        "0",
        "--out",
        str(out),
    ]


def test_a_rate_limit_says_to_lower_the_concurrency_and_leaves_no_file(tmp_path, capsys):
    body = json.dumps({"error": {"message": "Rate limit reached", "type": "rate_limit"}}).encode()
    out = tmp_path / "samples.jsonl"
    with answering(429, body) as url:
        assert main(_sample(url, out)) == 2
    err = capsys.readouterr().err
    assert "429" in err and "--concurrency" in err and "Requests at once" in err and "Traceback" not in err
    assert not out.exists()


def test_a_malformed_answer_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    out = tmp_path / "samples.jsonl"
    with answering(200, b'{"id": "x", "choices": [ {oops') as url:
        assert main(_sample(url, out)) == 2
    err = capsys.readouterr().err
    assert "not the JSON of an OpenAI chat completion" in err and "Traceback" not in err and not out.exists()


def test_prepare_with_a_samples_list_column_writes_an_items_table_prepare_takes_back(tmp_path, capsys):
    rows = [
        {
            "qid": f"x{i}",
            "question": f"{i} + 1?",
            "answer": str(i + 1),
            "gens": [str(i + 1)] * 2 + ["0"],
            "refs": [str(i + 1), "one"],
        }
        for i in range(12)
    ]
    pool = tmp_path / "pool.parquet"
    pd.DataFrame(rows).to_parquet(pool)  # list columns read back as numpy arrays
    items = tmp_path / "items.csv"
    columns = "id=qid,prompt=question,response=answer,samples=gens"
    assert main(["prepare", "--pool", str(pool), "--columns", columns, "--out", str(items), "-q"]) == 0
    table = pd.read_csv(items)
    assert "qid" not in table.columns and "gens" not in table.columns  # the id and the samples moved
    assert json.loads(table.loc[0, "refs"]) == ["1", "one"] and (table["n_samples"] == 3).all()
    again = tmp_path / "again.csv"
    assert main(["prepare", "--pool", str(items), "--out", str(again), "-q"]) == 0
    assert pd.read_csv(again)["id"].tolist() == table["id"].tolist()


def test_prepare_warns_about_an_lm_eval_file_without_samples(tmp_path, capsys):
    pool = str(DATA / "eval_logs" / "samples_arith.jsonl")
    assert main(["prepare", "--pool", pool, "--out", str(tmp_path / "items.csv"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "warning: no item of" in err and "--samples" in err and "--proxy" in err
    repeats = str(DATA / "eval_logs" / "samples_arith_repeats.jsonl")
    assert main(["prepare", "--pool", pool, "--samples", repeats, "--out", str(tmp_path / "b.csv"), "-q"]) == 0
    assert "no item of" not in capsys.readouterr().err  # (its repeats all agree: one stratum, said apart)


def test_verdict_words_as_the_proxy_are_read_and_other_words_refused_with_a_fix():
    pool = pd.DataFrame({"id": list("abcde"), "verdict": ["correct", "Incorrect", "C", None, "P"]})
    with pytest.raises(InputError, match="'p' of item 'a'"):  # a lower-case letter is no letter grade
        proxy_values(pd.DataFrame({"id": ["a"], "v": ["p"]}), "v")
    assert proxy_values(pool, "verdict").tolist()[:3] == [1.0, 0.0, 1.0]
    assert proxy_values(pool, "verdict")[4] == 0.5
    with pytest.raises(InputError, match="'A' of item 'a' is not a number nor a verdict word") as error:
        proxy_values(pd.DataFrame({"id": ["a", "b"], "choice": ["A", "B"]}), "choice", file="pool.jsonl")
    assert "1 right, 0 wrong" in str(error.value)


def test_a_database_that_cannot_be_opened_is_one_line_not_a_traceback(capsys):
    """`status` against a server that is not there printed a 118-line SQLAlchemy traceback (an operator's
    review): now one line naming the database (its password hidden) and the fix, and exit status 2."""
    url = "postgresql+psycopg://ops:hunter2secret@127.0.0.1:1/app"
    assert main(["status", "--db-url", url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    said = [line for line in err if line.startswith("error: ")]
    assert len(said) == 1 and "cannot be opened or did not answer" in said[0] and "Fix: check --db-url" in said[0]
    assert "hunter2secret" not in "\n".join(err) and "Traceback" not in "\n".join(err)


def test_prepare_warns_of_empty_responses_as_the_setup_page_does(tmp_path, capsys):
    """An item with an empty response was warned of by the setup page and the API, never by the command line (a
    new user's review)."""
    rows = [json.loads(line) for line in (DATA / "app" / "pool.jsonl").read_text().splitlines()]
    rows[3]["response"] = ""
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(json.dumps(r) for r in rows))
    samples = str(DATA / "app" / "samples.jsonl")
    assert main(["prepare", "--pool", str(pool), "--samples", samples, "--out", str(tmp_path / "i.csv"), "-q"]) == 0
    assert f"1 item of the pool has an empty response ({rows[3]['id']})" in capsys.readouterr().err
