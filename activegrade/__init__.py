"""ActiveGrade's Python client for the HTTP API a running app serves (docs/api.md), and its statistics as
plain functions (activegrade.library: prepare, design, next_item, estimate, simulate).

    import activegrade

    client = activegrade.Client("http://127.0.0.1:8501", token)   # a token from the Team page
    project = client.create_project("Arithmetic", "pool.jsonl", "samples.jsonl", n_strata=3).wait_ready()
    while (card := project.next_item()) is not None:
        project.grade(card, "Correct")
    print(project.reading().estimate, project.export("csv")[:80])

The implementation of everything else lives in the ``core`` package: the client only speaks HTTP, and the
library's functions are thin layers over core's, imported on first use (``import activegrade`` loads no
statistics).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from activegrade.client import (
    ApiError,
    Card,
    Client,
    Criterion,
    Interval,
    NoAnswer,
    Outcome,
    Project,
    ProjectState,
    Reading,
    Side,
)

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ imports them on first use
    from activegrade.library import design, estimate, example_pool, next_item, prepare, simulate

__all__ = [
    "ApiError",
    "Card",
    "Client",
    "Criterion",
    "Interval",
    "NoAnswer",
    "Outcome",
    "Project",
    "ProjectState",
    "Reading",
    "Side",
    "design",
    "estimate",
    "example_pool",
    "next_item",
    "prepare",
    "simulate",
]


def __getattr__(name: str) -> Any:
    """A name of ``__all__`` not defined above: a function of activegrade.library, which imports the
    statistics, imported the first time one is asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("activegrade.library"), name)
