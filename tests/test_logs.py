"""core.logs: one handler on standard error, at the level $ACTIVEGRADE_LOG_LEVEL names, for ActiveGrade's loggers."""

from __future__ import annotations

import logging
import os

import pytest

from core import config, logs


@pytest.fixture
def configured():
    """configure() as an entry point calls it; the loggers are put back afterwards."""
    before = {name: (logging.getLogger(name).level, list(logging.getLogger(name).handlers)) for name in logs.PACKAGES}
    yield lambda: logs.configure()
    for name, (level, handlers) in before.items():
        logging.getLogger(name).setLevel(level)
        logging.getLogger(name).handlers[:] = handlers


def test_records_reach_standard_error_in_the_format_at_the_level_set(configured, monkeypatch, capsys):
    monkeypatch.setenv(config.LOG_LEVEL, "warning")
    configured()
    configured()  # a second call adds no second handler
    logger = logging.getLogger("core.store.jobs")
    logger.info("not shown")
    logger.warning("job %d taken over", 7)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].endswith(f"WARNING core.store.jobs [pid {os.getpid()}]: job 7 taken over")


def test_other_libraries_loggers_are_left_alone(configured):
    configured()
    assert logs._HANDLER not in logging.getLogger("sqlalchemy").handlers
    assert logs._HANDLER not in logging.getLogger().handlers


def test_the_served_app_sets_the_handler_when_it_starts(configured, monkeypatch):
    """serve.py's lifespan sets the handler: a server whose clients all use the API logs their refused presses,
    though app.py, which sets it too, runs only when a page is opened."""
    import asyncio

    from ui import state, web

    for name in logs.PACKAGES:
        monkeypatch.setattr(logging.getLogger(name), "handlers", [])
    monkeypatch.setattr(state, "keep_worker_warm", lambda: None)

    async def start() -> None:
        async with web.lifespan(None):
            pass

    asyncio.run(start())
    assert all(logs._HANDLER in logging.getLogger(name).handlers for name in logs.PACKAGES)


def test_a_worker_says_it_started_in_the_logs_format(configured, tmp_path, capsys):
    """It was a bare "worker NAME started" line among the formatted ones (an operator's review)."""
    from core.cli import main

    assert main(["worker", "--once", "--db-url", f"sqlite:///{tmp_path / 'w.db'}"]) == 0
    started = [line for line in capsys.readouterr().err.splitlines() if line.endswith(" started")]
    assert len(started) == 1 and f" INFO core.cli.worker [pid {os.getpid()}]: worker " in started[0], started


def test_a_worker_says_it_is_warm_in_the_logs_format(configured, tmp_path, monkeypatch, capsys):
    """The warm-up's line was a bare print beside the formatted "started" line."""
    from core.cli import worker as command
    from core.jobs.worker import Worker
    from core.store import Store

    configured()
    monkeypatch.setattr(command, "warm_up", lambda uses_model: None)
    command._warm_up(Worker(Store.open(f"sqlite:///{tmp_path / 'w.db'}")))
    warm = [line for line in capsys.readouterr().err.splitlines() if " warm: job modules imported in " in line]
    assert len(warm) == 1 and f" INFO core.cli.worker [pid {os.getpid()}]: worker " in warm[0], warm
