"""What every API request goes through: the body read within a size limit, the bearer token resolved to
its account (in the open demo, the demo's user for clients on this machine: open_demo_user), the handler run
in a worker thread, and any failure turned into a JSON error with a status.

Errors: ``{"error": {"status": 422, "message": "...", "field": "label"}}``, never a traceback. The status
says whose move it is: 401 no or a wrong token, 403 the account may not, 404 no such project (or not one
the account is assigned to: the API does not tell who can see what), 409 refused by the project's state
(an item another grader holds, a project not ready), 413 a body over its limit, 422 malformed input,
429 too many wrong tokens, 503 the database failed (nothing stored; send it again).
"""

from __future__ import annotations

import difflib
import json
import logging
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from sqlalchemy.exc import SQLAlchemyError
from starlette.datastructures import Headers, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from core.errors import InputError, NotSaved, NotThisKind, NotYet, Taken
from core.services import auth, sessions, tokens
from core.services.outcome import Refused
from core.store import Store

logger = logging.getLogger(__name__)

MAX_JSON_BYTES = 1 << 20
"""A JSON body's limit (1 MiB): a grade with the longest comment is about 20 KB."""
MAX_UPLOAD_BYTES = 500 << 20
"""A project's uploads together (multipart), as the Projects page takes them (.streamlit/config.toml's
server.maxUploadSize, 500 MB; tests/test_api.py checks the two agree)."""
API_THREADS = 8
"""Worker threads that run the API's handlers at once (``in_thread``); requests beyond them wait their turn, first
come first served. Starlette's default pool (anyio's 40, shared with the rest of the server) let 40 handlers
contend for the interpreter's lock and SQLite's write lock: with 100 graders pressing 0.5 s after each card, a
handler's own wall time was about 140 ms, of which 5 ms its CPU, and the server spent 7.7 ms of CPU a grade;
with 8 threads, 47 ms and 6.6 ms (benchmarks/concurrent_graders.md). Handlers that wait (a claim waiting for
its batch, a write for its turn) wait on those threads, so there are more of them than cores."""
_api_threads = anyio.CapacityLimiter(API_THREADS)
DEMO_GRADER = "demo"
"""The name the open demo's API user grades under when the request names none (``?grader=NAME``)."""
DEMO_PARAMETER = "grader"
"""The query parameter naming the open demo's grader (`open_demo_user`), which every route takes in the open demo
and none with accounts (a token's account grades: ``?grader=carol`` with bob's token was ignored in silence)."""


class ApiError(Exception):
    """An answer other than success: ``status``, the ``message`` to a person, and the ``field`` at fault."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


def error_response(
    status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The JSON error every API route answers with (``{"error": {status, message, field}}``), with ``headers``
    (401 adds WWW-Authenticate: Bearer)."""
    headers = {**({"WWW-Authenticate": "Bearer"} if status == 401 else {}), **(headers or {})}
    return JSONResponse({"error": {"status": status, "message": message, "field": field}}, status, headers=headers)


@dataclass
class Call:
    """One request as a handler sees it: the store, the acting account, path and query parameters, the body."""

    store: Store
    user: auth.User
    path: Mapping[str, str]
    query: Mapping[str, str]
    body: Any = None
    """The parsed JSON (a dict) or the multipart form's fields and files (dict of str or (name, bytes))."""
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    """The request's headers (case-insensitive names)."""

    def text(self, name: str, *, default: str | None = None, limit: int | None = None) -> str:
        """Field ``name`` of the JSON body as a string (``default`` when absent or null: serialisers write an unset
        optional field as null, which read "the field 'comment' is missing": an integrator's review); 422
        otherwise."""
        body = self.body or {}
        value = body.get(name)
        if value is None and default is not None:
            return default
        if value is None:
            raise ApiError(422, f"the field {name!r} is {'null' if name in body else 'missing'}", name)
        if not isinstance(value, str):
            raise ApiError(422, f"the field {name!r} must be a string, not {json_kind(value)}", name)
        if limit is not None and len(value) > limit:
            raise ApiError(422, f"the field {name!r} has {len(value):,} characters, more than {limit:,}", name)
        return value

    def fields_of(self, request: Mapping[str, Any]) -> None:
        """422 naming the first field of the JSON body that the route's ``request`` schema does not list (a typo,
        "coment" or "shownms", dropped the comment or the viewing time without a word), with the field meant."""
        refuse_unknown("field", self.body or {}, list(request.get("properties", {})))

    def integer(self, name: str, *, default: int, low: int = 0, high: int | None = None) -> int:
        """Query parameter ``name`` as an integer in [low, high]; 422 otherwise."""
        raw = self.query.get(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ApiError(422, f"the parameter {name!r} must be an integer, not {raw!r}", name) from None
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ApiError(422, f"the parameter {name!r} must be {bound}, not {value}", name)
        return value

    def choice(self, name: str, options: list[str], default: str) -> str:
        """Query parameter ``name``, one of ``options``; 422 otherwise."""
        value = self.query.get(name, default)
        if value not in options:
            raise ApiError(422, f"the parameter {name!r} must be one of {', '.join(options)}, not {value!r}", name)
        return value


def refuse_unknown(kind: str, given: Iterable[str], known: list[str]) -> None:
    """422 naming the first of the ``given`` names (a body's fields, a request's query parameters) that is not
    ``known``, with the name meant where one is close ("did you mean 'format'?"), else the names taken."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        takes = f"; this request takes {', '.join(known)}" if known else f"; this request takes no {kind}"
        hint = f": did you mean {close[0]!r}?" if close else takes
        raise ApiError(422, f"unknown {kind} {unknown[0]!r}{hint}", unknown[0])


Handler = Callable[[Call], Response | dict[str, Any]]


class _TooLarge(Exception):
    pass


async def small_body(request: Request, limit: int) -> bytes | None:
    """The body of a request that takes a few bytes (a route outside the API: the sign-in cookie's handoff),
    read only up to ``limit`` bytes: None where it is longer (whatever Content-Length said) or the client left
    before sending it. Read whole, a body of any size was held in memory before anything was checked (an
    attacker's review: one unauthenticated POST of 1.5 GB took the server from 275 MB to 2.6 GB)."""
    declared = request.headers.get("content-length") or "0"
    if not declared.isdigit() or int(declared) > limit:
        return None
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return None
    except ClientDisconnect:
        return None
    return body


def _limited(receive: Receive, limit: int) -> Receive:
    """``receive`` that stops a body once it passes ``limit`` bytes (whatever Content-Length said)."""
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge
        return message

    return counted


def bearer(headers: Headers) -> str | None:
    """The token of ``Authorization: Bearer TOKEN``; None without one. Never the sign-in cookie."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words ("a number", "null"), for messages to API clients."""
    kinds = ((bool, "true or false"), (int | float, "a number"), (str, "a string"), (list, "an array"))
    return "null" if value is None else next((k for t, k in kinds if isinstance(value, t)), "an object")


def parse_json(raw: bytes | str, what: str, field: str | None = None) -> Any:
    """``raw`` parsed as JSON; 422 naming ``what`` (and ``field``) where it is not JSON, nests so deeply that the
    parser gives up (a RecursionError), writes an integer of more digits than Python converts (a ValueError), or
    holds an unpaired UTF-16 surrogate (``"\\ud800"``, no character: the database refused to store it). Each of
    these answered 500 (a security review)."""
    try:
        value = json.loads(raw)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate is no text to store
        return value
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ApiError(422, f"{what} is not valid JSON{where}: {getattr(exc, 'msg', str(exc))}", field) from None
    except RecursionError:
        raise ApiError(422, f"{what} nests its arrays or objects too deeply to read", field) from None
    except UnicodeEncodeError:
        raise ApiError(
            422, f"{what} holds an unpaired UTF-16 surrogate (\\ud800 to \\udfff alone), no character", field
        ) from None
    except ValueError:  # the int conversion limit (sys.get_int_max_str_digits)
        digits = f"{sys.get_int_max_str_digits():,}"
        raise ApiError(422, f"{what} holds a number of more than {digits} digits, too long to read", field) from None


def _json(raw: bytes, content_type: str) -> dict[str, Any]:
    """A JSON body (a dict; {} when empty); ApiError for anything else."""
    if not raw.strip():
        return {}
    if content_type not in ("application/json", ""):
        raise ApiError(415, f"the body must be JSON (Content-Type: application/json), not {content_type}")
    parsed = parse_json(raw, "the body")
    if not isinstance(parsed, dict):
        raise ApiError(422, f"the body must be a JSON object, not {json_kind(parsed)}")
    return parsed


MAX_FILES, MAX_FIELDS = 4, 16
"""The most files and other fields one multipart request may carry (a project's pool and samples, its settings)."""


async def _form(request: Request) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """A multipart form's fields and files; ApiError for any other body."""
    content_type = _content_type(request.headers)
    if content_type != "multipart/form-data":
        raise ApiError(422, f"the body must be multipart/form-data (files and fields), not {content_type or 'empty'}")
    try:
        form = await request.form(max_files=MAX_FILES, max_fields=MAX_FIELDS)
    except MultiPartException as exc:
        raise ApiError(422, f"the multipart body is malformed: {exc.message}") from None
    except HTTPException as exc:  # Starlette's answer to too many parts ("Too many files"): the client's fault
        raise ApiError(
            422, f"{exc.detail}: send at most {MAX_FILES} files and {MAX_FIELDS} fields in one request"
        ) from None
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    for name, value in form.multi_items():
        if name in files or name in fields:
            await form.close()
            raise ApiError(422, f"the part {name!r} is sent twice: send each part once", name)
        if isinstance(value, UploadFile):
            files[name] = (value.filename or name, await value.read())
        else:
            fields[name] = value
    await form.close()
    return fields, files


def _content_type(headers: Headers) -> str:
    """The request's media type, lower case, without its parameters ("" when none is sent)."""
    return headers.get("content-type", "").split(";")[0].strip().lower()


SAME_SITE_FETCHES = frozenset({"same-origin", "none"})
"""The ``Sec-Fetch-Site`` values of a request the app's own page (or the user, typing an address) made."""


SESSION_COOKIE = "activegrade_session"
"""The sign-in cookie's name over plain http; over https it is `session_cookie`'s ``__Host-`` one."""


def https(scheme: str, headers: Headers | Mapping[str, str]) -> bool:
    """Whether the page was served over https, here (``scheme``) or by a TLS proxy (X-Forwarded-Proto; a forged
    one only changes the sender's own cookie, which their browser then keeps from plain http)."""
    return scheme == "https" or (headers.get("x-forwarded-proto") or "").lower() == "https"


def session_cookie(secure: bool) -> str:
    """The sign-in cookie's name: over https (``secure``) with the ``__Host-`` prefix, which a browser takes only
    from a page of this very host over https, Secure, for the path / (RFC 6265bis, 4.1.3.2), so a page on another
    port of the host, which cookies do not tell apart, cannot plant a session of its choosing in a visitor's
    browser (a security review signed a visitor in as the attacker so over http, where no prefix can help)."""
    return f"__Host-{SESSION_COOKIE}" if secure else SESSION_COOKIE


def session_token(request: Request) -> str | None:
    """The token of the sign-in cookie the request carries, under the name its scheme gives (`session_cookie`)."""
    return request.cookies.get(session_cookie(https(request.url.scheme, request.headers)))


def same_origin(headers: Headers) -> bool:
    """Whether the request came from the host and port it was sent to: its ``Origin``, when a browser sent
    one, names them, and its ``Sec-Fetch-Site``, when a browser sent one, is same-origin (or none: an address
    typed or bookmarked). A browser sends no Origin with a GET, so an ``<img>`` on a page of another site, or
    of another port of this host (the same site, to SameSite cookies), made GETs that reserve an item or
    export a project (attacker review); its Sec-Fetch-Site (cross-site, same-site) gives it away."""
    fetch = headers.get("sec-fetch-site")
    if fetch is not None and fetch.lower() not in SAME_SITE_FETCHES:
        return False
    origin = headers.get("origin")
    if origin is None:
        return True  # not sent by a browser page (curl, a health check): nothing cross-site about it
    return bool(origin != "null" and urlsplit(origin).netloc.lower() == headers.get("host", "").lower())


class Endpoint:
    """An ASGI endpoint running ``handler`` for one declared route (core.api.endpoints.ENDPOINTS).

    ``cookie``: False for the API (a bearer token, never a cookie); True for the routes of the app's own pages
    (core.api.fast), which take the signed-in session's cookie (`session_token`) instead, from the same origin
    only. In the open demo both act as its user, for clients on this machine only (open_demo_user)."""

    def __init__(
        self,
        handler: Handler,
        body: str | None,
        store: Callable[[], Store],
        public: bool = False,
        cookie: bool = False,
        uploader: str | None = None,
        query: Collection[str] | None = None,
    ) -> None:
        """``uploader``: the action (core.services.auth) a caller must be allowed before a multipart body is read;
        ``query``: the query parameters the route takes, besides the open demo's ``grader`` (another is a 422: a
        typo, ``?fmt=jsonl``, gave the default format's file without a word; None: not checked)."""
        self.handler, self.body, self.store, self.public, self.cookie = handler, body, store, public, cookie
        self.uploader = uploader
        self.query = None if query is None else list(query)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        limit = MAX_UPLOAD_BYTES if self.body == "multipart" else MAX_JSON_BYTES
        request = Request(scope, _limited(receive, limit))
        try:
            response = await self._answer(request, limit)
        except _TooLarge:
            response = error_response(413, f"the body is larger than the {_size(limit)} this request takes")
        # the server's own time on the request (W3C Server Timing), for callers measuring the API's latency
        response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - start) * 1000:.2f}"
        await response(scope, receive, send)

    async def _answer(self, request: Request, limit: int) -> Response:
        try:
            declared = int(request.headers.get("content-length") or 0)
        except ValueError:
            return error_response(422, "the Content-Length header is not a number")
        if declared > limit:
            return error_response(413, f"the body is larger than the {_size(limit)} this request takes")
        try:
            if self.query is not None:
                demo = {DEMO_PARAMETER} if auth.open_demo_enabled() else set()  # elsewhere it names no one
                refuse_unknown("parameter", set(request.query_params) - demo, self.query)
            store = self.store()
            if self.body == "multipart":  # an upload (up to MAX_UPLOAD_BYTES) is read once its sender may send it
                user = await in_thread(self._uploader, store, request)
                fields, files = await _form(request)
                call = Call(store, user, request.path_params, request.query_params, fields, files, request.headers)
                result = await in_thread(self.handler, call)
            else:  # a JSON body (at most MAX_JSON_BYTES) is read first: the caller and the handler in one thread hop
                raw = await request.body() if self.body == "json" else None
                result = await in_thread(self._run, store, request, raw)
        except _TooLarge:
            raise
        except ClientDisconnect:
            return Response(status_code=400)
        except ApiError as exc:
            return error_response(exc.status, exc.message, exc.field)
        except auth.SignInThrottled as exc:  # wrong tokens (core.services.tokens.resolve): the token is at fault
            message = f"{exc}: the token sent is wrong or revoked; check it"
            return error_response(429, message, "Authorization", headers={"Retry-After": str(exc.retry_after)})
        except auth.AccessDenied as exc:
            return error_response(403, str(exc))
        except (Refused, NotYet, NotThisKind, Taken) as exc:
            return error_response(409, str(exc), exc.field)
        except InputError as exc:
            return error_response(422, str(exc), exc.field)
        except (NotSaved, SQLAlchemyError, OSError) as exc:
            logger.warning("API %s %s: the database failed: %s", request.method, request.url.path, type(exc).__name__)
            return error_response(503, not_saved(exc))
        except Exception:  # noqa: BLE001 - a bug: logged with its traceback here, never sent to the client
            logger.exception("API %s %s failed", request.method, request.url.path)
            return error_response(500, "the server failed on this request; its log has the details")
        return result if isinstance(result, Response) else JSONResponse(result)

    def _run(self, store: Store, request: Request, raw: bytes | None) -> Response | dict[str, Any]:
        """The handler's answer to a request without an upload, its caller and its JSON body (``raw``, None when
        the route takes no body) checked first, in one worker thread, the request's reads on one connection
        (Store.shared_reads)."""
        with store.shared_reads():
            user = self._caller(store, request)
            body = None if raw is None else _json(raw, _content_type(request.headers))
            return self.handler(
                Call(store, user, request.path_params, request.query_params, body, headers=request.headers)
            )

    def _uploader(self, store: Store, request: Request) -> auth.User | None:
        """The request's user, once allowed the route's ``uploader`` action (403 otherwise): a grader's or a
        viewer's upload of hundreds of megabytes was read whole before its 403."""
        user = self._caller(store, request)
        if self.uploader is not None:
            auth.require(store, user, self.uploader)
        return user

    def _caller(self, store: Store, request: Request) -> auth.User | None:
        """The request's user (``_user``); None on a public route."""
        return None if self.public else self._user(store, request)

    def _user(self, store: Store, request: Request) -> auth.User:
        if auth.open_demo_enabled():
            return open_demo_user(store, request)
        if self.cookie:
            return session_user(store, request)
        token = bearer(request.headers)
        if token is None:
            raise ApiError(
                401,
                "no API token: send the header 'Authorization: Bearer <token>' (Team page or "
                "`activegrade tokens create USER`)",
            )
        address = auth.client_address(
            request.client.host if request.client else None, request.headers.get("x-forwarded-for")
        )
        try:
            user = tokens.resolve(store, token, address)
        except tokens.TokenExpired as exc:
            raise ApiError(401, f"{exc}: make a new one (Team page or `activegrade tokens create USER`)") from None
        if user is None:
            raise ApiError(
                401,
                "the API token is wrong, revoked, or its account is disabled: check it was copied whole, or make "
                "a new one (Team page or `activegrade tokens create USER`); an admin re-enables a disabled account",
            )
        return user


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` run in one of the API's API_THREADS worker threads."""
    return await anyio.to_thread.run_sync(function, *args, limiter=_api_threads)


def open_demo_user(store: Store, request: Request) -> auth.User:
    """The open demo's user (core.services.auth.demo_user: an admin without an account, as on the app's pages)
    for a request from this machine, which the API and the fast grading page answer without a token or a
    session; a bearer token sent is not read (the open demo has no accounts). Named by the ``grader`` query
    parameter, as the app's ``?grader=``; DEMO_GRADER without one; 422 for one that is not a name
    (core.services.auth.check_grader_name).

    403, saying why and what to set, for a client elsewhere or behind a reverse proxy unless
    ``$ACTIVEGRADE_TRUSTED_PROXIES`` names who may reach the demo (auth.check_open_demo_request, the rule the
    app's pages follow), for a page of another origin (any site open in this machine's browser could
    otherwise act as the demo's admin), and on a database with accounts (auth.check_open_demo)."""
    try:
        auth.check_open_demo_request(request.headers, request.client.host if request.client else None)
        auth.check_open_demo(store)
    except (auth.AccessDenied, InputError) as exc:
        raise ApiError(403, str(exc)) from None
    if not same_origin(request.headers):
        raise ApiError(
            403, "the open demo answers pages of the app's own origin only (or scripts, which send no Origin)"
        )
    try:
        return auth.demo_user(request.query_params.get(DEMO_PARAMETER, "").strip() or DEMO_GRADER)
    except InputError as exc:
        raise ApiError(422, str(exc), DEMO_PARAMETER) from None


def session_user(store: Store, request: Request) -> auth.User:
    """The signed-in account of the sign-in cookie (`session_token`, core.services.sessions.resume), for a request
    from the app's own origin; 403 from another origin, 401 without a live session."""
    if not same_origin(request.headers):
        raise ApiError(403, "this route answers pages of the app's own origin only")
    user = sessions.resume(store, session_token(request))
    if user is None:
        raise ApiError(401, "you are signed out: sign in to the app again")
    return user


UPLOAD_ROUTE = "/_stcore/upload_file/"
"""Streamlit's own upload route: a PUT holds the file (up to server.maxUploadSize) in the server's memory for the
browser session that sent it, for as long as that session lives."""


def upload_refusal(store: Store, request: Request) -> str | None:
    """Why a PUT to Streamlit's upload route (UPLOAD_ROUTE) is refused; None where its sender may upload. The only
    upload on the app's pages is the Projects page's new project, so the sender must be signed in (the sign-in
    cookie, from the app's own origin) as an account that may create projects, or be the open demo's user
    (`open_demo_user`'s rule). Streamlit took a file from any session, the sign-in page's included, and kept it
    in memory: six PUTs of 50 MB with no account held 300 MB of the server's after the session closed (an
    attacker's review)."""
    if not auth.open_demo_enabled() and not same_origin(request.headers):
        return "uploads come from the app's own pages"
    refusal = "uploads are for a signed-in account that may create projects: sign in as one"
    return _page_user_refusal(store, request, auth.CREATE_PROJECT, refusal)


METRICS_ROUTE = "/_stcore/metrics"
"""Streamlit's own metrics route: live session counts, connects and cache counters named after the app's code."""


def metrics_refusal(store: Store, request: Request) -> str | None:
    """Why a request to Streamlit's metrics route (METRICS_ROUTE) is refused; None for an admin signed in on the
    app's pages or the open demo's user. It answered anyone without sign-in (an attacker's review)."""
    return _page_user_refusal(store, request, auth.VIEW_AUDIT, "the server's metrics are an admin's: sign in as one")


def _page_user_refusal(store: Store, request: Request, action: str, refusal: str) -> str | None:
    """None for the open demo's user (`open_demo_user`'s rule) or an account signed in on the app's pages (the
    sign-in cookie) that may do ``action``; else why not: the open demo's reason, or ``refusal``."""
    if auth.open_demo_enabled():
        try:
            open_demo_user(store, request)
        except ApiError as exc:
            return exc.message
        return None
    user = sessions.resume(store, session_token(request))
    return None if user is not None and auth.allowed(user.role, action) else refusal


def not_saved(exc: BaseException) -> str:
    """The message of a request the database did not take (nothing of it was stored)."""
    return f"not saved: the database failed ({type(exc).__name__}); send it again"


def _size(limit: int) -> str:
    return f"{limit / (1 << 20):,.0f} MiB"


class _Unrouted:
    """The ASGI app of `unrouted`'s routes (any method: a function endpoint takes the methods it lists)."""

    def __init__(self, declared: list[Route], hint: str) -> None:
        self.declared, self.hint = declared, hint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        allowed = sorted({m for r in self.declared if r.matches(scope)[0] != Match.NONE for m in r.methods or ()})
        if allowed:
            message = f"{request.url.path} takes {', '.join(allowed)}, not {request.method}"
            response = error_response(405, message, headers={"Allow": ", ".join(allowed)})
        else:
            response = error_response(404, f"no route {request.url.path}: {self.hint}")
        await response(scope, receive, send)


def unrouted(prefix: str, declared: list[Route], hint: str) -> list[Route]:
    """Routes for every request under ``prefix`` that none of ``declared`` takes, whatever its method: a JSON 405
    naming the methods the path takes (``Allow``), or a JSON 404 with ``hint``, as every API error is. Without
    them Streamlit's catch-all answered with its HTML page (200), or Starlette with a plain-text 405 (an API
    review; TRACE and other methods a list leaves out, a security review)."""
    app = _Unrouted(declared, hint)
    return [Route(prefix, app), Route(prefix + "/{rest:path}", app)]
