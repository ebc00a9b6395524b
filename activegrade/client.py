"""``Client(url, token)``: the ActiveGrade HTTP API (/api/v1, docs/api.md) as plain methods and dataclasses.

HTTP through ``requests`` (already installed with the app, which Streamlit needs; a connection pool per
client and a timeout on every call). Any answer other than a success raises ``ApiError`` with the server's
status, message and field: a refused grade (409), a token that is wrong (401), a file the server could not
read (422), the database down (503); no answer at all (the server down, the connection lost) raises its subclass
``NoAnswer``, status 0.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import requests

PREFIX = "/api/v1"
FileLike = str | Path | tuple[str, bytes]


class ApiError(Exception):
    """The server did not do what was asked: ``status`` (HTTP), ``message`` (the server's words), ``field``, and
    ``retry_after``: the seconds its Retry-After header asked to wait (a 429), None without one."""

    def __init__(self, status: int, message: str, field: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {message}" + (f" (field {field!r})" if field else ""))
        self.status, self.message, self.field, self.retry_after = status, message, field, retry_after


class NoAnswer(ApiError):
    """No answer came: the server could not be reached, or the connection was lost or timed out (``status`` 0),
    after the retries a call safe to send again gets. A grade or a skip may have been stored: sent again with its
    token, it is stored once (docs/api.md). It escaped as requests' own exception, which a script's ``except
    ApiError`` did not catch (a new user's review)."""

    def __init__(self, url: str, error: Exception) -> None:
        super().__init__(0, f"no answer from {url} ({type(error).__name__}): is the app running there?")


RETRIED = (429, 503)
"""Answers a call safe to send again is sent again for (`Client.retries`): too many calls, the database busy."""
IDEMPOTENCY_KEY = "Idempotency-Key"
"""The header a create is sent with, a new UUID each (docs/api.md)."""

MAX_WAIT_S = 30.0
"""The longest wait before a call is sent again, whatever Retry-After asks."""


def _retry_after(response: requests.Response) -> float | None:
    """The Retry-After header's seconds (None without one, or in another form)."""
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None


def _repeatable(method: str, path: str, body: Any, headers: Mapping[str, str] | None = None) -> bool:
    """Whether a call may be sent again without doing twice what it asks: a read, an assignment made or taken
    back (PUT, DELETE), a grade, a skip or a flag (the
    server stores a press sent again on its token once, a flag with the same note once), a final grade (the same
    set again stands as it was), an undo naming its item, a create with its Idempotency-Key (the server answers
    it with the project it made)."""
    if method in ("GET", "PUT", "DELETE") or path.endswith(("/grades", "/skip", "/flag", "/review")):
        return True
    if path == "/projects" and IDEMPOTENCY_KEY in (headers or {}):
        return True
    return path.endswith("/undo") and isinstance(body, Mapping) and bool(body.get("item_id"))


def _field(response: requests.Response) -> str | None:
    """The error's ``field`` in an answer's JSON body, None where it has none."""
    try:
        return response.json()["error"]["field"]
    except (ValueError, KeyError, TypeError):
        return None


T = TypeVar("T")


def _of(cls: type[T], data: dict[str, Any]) -> T:
    """``cls`` (a dataclass) from a JSON object of the API, ignoring the fields this client does not know: a
    server newer than the client may send more."""
    return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class ProjectState:
    """A project's state: ``status`` new, preparing, ready or failed; counts once ready; ``settings``; once ready,
    ``warnings`` for admins and viewers (the Projects page's: a design no better than uniform sampling, ...), None
    where the answer does not give them (the projects' list, a grader: ``Client.project(id).status()`` does;
    an empty list there read as "nothing to worry about", a new user's review)."""

    id: int
    name: str
    status: str
    items: int | None = None
    graded_items: int | None = None
    grades: int | None = None
    error: str | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] | None = None


@dataclass(frozen=True)
class Criterion:
    """One question of a rubric project's card: its ``labels`` (its own scale's, in order), whether the card
    must answer it (``required``) and whether it is the ``primary`` one, which the reading follows."""

    name: str
    labels: tuple[str, ...]
    required: bool = True
    primary: bool = False
    guidelines: str = ""


@dataclass(frozen=True)
class Side:
    """One response on a comparison's side-by-side card: the side's neutral name (``Response 1``, ...) and the
    response's text; which model wrote it is never on the card."""

    side: str
    response: str


@dataclass(frozen=True)
class Card:
    """An item handed to the caller to grade, reserved for them; ``token`` names it in ``grade`` or ``skip``
    (``grade_rubric`` in a rubric project, whose ``criteria`` it lists; empty in a project that asks one
    question; ``grade_responses`` in a comparison, whose ``responses`` it lists side by side, ``response``
    then empty)."""

    item_id: str
    token: str
    position: int
    prompt: str
    response: str
    labels: tuple[str, ...]
    min_view_s: float = 0.0
    reference: str | None = None
    criteria: tuple[Criterion, ...] = ()
    responses: tuple[Side, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Outcome:
    """What a grade, skip or undo did: ``status`` saved, changed, unchanged (the grades sent were those stored),
    skipped or undone, and the server's words."""

    status: str
    message: str
    grade_id: int | None = None
    position: int | None = None
    item_id: str | None = None


@dataclass(frozen=True)
class Interval:
    """One interval of a reading: ``role`` fixed_n, anytime, rule (what the stopping rule reads) or now."""

    role: str
    name: str
    level: float
    low: float
    high: float


@dataclass(frozen=True)
class Reading:
    """The project read once: the estimate, every interval, the stopping decision, forecast and saving.

    ``estimate``: the estimate to report with ``interval("now")``: at the stop where the rule said done before
    the grades given now (cards held when it came), else that of every grade, ``all_grades``. ``se``: the
    standard error that goes with ``estimate``; None where that is the stop's and not every grade's (the stop's
    interval is ``interval("rule")``; ``all_grades_se`` goes with ``all_grades``)."""

    estimate: float | None
    se: float | None
    graded: int
    intervals: tuple[Interval, ...]
    done: bool
    stopping: str
    forecast: dict[str, Any]
    saving: dict[str, Any]
    criteria: tuple[dict[str, Any], ...] = ()
    """Each criterion's estimate and intervals (the one question's alone without a rubric)."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    all_grades: float | None = None
    """The estimate of every grade given (``estimate`` where no stop came before them)."""
    all_grades_se: float | None = None
    """The standard error of ``all_grades``."""
    review: dict[str, Any] = field(default_factory=dict)
    """``waiting_items`` (items waiting for a reviewer's final grade: the figures are provisional until they are
    settled), ``validated`` (the estimate corrected on the random reviewed sample, as the dashboard shows it;
    None where the project grades no item twice and audits none), ``disagreements`` and
    ``disagreements_settled`` (the double-graded items whose grades disagree, and those a reviewer settled)."""

    def interval(self, role: str = "now") -> Interval | None:
        """The interval of that role (default: the one to report if grading stopped now); None where the reading has
        none of it yet; ValueError for a role no reading has (one of INTERVAL_ROLES)."""
        if role not in INTERVAL_ROLES:
            raise ValueError(f"no interval role {role!r}: use one of {', '.join(INTERVAL_ROLES)}")
        return next((i for i in self.intervals if i.role == role), None)


INTERVAL_ROLES = ("fixed_n", "anytime", "rule", "now")
"""The roles of a reading's intervals (docs/api.md, *Reading*)."""


def reading_of(data: dict[str, Any]) -> Reading:
    """GET reading's body as a Reading. Its ``estimate.se`` is every grade's: it goes with ``estimate.reported``
    only where that is every grade's too (``reported_when`` empty); a stop's estimate was paired with it."""
    estimate = data["estimate"]
    return Reading(
        estimate=estimate["reported"],
        se=None if estimate["reported_when"] else estimate["se"],
        graded=data["counts"]["graded"],
        intervals=tuple(_of(Interval, i) for i in data["intervals"]),
        done=data["stopping"]["done"],
        stopping=data["stopping"]["words"],
        forecast=data["forecast"],
        saving=data["saving"],
        criteria=tuple(data["criteria"]),
        raw=data,
        all_grades=estimate["value"],
        all_grades_se=estimate["se"],
        review=data.get("review", {}),
    )


class Client:
    """The API of the ActiveGrade app at ``url`` (e.g. http://127.0.0.1:8501), acting as ``token``'s account."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 60.0,
        session: requests.Session | None = None,
        retries: int = 2,
    ) -> None:
        """``url`` the app's own (the API's prefix, /api/v1, is added to every call, and taken off ``url`` where
        it ends with it); ``timeout`` seconds per call; ``session`` a requests.Session to send through;
        ``retries``: how many times a call safe to repeat (`_repeatable`) is sent again after a 429 or a 503,
        after the wait its Retry-After asks or 0.5, 1, 2 ... s (the docs said "send it again", and every
        integrator wrote that loop: an integrator's review), or after a connection lost or timed out."""
        self.url = url.rstrip("/").removesuffix(PREFIX)
        self.timeout = timeout
        self.retries = retries
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One call to ``PREFIX + path``, sent again as ``retries`` says; ApiError for any answer but a success."""
        repeatable = _repeatable(method, path, kwargs.get("json"), kwargs.get("headers"))
        for attempt in range(self.retries + 1):
            try:
                response = self.session.request(method, self.url + PREFIX + path, timeout=self.timeout, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:  # the answer lost: sent again if safe
                if not repeatable or attempt == self.retries:
                    raise NoAnswer(self.url, exc) from exc
                time.sleep(min(0.5 * 2**attempt, MAX_WAIT_S))
                continue
            if response.status_code not in RETRIED or not repeatable or attempt == self.retries:
                break
            if _field(response) == "Authorization":  # wrong tokens' back-off: sent again, each counted again
                break
            time.sleep(min(_retry_after(response) or 0.5 * 2**attempt, MAX_WAIT_S))
        if response.status_code >= 400:
            wait = _retry_after(response)
            try:
                error = response.json()["error"]
                raise ApiError(response.status_code, error["message"], error.get("field"), wait)
            except (ValueError, KeyError, TypeError):
                raise ApiError(response.status_code, response.text[:500] or response.reason, None, wait) from None
        return response

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """The JSON of a successful call; ApiError where the answer is none (an address that is no ActiveGrade app)."""
        response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("content-type", "no content type")
            raise ApiError(
                response.status_code,
                f"{response.url} answered {kind}, not the API's JSON: is {self.url} the app's address?",
            ) from None

    def me(self) -> dict[str, str]:
        """The token's account: name and role."""
        return self._json("GET", "/me")

    def projects(self) -> list[ProjectState]:
        """The projects the account may see."""
        return [_of(ProjectState, p) for p in self._json("GET", "/projects")["projects"]]

    def project(self, project_id: int) -> Project:
        """One project, to read and grade."""
        return Project(self, int(project_id))

    def create_project(
        self,
        name: str,
        pool: FileLike,
        samples: FileLike | None = None,
        *,
        idempotency_key: str | None = None,
        **settings: Any,
    ) -> Project:
        """A new project from a pool (and samples) file, path or (name, bytes); ``settings``: ProjectSettings'
        fields (n_strata, scale, target_half_width, ...). It prepares in the background: ``wait_ready()``. Sent
        with an Idempotency-Key (``idempotency_key``, or a new UUID), so a create whose answer was lost is sent
        again and makes one project; pass the same key to a create of your own sent again later."""
        files = {"pool": _file(pool)} | ({"samples": _file(samples)} if samples is not None else {})
        data = {"settings": json.dumps({"name": name, **settings})}
        headers = {IDEMPOTENCY_KEY: idempotency_key or str(uuid.uuid4())}
        return self.project(self._json("POST", "/projects", files=files, data=data, headers=headers)["id"])


class Project:
    """A project of the client's server: ``status()``, ``next_item()``, ``grade()``, ``reading()``, exports."""

    def __init__(self, client: Client, project_id: int) -> None:
        self.client, self.id = client, project_id
        self._path = f"/projects/{project_id}"
        self.last_next: dict[str, Any] | None = None
        """The last ``next`` answer: ``reason``, ``done`` and ``retry_after_s`` beside ``item``."""

    def __repr__(self) -> str:
        return f"Project({self.id})"

    def status(self) -> ProjectState:
        """Its state and settings."""
        return _of(ProjectState, self.client._json("GET", self._path))

    def wait_ready(self, timeout: float = 600.0, every: float = 0.5) -> Project:
        """Wait until its preparation is done; ApiError (status 409) if it failed or its stored settings cannot be
        read (``unreadable``: it polled until the timeout), TimeoutError past ``timeout``."""
        deadline = time.monotonic() + timeout
        while (state := self.status()).status != "ready":
            if state.status in ("failed", "unreadable"):
                what = "the preparation failed" if state.status == "failed" else "its stored settings cannot be read"
                raise ApiError(409, f"{what}: {state.error}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"project {self.id} is still {state.status} after {timeout:.0f} s")
            time.sleep(every)
        return self

    def reading(self) -> Reading:
        """Estimate, intervals, stopping decision, forecast and saving (admins and viewers)."""
        return reading_of(self.client._json("GET", self._path + "/reading"))

    def items(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """A page of the prepared items (admins and viewers); `all_items` reads every page."""
        return self._page("/items", offset, limit)["items"]

    def all_items(self, page: int = 100) -> Iterator[dict[str, Any]]:
        """Every prepared item, in position order, read ``page`` at a time until the pool's ``total``."""
        yield from self._every("/items", page)

    def _page(self, route: str, offset: int, limit: int) -> dict[str, Any]:
        """One page of a paged route: its ``items`` and the ``total`` there are."""
        return self.client._json("GET", self._path + route, params={"offset": offset, "limit": limit})

    def _every(self, route: str, page: int) -> Iterator[dict[str, Any]]:
        """Every item of a paged route, ``page`` at a time until its ``total``."""
        offset, total = 0, 1
        while offset < total:
            answer = self._page(route, offset, page)
            total = answer["total"]
            yield from answer["items"]
            offset += page

    def next_item(self, *, wait: float = 0.0) -> Card | None:
        """The caller's next item, reserved for them (the same one until graded or skipped); None when nothing
        is left for them. ``wait``: seconds to keep asking while other graders hold the items left (the answer's
        ``retry_after_s``: their holds lapse unless graded), so that None means grading is over, or the wait ran
        out; ``last_next`` keeps the last answer's ``reason``, ``done`` and ``retry_after_s``."""
        deadline = time.monotonic() + wait
        while True:
            answer = self.client._json("GET", self._path + "/next")
            self.last_next = answer
            item, retry = answer["item"], answer.get("retry_after_s")
            if item is not None or answer.get("done", True) or retry is None:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(float(retry), left))
        return None if item is None else _card(item)

    def earlier_card(self, item_id: str) -> Card:
        """A card of an item the caller graded, to change their grade (the Grade page's B): grading it answers
        ``changed``; its ``raw["previous"]`` holds the press stored (``labels``, ``comment``)."""
        return _card(self.client._json("GET", self._path + "/next", params={"item_id": item_id})["item"])

    def grade(self, card: Card, label: str, *, comment: str = "", target: str = "", criterion: str = "") -> Outcome:
        """Grade the card's item with ``label`` (one of ``card.labels``), in a project that asks one question;
        ApiError 409 when refused."""
        return self._grade(card, {"label": label, "target": target, "criterion": criterion}, comment)

    def grade_rubric(self, card: Card, labels: Mapping[str, str], *, comment: str = "") -> Outcome:
        """Grade every criterion of a rubric project's card at once, ``labels`` criterion -> one of its labels
        (``card.criteria``; an optional criterion may be left out): one grade per criterion, stored together
        under the card's one token. ApiError 409 when refused (a required criterion unanswered, a label not on
        its criterion's scale, the token spent), 422 in a project that asks one question. For example::

            card = project.next_item()
            project.grade_rubric(card, {"correct": "Correct", "helpful": "4"}, comment="terse")
        """
        return self._grade(card, {"labels": dict(labels)}, comment)

    def grade_responses(self, card: Card, labels: Mapping[str, str] | Sequence[str], *, comment: str = "") -> Outcome:
        """Grade every response of a comparison's side-by-side card at once: ``labels`` side -> one of
        ``card.labels`` (``{"Response 1": "Correct", "Response 2": "Incorrect"}``), or a sequence of labels in
        the card's side order. One grade per response, stored together under the card's one token, each with the
        model that wrote it (the server knows which; the card does not say). ApiError 409 when refused (a
        response left ungraded, a label not on the scale, the token spent), 422 in a project of one model."""
        if not isinstance(labels, Mapping):
            labels = list(labels)
            if len(labels) != len(card.responses):
                raise ValueError(
                    f"{len(labels)} labels for a card of {len(card.responses)} responses: give one per response, in "
                    "the card's side order, or a mapping side -> label"
                )
            labels = {side.side: label for side, label in zip(card.responses, labels)}
        return self._grade(card, {"labels": dict(labels)}, comment)

    def _grade(self, card: Card, answer: dict[str, Any], comment: str) -> Outcome:
        """POST grades: the card's item and token, ``answer`` (``label`` and its key, or ``labels``), ``comment``."""
        body = {"item_id": card.item_id, "token": card.token, **answer, "comment": comment}
        return _of(Outcome, self.client._json("POST", self._path + "/grades", json=body))

    def skip(self, card: Card) -> Outcome:
        """Pass on the card's item: it goes back to the queue."""
        body = {"item_id": card.item_id, "token": card.token}
        return _of(Outcome, self.client._json("POST", self._path + "/skip", json=body))

    def flag(self, card: Card, note: str = "") -> Outcome:
        """Send the card's item to a reviewer with ``note`` (the Grade page's F): the item stays the caller's to
        grade or skip, and a card they graded may be flagged after. Sent again with the same note, it raises one
        flag. ApiError 409 when the card is no longer the caller's (skipped, or the token expired)."""
        body = {"item_id": card.item_id, "token": card.token, "note": note}
        return _of(Outcome, self.client._json("POST", self._path + "/flag", json=body))

    def members(self) -> list[dict[str, Any]]:
        """The accounts assigned to the project: name, role, active (admins)."""
        return self.client._json("GET", self._path + "/members")["members"]

    def assign(self, name: str) -> str:
        """Assign the account ``name`` to the project (admins); "assigned", or "unchanged" where it was."""
        return self.client._json("PUT", f"{self._path}/members/{quote(name, safe='')}")["status"]

    def unassign(self, name: str) -> str:
        """Take the account ``name`` off the project (admins); "unassigned", or "unchanged" where it was not."""
        return self.client._json("DELETE", f"{self._path}/members/{quote(name, safe='')}")["status"]

    def review_queue(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """A page of the items waiting for a reviewer's final grade, each with its reasons, the parts its grades
        disagree on and those settled, its grades and flags (reviewers and admins); `all_review_items` reads
        every page."""
        return self._page("/review", offset, limit)["items"]

    def all_review_items(self, page: int = 100) -> Iterator[dict[str, Any]]:
        """Every item waiting for a reviewer's final grade, read ``page`` at a time until the queue's ``total``."""
        yield from self._every("/review", page)

    def settle(
        self, item_id: str, label: str | None = None, *, labels: Mapping[str, str] | None = None, note: str = ""
    ) -> Outcome:
        """Set the item's final grade: ``label`` in a project that asks one question, ``labels`` by criterion in a
        rubric project or by side ("Response 1", ...) in a comparison; ``note`` the reviewer's."""
        answer = {"label": label} if labels is None else {"labels": dict(labels)}
        body = {"item_id": item_id, **answer, "note": note}
        return _of(Outcome, self.client._json("POST", self._path + "/review", json=body))

    def undo(self, item_id: str | None = None) -> Outcome:
        """Take back the caller's last action: a skip (the item is theirs again), else their last grade (where it
        changed an earlier grade of theirs, that one stands again); each call reaches one action further back.
        ``item_id``: only where that last action is on this item (ApiError 409 otherwise), so a call sent again
        after a lost answer undoes nothing more."""
        body = {} if item_id is None else {"item_id": item_id}
        return _of(Outcome, self.client._json("POST", self._path + "/undo", json=body))

    def export(
        self,
        format: str = "csv",
        *,
        texts: bool = False,
        out: str | Path | None = None,
        task: str | None = None,
        model: str | None = None,
    ) -> bytes:
        """The grades (csv, jsonl, parquet) or another export (inspect, lm-eval, label-studio, argilla) as
        bytes, the same as `activegrade export`; written to ``out`` too when given. ``task`` and ``model`` name
        the lm-eval results' task and model, as `activegrade export --task --model` does."""
        params = {"format": format, "texts": int(texts)} | {
            k: v for k, v in (("task", task), ("model", model)) if v is not None
        }
        data = self.client.request("GET", self._path + "/export", params=params).content
        if out is not None:
            Path(out).write_bytes(data)
        return data

    def report(self, format: str = "json") -> dict[str, Any] | str:
        """The report, the same as `activegrade report`: a dict for json, the text for md and html."""
        response = self.client.request("GET", self._path + "/report", params={"format": format})
        return response.json() if format == "json" else response.text


def _card(item: dict[str, Any]) -> Card:
    """A card of GET next's answer."""
    return Card(
        item_id=item["item_id"],
        token=item["token"],
        position=item["position"],
        prompt=item.get("prompt") or "",
        response=item.get("response") or "",
        labels=tuple(label["label"] for label in item["labels"]),
        min_view_s=float(item.get("min_view_s") or 0.0),
        reference=item.get("reference"),
        criteria=tuple(
            Criterion(
                name=c["name"],
                labels=tuple(label["label"] for label in c["labels"]),
                required=c["required"],
                primary=c["primary"],
                guidelines=c.get("guidelines") or "",
            )
            for c in item.get("criteria") or ()
        ),
        responses=tuple(Side(r["side"], r.get("response") or "") for r in item.get("responses") or ()),
        raw=item,
    )


def _file(source: FileLike) -> tuple[str, bytes]:
    if isinstance(source, tuple):
        return source
    path = Path(source)
    return path.name, path.read_bytes()
