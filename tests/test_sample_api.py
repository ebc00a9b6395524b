"""core.surrogate.sample_api and `python -m core sample --api-base` against a real `transformers serve` of SmolLM2-135M-Instruct.

`transformers serve` ignores `n` and `logprobs`: only those two paths are tested on a server reply read from
tests/data/openai/ (see its README), through the real openai client with an httpx transport that returns it.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2 as httpx
import openai
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.surrogate.sample_api import Server, answer_of, api_key, sample_pool_api

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "data" / "openai" / "chat_completion_n3_logprobs.json"
POOL = pd.DataFrame(
    {"id": ["capital", "sum", "plural"], "prompt": ["Capital of France?", "What is 7 times 8?", "Plural of mouse?"]}
)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def replaying(reply: dict, requests: list[dict], failures: list[int] = ()) -> openai.AsyncOpenAI:
    """The real openai client whose transport answers `failures` (status codes) first, then `reply`."""
    pending = list(failures)

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        if pending:
            return httpx.Response(pending.pop(0), json={"error": {"message": "slow down"}})
        return httpx.Response(200, json=reply)

    return openai.AsyncOpenAI(
        base_url="http://recorded/v1",
        api_key="EMPTY",
        max_retries=3,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handle)),
    )


# --- the paths transformers serve cannot reach: n and logprobs (recorded reply) ---------------------------


def test_n_choices_and_logprobs_from_a_recorded_reply(tmp_path):
    reply, requests = json.loads(RECORDED.read_text()), []
    out = tmp_path / "samples.jsonl"
    server = Server("http://recorded/v1", "recorded-model")
    assert sample_pool_api(POOL[:1], server, out, k=3, client=replaying(reply, requests)) == 1
    assert len(requests) == 1 and requests[0]["n"] == 3 and requests[0]["logprobs"] is True
    rows = read_jsonl(out)
    assert [r["sample"] for r in rows] == ["Paris", "Paris, France", "Lyon"]  # first line only
    assert [r["logprob"] for r in rows] == [-0.25, -2.5, -2.5]
    assert [r["n_tokens"] for r in rows] == [1, 3, 2]


def test_retries_on_429_and_503_with_back_off_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(openai.AsyncOpenAI, "_calculate_retry_timeout", lambda *a, **k: 0.0)
    reply, requests = json.loads(RECORDED.read_text()), []
    client = replaying(reply, requests, failures=[429, 503])
    out = tmp_path / "samples.jsonl"
    sample_pool_api(POOL[:1], Server("http://recorded/v1", "m"), out, k=3, client=client)
    assert len(requests) == 3 and len(read_jsonl(out)) == 3


def test_answer_without_logprobs_has_no_likelihood():
    choice = openai.types.chat.chat_completion.Choice.model_validate(
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": " 56 \nmore"}}
    )
    answer = answer_of(choice)
    assert (answer.text, answer.logprob, answer.n_tokens) == ("56", None, None)


def test_the_key_variable_must_be_set_and_its_value_is_never_in_the_message(monkeypatch):
    monkeypatch.delenv("AG_TEST_KEY", raising=False)
    with pytest.raises(InputError, match="AG_TEST_KEY holding the API key is not set"):
        api_key("AG_TEST_KEY")
    monkeypatch.setenv("AG_TEST_KEY", "sk-secret-value")
    assert api_key("AG_TEST_KEY") == "sk-secret-value"
    assert api_key(None) == "EMPTY"


# --- a real server (tests/conftest.py: served_url) ----------------------------------------------------------


@pytest.mark.slow
def test_real_server_gives_k_answers_by_parallel_requests_and_resumes(served_url, tmp_path):
    url, model = served_url
    out = tmp_path / "samples.jsonl"
    server = Server(url, model, concurrency=2)
    assert sample_pool_api(POOL[:2], server, out, k=2, max_tokens=8) == 2
    rows = read_jsonl(out)
    assert sorted(r["id"] for r in rows) == ["capital", "capital", "sum", "sum"]
    assert all(isinstance(r["sample"], str) and r["surrogate"] == model for r in rows)
    assert not any("logprob" in r for r in rows)  # the server returns none
    assert sample_pool_api(POOL[:2], server, out, k=2, max_tokens=8) == 0  # resumed: nothing left
    assert sample_pool_api(POOL, server, out, k=2, max_tokens=8) == 1
    assert len(read_jsonl(out)) == 6


@pytest.mark.slow
def test_cli_against_the_real_server_never_shows_the_key(served_url, tmp_path, monkeypatch, capsys):
    url, model = served_url
    secret = "sk-test-never-shown-0123456789"
    monkeypatch.setenv("AG_SERVER_KEY", secret)
    pool = tmp_path / "pool.jsonl"
    POOL[:1].assign(response="x").to_json(pool, orient="records", lines=True)
    out = tmp_path / "samples.jsonl"
    argv = ["sample", "--pool", str(pool), "--api-base", url, "--model", model, "--api-key-env", "AG_SERVER_KEY"]
    assert main([*argv, "--k", "2", "--max-new-tokens", "8", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err + out.read_text()
    assert len(read_jsonl(out)) == 2
    bad = ["sample", "--pool", str(pool), "--api-base", url, "--model", model, "--out", str(tmp_path / "o.jsonl")]
    assert main([*bad, "--api-base", url.replace("/v1", "/nothing")]) == 2
    assert "the server answered HTTP 404" in capsys.readouterr().err
