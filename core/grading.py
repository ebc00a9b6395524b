"""A grader's session: which item to show, what of it the grader may see, and recording decisions.

The item shown is a pure function of the stored state (core.queue.next_item),
so a reload or a second browser continues exactly where the project stands.
"""

from __future__ import annotations

import re
from typing import Any

from core.allocation import Design
from core.queue import QueueState, next_item
from core.scales import Scale
from core.store import Store

MIN_VIEW_S = 0.3
"""A grade sooner than this after the item was shown is a key held down or pressed twice, not a
judgement of that item; the grade page ignores it (and says so)."""

SIGNAL_FIELDS = ("stratum", "proxy", "semantic_entropy", "agreement", "n_clusters", "n_samples")
"""Item fields that could bias a grader; shown only when the project allows it. `proxy` is the design's
proxy (core.proxy.PROXY_COLUMN); the pool column it came from is never shown (grader_view shows named fields only)."""


def queue_state(store: Store, project_id: int, reserved: set[int] = frozenset()) -> QueueState:
    """The project's grading state as the queue wants it."""
    graded = store.graded_positions(project_id)
    return QueueState(graded, frozenset(store.skipped_positions(project_id)), frozenset(reserved) - graded.keys())


def next_position(store: Store, project_id: int, design: Design, seed: int) -> int | None:
    """The queue's next item on the stored state, reservations aside (core.reservations.claim adds
    them), or None when every item is graded."""
    return next_item(design, queue_state(store, project_id), seed)


_MARKDOWN_IMAGE = re.compile(r"!\[([^\]]*)\](?=[(\[])")


def inert_images(text: str) -> str:
    """Markdown images in item text turned into plain links (`![alt](url)` -> `[image: alt](url)`).

    A grader's browser would otherwise fetch every image URL a pool's text names as soon as the
    item is shown, telling that server who graded what and when; a link is fetched only if clicked.
    Images meant for grading go in the pool's `image` column.
    """
    return _MARKDOWN_IMAGE.sub(r"[image: \1]", text)


def grader_view(item: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """What the grader is shown of an item: prompt, response, image, the reference when allowed,
    and the surrogate signals only when the project allows it (they would bias the grade).
    Markdown images in the texts are made inert links (`inert_images`)."""
    view = {k: item.get(k) for k in ("id", "prompt", "response", "image")}
    if settings.get("show_reference", True):
        view["reference"] = item.get("reference")
    for key in ("prompt", "response", "reference"):
        if isinstance(view.get(key), str):
            view[key] = inert_images(view[key])
    if settings.get("show_signals", False):
        view["signals"] = {k: item.get(k) for k in SIGNAL_FIELDS if k in item}
    return view


def submit(
    store: Store,
    project_id: int,
    position: int,
    scale: Scale,
    label: str,
    grader: str,
    *,
    comment: str = "",
    seconds: float | None = None,
) -> int:
    """Record ``label`` (a label of ``scale``) for the item; replaces this grader's earlier grade of it."""
    if not grader:
        raise ValueError("a grade needs the grader's name")
    return store.add_grade(
        project_id,
        position,
        value=scale.value_of(label),
        label=label,
        grader=grader,
        comment=comment.strip(),
        seconds=None if seconds is None else round(float(seconds), 3),
    )
