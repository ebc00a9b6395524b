"""core.config: every ACTIVEGRADE_* variable parsed and checked in one place, and read nowhere else."""

from __future__ import annotations

import ast
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from core import config
from core.config import Config
from core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for p in [
        *(ROOT / "core").rglob("*.py"),
        ROOT / "app.py",
        *(ROOT / "app_pages").glob("*.py"),
        *(ROOT / "ui").glob("*.py"),
    ]
    if p != ROOT / "core" / "config.py"
)


def test_defaults_when_nothing_is_set():
    assert Config.from_environ({}) == Config()
    assert Config.from_environ({name: "  " for name in config.VARIABLES}) == Config()  # blank means unset


def test_every_variable_is_parsed(tmp_path):
    parsed = Config.from_environ(
        {
            config.DB_URL: "sqlite:///x.db",
            config.OPEN_DEMO: " 1 ",
            config.SESSION_IDLE_HOURS: "0.5",
            config.SESSION_MAX_DAYS: "2",
            config.DEMO_DIR: str(tmp_path / "demo"),
            config.CACHE_DIR: str(tmp_path / "cache"),
            config.TORCH_THREADS: "1",
            config.LOG_LEVEL: "warning",
        }
    )
    assert parsed == Config(
        "sqlite:///x.db",
        True,
        timedelta(minutes=30),
        timedelta(days=2),
        tmp_path / "demo",
        tmp_path / "cache",
        torch_threads=1,
        log_level="WARNING",
    )
    assert Config.from_environ({config.OPEN_DEMO: "0"}).open_demo is False


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (config.OPEN_DEMO, "true"),
        (config.OPEN_DEMO, "yes"),
        (config.SESSION_IDLE_HOURS, "-1"),
        (config.SESSION_IDLE_HOURS, "0"),
        (config.SESSION_MAX_DAYS, "soon"),
        (config.SESSION_MAX_DAYS, "inf"),
        (config.SESSION_MAX_DAYS, "nan"),
        (config.TORCH_THREADS, "0"),
        (config.TORCH_THREADS, "1.5"),
        (config.TORCH_THREADS, "all"),
        (config.LOG_LEVEL, "verbose"),
        # a security review: 0.5 items a chunk became 0 and every preparation divided by it; 1e308 hours
        # stopped the start with an OverflowError's traceback
        (config.CHUNK_ITEMS, "0.5"),
        (config.SESSION_IDLE_HOURS, "1e308"),
        (config.SESSION_MAX_DAYS, "1e12"),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable(name, value):
    with pytest.raises(InputError, match=name) as error:
        Config.from_environ({name: value})
    assert "Fix:" in str(error.value) or "fix" in str(error.value).lower()


def test_config_follows_the_environment(monkeypatch):
    monkeypatch.setenv(config.OPEN_DEMO, "1")
    assert config.config().open_demo is True
    monkeypatch.setenv(config.OPEN_DEMO, "0")
    assert config.config().open_demo is False


def _reads_of_activegrade_variables(source: str) -> list[str]:
    """Reads of an ACTIVEGRADE_ variable: os.environ[...] / .get / os.getenv with a literal ACTIVEGRADE_ name or a
    name taken from core.config, and any string constant that is exactly such a variable's name (not docstrings)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if node.value.startswith(config.PREFIX) and node.value.isidentifier():
                found.append(f"line {node.lineno}: {node.value!r}")
        key = None
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ"):
            key = node.slice
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "environ.get", "os.getenv"):
            key = node.args[0] if node.args else None
        if key is not None and not isinstance(key, ast.Constant) and "config." in ast.unparse(key):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_sees_a_read():
    assert _reads_of_activegrade_variables("import os\nx = os.environ.get('ACTIVEGRADE_DB_URL')\n")
    assert _reads_of_activegrade_variables("import os\nfrom core import config\nx = os.environ[config.DB_URL]\n")
    assert not _reads_of_activegrade_variables(
        '"""Reads $ACTIVEGRADE_DB_URL."""\nimport os\nx = os.environ.get("HOME")\n'
    )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_core_config_reads_activegrade_variables(path):
    reads = _reads_of_activegrade_variables(path.read_text(encoding="utf-8"))
    assert not reads, f"{path.relative_to(ROOT)} reads ACTIVEGRADE_ variables itself (use core.config): {reads}"


def test_workers_keep_the_hugging_face_hub_offline_unless_the_operator_allows_downloads(monkeypatch):
    """An admin's model name made the server download from the hub (attacker review): a worker sets the
    libraries' offline switches for itself before any job imports them, unless $ACTIVEGRADE_HUB_DOWNLOADS=1."""
    from core.cli.worker import keep_hub_offline

    assert config.hub_environment(Config()) == {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    assert config.hub_environment(Config.from_environ({config.HUB_DOWNLOADS: "1"})) == {}
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", config.HUB_DOWNLOADS):
        monkeypatch.delenv(name, raising=False)
    keep_hub_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_every_variable_is_documented():
    """docs/configuration.md is the one table of the deployment's variables."""
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert [name for name in config.VARIABLES if f"`{name}`" not in table] == []


def test_sampling_servers_are_url_and_key_variable_pairs():
    parsed = Config.from_environ(
        {config.SAMPLING_SERVERS: " http://127.0.0.1:8000/v1 , https://api.openai.com/v1 = OPENAI_API_KEY ,"}
    )
    assert parsed.sampling_servers == (
        config.SamplingServer("http://127.0.0.1:8000/v1"),
        config.SamplingServer("https://api.openai.com/v1", "OPENAI_API_KEY"),
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ftp://host/v1", "not an http(s) URL"),
        ("http:///v1", "not an http(s) URL"),
        ("http://u:p@host/v1", "user, password, query or fragment"),
        ("http://host/v1?x", "user, password, query or fragment"),
        ("http://host/v1=ACTIVEGRADE_DB_URL", "not a variable name"),
        ("http://host/v1=MY-KEY", "not a variable name"),
        ("http://host/v1,http://host/v1=K", "twice"),
    ],
)
def test_bad_sampling_servers_are_refused(value, message):
    with pytest.raises(InputError, match=re.escape(message)):
        Config.from_environ({config.SAMPLING_SERVERS: value})


def test_trusted_proxies_are_addresses_or_networks():
    parsed = Config.from_environ({config.TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8,::1"})
    assert [str(n) for n in parsed.trusted_proxies] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    with pytest.raises(InputError, match="not an IP address or network"):
        Config.from_environ({config.TRUSTED_PROXIES: "proxy.local"})


def test_an_unset_or_blank_variable_means_its_fields_default_written_once():
    assert Config.from_environ({}) == Config()
    assert Config.from_environ({name: "  " for name in config.VARIABLES}) == Config()
    assert Config.from_environ({config.APP_WORKER: "0", config.CHUNK_ITEMS: "5"}) == Config(
        app_worker=False, chunk_items=5
    )
