"""core.testing.local_server: a test server that fails to start says what it printed, and one whose port
another process took is tried again on another."""

from __future__ import annotations

import sys

import pytest

from core.testing.local_server import PortTaken, free_port, subprocess_server


def _server(code: str):
    return subprocess_server([sys.executable, "-c", code], free_port(), "the test server", None, 30.0)


def test_a_server_that_exits_at_start_says_what_it_printed():
    """A CI run said only "transformers serve exited with status 3", with nothing to tell why."""
    with pytest.raises(RuntimeError, match="exited with status 3: .*the model folder is incomplete"):
        with _server("print('the model folder is incomplete'); raise SystemExit(3)"):
            pass


def test_a_port_already_taken_is_told_apart():
    with pytest.raises(PortTaken):
        with _server("print('[Errno 98] error while attempting to bind: address already in use'); raise SystemExit(1)"):
            pass
