"""The Python client sends a call that is safe to repeat again after a 429 or a 503 (as the docs told every
integrator to), waits what Retry-After asks, and never repeats one that is not safe to."""

from __future__ import annotations

import json

import pytest
import requests
from requests.adapters import BaseAdapter

import activegrade
from activegrade import client as client_module


class Answers(BaseAdapter):
    """Answers each request with the next (status, headers[, the error's field]) given (an exception as status:
    raised, a connection lost), then 200 with an outcome; records them."""

    def __init__(self, *answers: tuple[int, dict[str, str]]) -> None:
        super().__init__()
        self.answers, self.sent, self.headers = list(answers), [], []

    def send(self, request, **kwargs):
        self.sent.append((request.method, request.path_url, request.body))
        self.headers.append(request.headers)
        status, headers, *field = self.answers.pop(0) if self.answers else (200, {})
        if isinstance(status, Exception):  # the connection lost before an answer came
            raise status
        response = requests.Response()
        response.status_code, response.url = status, request.url
        response.headers.update({"Content-Type": "application/json", **headers})
        body = {"status": "saved", "message": "saved", "position": 3, "id": 7} if status == 200 else {}
        if status != 200:
            body = {"error": {"status": status, "message": "the database is busy", "field": next(iter(field), None)}}
        response._content = json.dumps(body).encode()
        return response

    def close(self) -> None:
        pass


def _project(answers: Answers) -> activegrade.Project:
    session = requests.Session()
    session.mount("http://", answers)
    return activegrade.Client("http://app.test", "token", session=session).project(7)


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    return slept


def test_a_grade_refused_by_a_busy_database_is_sent_again_after_the_wait_asked(waits):
    answers = Answers((503, {}), (429, {"Retry-After": "4"}))
    outcome = _project(answers).undo(item_id="q1")  # an undo naming its item is safe to repeat
    assert outcome.status == "saved" and len(answers.sent) == 3 and waits == [0.5, 4.0]


def test_a_call_not_safe_to_repeat_is_sent_once_and_the_error_carries_the_wait(waits):
    answers = Answers((429, {"Retry-After": "2"}))
    with pytest.raises(activegrade.ApiError) as refused:
        _project(answers).undo()  # a bare undo sent again would undo one action more
    assert len(answers.sent) == 1 and waits == [] and refused.value.retry_after == 2.0


def test_retries_give_up_after_their_count(waits):
    answers = Answers(*[(503, {})] * 5)
    with pytest.raises(activegrade.ApiError) as refused:
        _project(answers).undo(item_id="q1")
    assert refused.value.status == 503 and len(answers.sent) == 3 and waits == [0.5, 1.0]


def test_a_flag_is_sent_with_its_cards_token_and_note_and_again_after_a_busy_database(waits):
    """The server raises one flag for the same note sent again, so the client may repeat it."""
    answers = Answers((503, {}))
    card = activegrade.Card(item_id="q1", token="t1", position=3, prompt="", response="", labels=())
    outcome = _project(answers).flag(card, "the reference is wrong")
    sent = [json.loads(body) for _, _, body in answers.sent]
    assert outcome.status == "saved" and len(answers.sent) == 2 and answers.sent[0][1] == "/api/v1/projects/7/flag"
    assert sent == [{"item_id": "q1", "token": "t1", "note": "the reference is wrong"}] * 2


def test_a_create_is_sent_with_an_idempotency_key_and_again_with_the_same_after_a_lost_answer(waits):
    """POST projects was never sent again: a pipeline whose answer was lost could not tell whether the project
    was made (an integrator's note). The server answers a create sent again with its key with the project made."""
    answers = Answers((requests.ReadTimeout("no answer"), {}), (503, {}))
    project = _project(answers).client.create_project("P", ("pool.jsonl", b"{}\n"))
    keys = [headers["Idempotency-Key"] for headers in answers.headers]
    assert project.id == 7 and len(answers.sent) == 3 and waits == [0.5, 1.0]
    assert len(set(keys)) == 1 and len(keys[0]) == 36  # one create, one UUID
    mine = Answers()
    _project(mine).client.create_project("P", ("pool.jsonl", b"{}\n"), idempotency_key="my-run-42")
    assert mine.headers[0]["Idempotency-Key"] == "my-run-42"


def test_a_lost_connection_is_tried_again_only_for_a_call_safe_to_repeat(waits):
    answers = Answers((requests.ConnectionError("reset"), {}))
    assert _project(answers).undo(item_id="q1").status == "saved" and len(answers.sent) == 2
    lost = Answers((requests.ConnectionError("reset"), {}))
    with pytest.raises(activegrade.ApiError) as gone:  # NoAnswer: requests' own error escaped a script's except
        _project(lost).undo()  # a bare undo sent again might undo one action more
    assert len(lost.sent) == 1 and gone.value.status == 0 and isinstance(gone.value, activegrade.NoAnswer)
    assert "ConnectionError" in gone.value.message


def test_the_wrong_tokens_back_off_is_not_sent_again(waits):
    """Each retry of a wrong token's 429 counted as one more wrong token: the wait climbed to 870 s in four calls,
    each stalling 60 s (an integrator's review)."""
    answers = Answers((429, {"Retry-After": "3"}, "Authorization"))
    with pytest.raises(activegrade.ApiError) as refused:
        _project(answers).client.me()
    assert len(answers.sent) == 1 and waits == [] and refused.value.field == "Authorization"
