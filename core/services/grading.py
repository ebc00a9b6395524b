"""A grader's session: which item to show, what of it the grader may see, and recording decisions.

The item shown is a pure function of the stored state (core.stats.queue.next_item),
so a reload or a second browser continues exactly where the project stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.inputs.images import shown_image
from core.inputs.limits import MAX_NAME_CHARS, check_length
from core.inputs.markup import one_line_plain, safe_markdown
from core.scales import Scale
from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.stats.queue import QueueState, next_item
from core.store import Store

MIN_VIEW_S = ProjectSettings().min_view_s
"""The default minimum viewing time (core.settings.ProjectSettings.min_view_s); a project sets its own."""


def min_view_s(settings: Mapping[str, Any] | None) -> float:
    """The project's minimum viewing time in seconds: a grade sooner than this after the item was shown is
    a key held down or pressed twice, not a judgement of that item; it is not stored (and the page says so)."""
    return ProjectSettings.from_dict(settings).min_view_s


SIGNAL_FIELDS = ("stratum", "proxy", "semantic_entropy", "agreement", "n_clusters", "n_samples")
"""Item fields that could bias a grader; shown only when the project allows it. `proxy` is the design's
proxy (core.stats.proxy.PROXY_COLUMN); the pool column it came from is never shown (grader_view shows named fields only)."""


def queue_state(store: Store, project_id: int, reserved: set[int] = frozenset()) -> QueueState:
    """The project's grading state as the queue wants it."""
    graded = store.graded_positions(project_id)
    return QueueState(graded, frozenset(store.skipped_positions(project_id)), frozenset(reserved) - graded.keys())


def next_position(store: Store, project_id: int, design: Design, seed: int) -> int | None:
    """The queue's next item on the stored state, reservations aside (core.services.reservations.claim adds
    them), or None when every item is graded."""
    return next_item(design, queue_state(store, project_id), seed)


def grader_view(item: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """What the grader is shown of an item, every text ready for ``st.markdown``/``st.caption``.

    ``id`` as plain text (core.inputs.markup.one_line_plain); ``prompt``, ``response`` and, when the project
    shows it, ``reference`` as markdown that fetches nothing (core.inputs.markup.safe_markdown); ``image``
    the URL to show or "" with ``image_note`` saying why not (core.inputs.images.shown_image: data:image
    URIs, http(s) only when the project allows external images, never a malformed value); the
    surrogate signals only when the project allows it (they would bias the grade).
    """
    shown = ProjectSettings.from_dict(settings)
    view: dict[str, Any] = {"id": one_line_plain(str(item.get("id", "")))}
    texts = ("prompt", "response") + (("reference",) if shown.show_reference else ())
    for key in texts:
        value = item.get(key)
        view[key] = safe_markdown(value) if isinstance(value, str) else value
    image = shown_image(item.get("image"), ProjectSettings.from_dict(settings).external_images)
    view["image"], view["image_note"] = image.url or "", image.note
    if shown.show_signals:
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
    """Record ``label`` (a label of ``scale``) for the item; replaces this grader's earlier grade of it.

    Raises core.errors.NotSaved, with the message to show, when the database does not take the grade
    (down, disk full): nothing is half-written and every earlier grade stays; pressing again retries.
    """
    if not grader:
        raise ValueError("a grade needs the grader's name")
    check_length(grader, MAX_NAME_CHARS, "the grader's name")
    return store.add_grade(
        project_id,
        position,
        value=scale.value_of(label),
        label=label,
        grader=grader,
        comment=comment.strip(),
        seconds=None if seconds is None else round(float(seconds), 3),
    )
