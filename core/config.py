"""The deployment's configuration: every ``ACTIVEGRADE_*`` environment variable, read here and nowhere else.

``config()`` parses the process environment into one frozen, typed ``Config``
and refuses a bad value with an InputError naming the variable and the fix.
The result is cached per set of ``ACTIVEGRADE_*`` values, so it is parsed once
and a test that changes a variable (``monkeypatch.setenv``) sees the change.
docs/configuration.md documents each variable; tests/test_config.py
fails on a module outside this one that reads an ``ACTIVEGRADE_`` variable.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.errors import InputError

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

PREFIX = "ACTIVEGRADE_"
DB_URL = "ACTIVEGRADE_DB_URL"
OPEN_DEMO = "ACTIVEGRADE_OPEN_DEMO"
SESSION_IDLE_HOURS = "ACTIVEGRADE_SESSION_IDLE_HOURS"
SESSION_MAX_DAYS = "ACTIVEGRADE_SESSION_MAX_DAYS"
DEMO_DIR = "ACTIVEGRADE_DEMO_DIR"
CACHE_DIR = "ACTIVEGRADE_CACHE_DIR"
APP_WORKER = "ACTIVEGRADE_APP_WORKER"
CHUNK_ITEMS = "ACTIVEGRADE_CHUNK_ITEMS"
TORCH_THREADS = "ACTIVEGRADE_TORCH_THREADS"
LOG_LEVEL = "ACTIVEGRADE_LOG_LEVEL"
SAMPLING_SERVERS = "ACTIVEGRADE_SAMPLING_SERVERS"
TRUSTED_PROXIES = "ACTIVEGRADE_TRUSTED_PROXIES"
HUB_DOWNLOADS = "ACTIVEGRADE_HUB_DOWNLOADS"
VARIABLES = (
    DB_URL,
    OPEN_DEMO,
    SESSION_IDLE_HOURS,
    SESSION_MAX_DAYS,
    DEMO_DIR,
    CACHE_DIR,
    APP_WORKER,
    CHUNK_ITEMS,
    TORCH_THREADS,
    LOG_LEVEL,
    SAMPLING_SERVERS,
    TRUSTED_PROXIES,
    HUB_DOWNLOADS,
)
"""The variables the Python code reads (the shell scripts read a few more; docs/configuration.md lists them all)."""


@dataclass(frozen=True)
class SamplingServer:
    """An OpenAI-compatible server the app may ask for surrogate answers (``$ACTIVEGRADE_SAMPLING_SERVERS``)."""

    url: str
    """Its base URL (…/v1), exactly as the client is given it: http(s), a host, no user, password, query or fragment."""
    key_env: str | None = None
    """The environment variable of the app's process holding its API key; None: the server needs none."""


@dataclass(frozen=True)
class Config:
    """The configuration; each field's default is what an unset variable means.

    ``$ACTIVEGRADE_SAMPLING_SERVERS`` lists the only servers the app (its projects' preparation jobs) may
    send requests to, each as ``URL`` or ``URL=VARIABLE``, separated by commas, e.g.
    ``http://127.0.0.1:8000/v1,https://api.openai.com/v1=OPENAI_API_KEY``: the server's base URL and the
    name of the environment variable holding its key (none: the server needs no key). Admins choose among
    these; they never type a URL or a variable name. Unset: no server (the command line's
    ``sample --api-base``, run by the operator, is not bound by it).
    """

    db_url: str | None = None
    """SQLAlchemy URL of the database; None: a SQLite file under ./.activegrade/ (core.store.engine)."""
    open_demo: bool = False
    """Open demo mode (no sign-in, everyone an admin): on only when the variable is exactly ``1``."""
    session_idle: timedelta = timedelta(hours=12)
    """A sign-in session unused for this long ends."""
    session_max: timedelta = timedelta(days=7)
    """A sign-in session ends this long after it began, however much it is used."""
    demo_dir: Path | None = None
    """Folder of the demo pool; None: data/demo/ of the checkout."""
    cache_dir: Path | None = None
    """Cache of clustering results; None: ~/.cache/activegrade."""
    app_worker: bool = True
    """The app runs a worker of its own, kept warm (core.jobs.background); ``0`` when workers run apart."""
    chunk_items: int = 20_000
    """Pool rows per preparation chunk (core.jobs.preparation_job): larger pools are prepared in chunks."""
    torch_threads: int | None = None
    """CPU threads the process's models use (torch.set_num_threads, core.surrogate.semantic.base.resolve_device);
    None: torch's default, one per core. Workers that share a machine's cores with each other or with other
    busy processes each take their share (benchmarks/scale.md)."""
    log_level: str = "INFO"
    """The least severe log records written (core.logs): DEBUG, INFO, WARNING, ERROR or CRITICAL."""
    sampling_servers: tuple[SamplingServer, ...] = ()
    """The servers projects may sample surrogate answers from (see the class docstring); () allows none."""
    trusted_proxies: tuple[IPNetwork, ...] = ()
    """Reverse proxies (addresses or networks, comma-separated, e.g. ``127.0.0.1,10.0.0.0/8``) whose
    ``X-Forwarded-For`` header names the client (core.services.auth.client_address); () trusts none, and the
    client address is the connection's own."""
    hub_downloads: bool = False
    """Whether a worker may download the models a project's settings name from the Hugging Face hub (``1``).
    Off: models load only from this machine's Hugging Face cache or a local folder (`hub_environment`), so
    an admin's model name cannot make the server fetch from the network, as the sampling servers'
    list keeps the surrogate's requests to the operator's servers."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Config:
        """The configuration ``environ`` describes; InputError for a bad value. A variable unset (or blank)
        is left out, so that its field's default, written once above, applies."""
        text = {name: environ.get(name, "").strip() for name in VARIABLES}
        given = {name: value for name, value in text.items() if value}
        parsers: dict[str, tuple[str, Callable[[str, str], Any]]] = {
            DB_URL: ("db_url", lambda name, value: value),
            OPEN_DEMO: ("open_demo", _switch),
            SESSION_IDLE_HOURS: ("session_idle", lambda name, value: _duration(name, value, hours=1)),
            SESSION_MAX_DAYS: ("session_max", lambda name, value: _duration(name, value, days=1)),
            DEMO_DIR: ("demo_dir", _path),
            CACHE_DIR: ("cache_dir", _path),
            APP_WORKER: ("app_worker", _switch),
            CHUNK_ITEMS: ("chunk_items", _whole),
            TORCH_THREADS: ("torch_threads", _whole),
            LOG_LEVEL: ("log_level", _log_level),
            SAMPLING_SERVERS: ("sampling_servers", _sampling_servers),
            TRUSTED_PROXIES: ("trusted_proxies", _networks),
            HUB_DOWNLOADS: ("hub_downloads", _switch),
        }
        return cls(**{parsers[name][0]: parsers[name][1](name, value) for name, value in given.items()})


def hub_environment(configuration: Config) -> dict[str, str]:
    """The environment a worker runs its jobs in, set before any model library is imported: the Hugging Face
    libraries' own offline switches, unless ``hub_downloads`` (read once, when huggingface_hub is imported)."""
    return {} if configuration.hub_downloads else {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _switch(name: str, text: str) -> bool:
    """``1`` on, ``0`` off; anything else is refused rather than guessed (``true`` is not ``1``)."""
    if text == "0":
        return False
    if text == "1":
        return True
    raise InputError(f"${name} is {text!r}", fix="set it to 1 (on) or 0 (off), or unset it")


def _path(name: str, text: str) -> Path:
    return Path(text).expanduser()


def _positive(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise InputError(f"${name} is {text!r}, not a positive number", fix="set it to a number > 0 or unset it")
    return value


def _duration(name: str, text: str, **unit: float) -> timedelta:
    """A positive number of ``unit`` (hours=1, days=1) as a timedelta; one too long for a timedelta (1e308
    hours stopped the start with an OverflowError's traceback: a security review) is refused too."""
    try:
        return timedelta(**{key: _positive(name, text) * size for key, size in unit.items()})
    except OverflowError:
        raise InputError(
            f"${name} is {text!r}, too long a time", fix="set it to a number of at most a few thousand, or unset it"
        ) from None


def _whole(name: str, text: str) -> int:
    """A whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"${name} is {text!r}, not a whole number of at least 1", fix="set it to e.g. 1, or unset it")
    return int(text)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(name: str, text: str) -> str:
    """One of LOG_LEVELS, in any case."""
    if text.upper() not in LOG_LEVELS:
        raise InputError(f"${name} is {text!r}", fix=f"set it to one of {', '.join(LOG_LEVELS)}, or unset it")
    return text.upper()


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _sampling_servers(name: str, text: str) -> tuple[SamplingServer, ...]:
    """``URL[=VARIABLE]`` entries separated by commas (see Config); InputError naming a bad one."""
    fix = "write e.g. http://127.0.0.1:8000/v1,https://api.openai.com/v1=OPENAI_API_KEY"
    servers: list[SamplingServer] = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        url, _, key_env = (part.strip() for part in entry.partition("="))
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(f"${SAMPLING_SERVERS} lists {url!r}, not an http(s) URL with a host", fix=fix)
        if parts.username or parts.password or parts.query or parts.fragment:
            raise InputError(
                f"${SAMPLING_SERVERS} lists a URL with a user, password, query or fragment",
                fix="give the bare base URL and the key in the variable named after '='",
            )
        if key_env and (not _VARIABLE_NAME.fullmatch(key_env) or key_env.upper().startswith(PREFIX)):
            raise InputError(
                f"${SAMPLING_SERVERS} names {key_env!r} for the key of {url}, not a variable name",
                fix="name a variable such as OPENAI_API_KEY (letters, digits, _), not one of the app's ACTIVEGRADE_ ones",
            )
        if any(server.url == url for server in servers):
            raise InputError(f"${SAMPLING_SERVERS} lists {url} twice", fix="list each server once")
        servers.append(SamplingServer(url, key_env or None))
    return tuple(servers)


def _networks(name: str, text: str) -> tuple[IPNetwork, ...]:
    """Comma-separated IP addresses or networks (``ipaddress.ip_network``, host bits must be zero)."""
    networks = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        try:
            networks.append(ipaddress.ip_network(entry))
        except ValueError:
            raise InputError(
                f"${name} lists {entry!r}, not an IP address or network", fix="write e.g. 127.0.0.1,10.0.0.0/8"
            ) from None
    return tuple(networks)


@functools.lru_cache(maxsize=8)
def _parsed(items: frozenset[tuple[str, str]]) -> Config:
    return Config.from_environ(dict(items))


def config() -> Config:
    """This process's configuration, from its environment (parsed once per set of ACTIVEGRADE_* values)."""
    return _parsed(frozenset((k, v) for k, v in os.environ.items() if k.startswith(PREFIX)))
