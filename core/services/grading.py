"""A grader's session: which item to show, what of it the grader may see, and the checks of what a grade records
(core.services.reservations.submit records it).

The item shown is a pure function of the stored state (core.stats.queue.next_item),
so a reload or a second browser continues exactly where the project stands.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.errors import InputError
from core.inputs.images import shown_image
from core.inputs.limits import check_length
from core.inputs.markup import one_line_plain, safe_markdown
from core.rubric import ALL
from core.scales import Scale
from core.services.outcome import Refused
from core.settings import ProjectSettings, SettingsLike
from core.stats.queue import QueueState
from core.store import Store, accounts

MIN_VIEW_S = ProjectSettings().min_view_s
"""The default minimum viewing time (core.settings.ProjectSettings.min_view_s); a project sets its own."""


def min_view_s(settings: SettingsLike | None) -> float:
    """The project's minimum viewing time in seconds: a grade sooner than this after the item was shown is
    a key held down or pressed twice, not a judgement of that item; it is not stored (and the page says so)."""
    return ProjectSettings.from_dict(settings).min_view_s


MAX_VIEW_S = 7 * 24 * 3600.0
"""The longest viewing time a grade records (7 days, a sign-in session's default length): a longer one is no
measurement but a forged or broken value, refused."""

MAX_COMMENT_CHARS = 5_000
"""A grade's comment; longer ones are refused (a comment is a note, and every read of the grades loads them)."""

SIGNAL_FIELDS = ("stratum", "proxy", "semantic_entropy", "agreement", "n_clusters", "n_samples")
"""Item fields that could bias a grader; shown only when the project allows it. `proxy` is the design's
proxy (core.stats.proxy.PROXY_COLUMN); the pool column it came from is never shown (grader_view shows named fields only)."""


def queue_state(
    store: Store, project_id: int, reserved: set[int] = frozenset(), settings: ProjectSettings | None = None
) -> QueueState:
    """The project's grading state as the queue wants it: the design criterion's grades, and in a rubric project
    that allocates for all its criteria (core.rubric.ALL) the other criteria's too, in the rubric's order.
    ``settings``: the project's, where the caller has read them (else read here). The grades and skips come
    from the store's copy kept up to date grade by grade (Store.grading_state): no reread of every grade."""
    settings = store.project(project_id).settings if settings is None else settings
    rubric = settings.rubric
    names = () if rubric is None or rubric.allocate_for != ALL else rubric.names
    others = tuple(c for c in names if c != rubric.primary)
    (graded, *criteria), skipped = store.grading_state(project_id, (settings.design_criterion, *others))
    return QueueState(graded, frozenset(skipped), ungraded(reserved, graded), tuple(criteria))


def ungraded(positions: Iterable[int], graded: Mapping[int, float]) -> frozenset[int]:
    """The positions of ``positions`` without a grade in ``graded``, in the time of ``positions`` (a difference
    with ``graded.keys()`` walks every grade: 0.09 ms at 6,000 grades, on every claim)."""
    return frozenset(p for p in positions if p not in graded)


def budget_reached(state: QueueState, budget: int | None) -> bool:
    """Whether the items graded and those held by others (``state.reserved``) reach ``budget`` (None: no
    budget), so that no other first grade may be handed out or kept."""
    return budget is not None and len(state.graded) + len(state.reserved) >= budget


def card_before(history: Sequence[int], shown: int | None) -> int | None:
    """The card Back opens: the one before ``shown`` in the grader's ``history`` (the positions they graded,
    oldest first, each once), their last one from the queue's card (``shown`` not in it), the first one again
    from the first; None without history."""
    if not history:
        return None
    index = history.index(shown) - 1 if shown in history else len(history) - 1
    return history[max(index, 0)]


def grader_view(item: dict[str, Any], settings: SettingsLike) -> dict[str, Any]:
    """What the grader is shown of an item, every text ready for ``st.markdown``/``st.caption``.

    ``id`` as plain text (core.inputs.markup.one_line_plain); ``prompt``, ``response`` and, when the project
    shows it, ``reference`` as markdown that fetches nothing (core.inputs.markup.safe_markdown); ``image``
    the URL to show or "" with ``image_note`` saying why not (core.inputs.images.shown_image: data:image
    URIs, http(s) only when the project allows external images, never a malformed value); the
    surrogate signals only when the project allows it (they would bias the grade), and never on a comparison's
    card, whose item row holds the first model's (an API review read one unnamed model's agreement there).
    """
    shown = ProjectSettings.from_dict(settings)
    view: dict[str, Any] = {"id": one_line_plain(str(item.get("id", "")))}
    texts = ("prompt", "response") + (("reference",) if shown.show_reference else ())
    for key in texts:
        value = item.get(key)
        view[key] = safe_markdown(value) if isinstance(value, str) else value
    image = shown_image(item.get("image"), shown.external_images)
    view["image"], view["image_note"] = image.url or "", image.note
    if shown.show_signals and not shown.compares:  # a comparison's item row holds one model's signals
        view["signals"] = {k: item.get(k) for k in SIGNAL_FIELDS if k in item}
    return view


def check_comment(comment: str) -> str:
    """``comment`` stripped, if it has at most MAX_COMMENT_CHARS characters; else InputError saying so."""
    return check_length(comment.strip(), MAX_COMMENT_CHARS, "the comment")


def check_seconds(seconds: float | None, field: str | None = None) -> float | None:
    """A grade's viewing time rounded to milliseconds, if it is a finite number in [0, MAX_VIEW_S] (or None); else
    InputError, naming ``field`` where the value came from one (NaN, infinity, negative or absurd values would
    bypass MIN_VIEW_S and corrupt the pace statistics)."""
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_VIEW_S):
        raise InputError(
            f"the viewing time {seconds!r} s is not a number of seconds between 0 and {MAX_VIEW_S:,.0f}",
            fix="reload the page and grade the item again",
            field=field,
        )
    return round(value, 3)


def viewing_seconds(shown_ms: object, released_s: float) -> float:
    """How long the grader saw the item: what the browser measured (``shown_ms``, from the frame that painted
    it; `check_shown_ms`), never more than ``released_s``, the server's own measure since it released the card
    (core.services.showings.Showing.seconds_since_released), so a forged value can neither lengthen a view
    nor skip MIN_VIEW_S's check by more than the network's delay."""
    return round(min(check_shown_ms(shown_ms) / 1000, max(released_s, 0.0)), 3)


def check_shown_ms(shown_ms: object) -> float:
    """``shown_ms`` if it is a number of milliseconds in [0, MAX_VIEW_S] (NaN, infinity, negative or absurd values
    would bypass MIN_VIEW_S and corrupt the pace statistics); else InputError naming the field, shown_ms (the
    API's name for it), in the unit it was sent in."""
    value = shown_ms if isinstance(shown_ms, int | float) and not isinstance(shown_ms, bool) else math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_VIEW_S * 1000):
        raise InputError(
            f"the viewing time {shown_ms!r} ms is not a number of milliseconds between 0 and {MAX_VIEW_S * 1000:,.0f}",
            fix="send how many milliseconds the item was on screen, or leave shown_ms out (the server's own measure)",
            field="shown_ms",
        )
    return float(value)


def check_label(scale: Scale, label: str, field: str = "label") -> None:
    """Refused, naming the scale's labels and the request's ``field``, unless ``label`` is one of them."""
    labels = [choice.label for choice in scale.choices]
    if label not in labels:
        raise Refused(
            f"{label!r} is not a grade of this project: use one of {', '.join(map(repr, labels))}", field=field
        )


def holds_signature(store: Store, project_id: int) -> tuple[int, int]:
    """(items graded, live reservations) of the project: what a card that waits on other graders' holds watches.
    It changes when a hold lapses or ends in a grade, the two ways such a card can get an item or close."""
    return len(store.graded_positions(project_id)), len(accounts.reserved(store, project_id))
