"""What an operator reads: one log format and level for the app, the CLI and the worker (standard library).

Every module logs through ``logger = logging.getLogger(__name__)``; ``configure()``, called once by each
entry point (app.py, serve.py's start (ui.web.lifespan), core.cli.main, which the worker runs under), gives the loggers of ActiveGrade's
packages one handler on standard error with FORMAT, at the level $ACTIVEGRADE_LOG_LEVEL names
(core.config; INFO by default). Nothing else is touched: Streamlit's, SQLAlchemy's and torch's loggers
keep their own settings, and without ``configure()`` (tests, a library caller) records only propagate
to the root logger as usual. Logged: jobs claimed, taken over, retried and failed; heartbeats not
stamped; sign-ins refused and held back; presses refused; writes the database refused. Never logged:
passwords, keys, session tokens, grades, comments or item texts.
"""

from __future__ import annotations

import logging
import sys

from core import config

PACKAGES = ("core", "ui", "app_pages", "__main__")
"""The loggers configured: ActiveGrade's packages, and app.py (run by Streamlit as __main__)."""

FORMAT = "%(asctime)s %(levelname)s %(name)s [pid %(process)d]: %(message)s"


class _StandardError(logging.StreamHandler):
    """A StreamHandler that writes to the current sys.stderr (pytest and Streamlit replace it), not to the
    one that existed when it was made."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):  # noqa: ANN201 - logging's own attribute
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # noqa: ANN001 - set by StreamHandler.__init__, ignored
        pass


_HANDLER = _StandardError()
_HANDLER.setFormatter(logging.Formatter(FORMAT))


def configure() -> None:
    """Give PACKAGES' loggers the one handler and the configured level; calling it again only resets the
    level (each entry point calls it once, tests may call several)."""
    level = config.config().log_level
    for name in PACKAGES:
        package = logging.getLogger(name)
        package.setLevel(level)
        if _HANDLER not in package.handlers:
            package.addHandler(_HANDLER)
