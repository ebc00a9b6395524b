"""Several graders at once: each is shown an item nobody else is being shown; and the grade writes.

Nothing here checks who acts: the grade page, the CLI and the HTTP API reach these only through
core.services.grade_actions, which rechecks the grader on every press (tests/test_architecture.py);
tests, benchmarks and the load drills call them directly.

``claim`` gives a grader the item to show and reserves it in the database
until ``expires_at`` (renewed while the grader stays on it): the grader's
live reservation if there is one, else the second grade of a double-graded
item that someone else graded once, else the queue's next item
(core.stats.queue.next_item, with the other graders' live reservations counted as
taken), until the budget is reached or the stopping rule has said done. A reservation is exclusive (core.store.accounts.try_reserve), so two
graders never hold the same item at once unless it is chosen for double
grading, and then they hold its two different grades. A grader who walks away
lets the reservation expire, and the item returns to the queue.

The claim is the database's, never a lock of this process: the primary key
(project, position, slot) of ``reservations`` admits one live holder, and
``try_reserve`` inserts before it checks the item's grades, so several app
replicas on one PostgreSQL keep their graders apart (tests/reliability/
test_replicas.py). ``_batched`` only spares the graders of one process
races they would lose anyway, and serves the claims that come at once on one read of the queue.

Expiry rule (a reservation lapses while its grader still works on the item):
the late grade is saved only if the grader can hold the item again now
(``hold``: nobody else holds it, and it still needs a grade: its first, or the
second of an item chosen for double grading). Otherwise it is refused with
``LATE`` and the grader gets the next item. Why refuse rather than keep both:
a second, unplanned grade would give that item a weight the design never drew
(its two grades enter as their mean, and agreement counts a pair that was not
sampled), and "no item is graded twice outside the double-grading share"
becomes a rule with exceptions every report must explain. What is lost is one
item's look by one grader who left it untouched for DEFAULT_TTL, and they are
told so at once; a grader who is back before anyone takes the item keeps
their grade.

Double grading: ``overlap_positions`` picks round(fraction * N) items
uniformly at random (seeded per project); each of them, once graded, is
offered to a second, different grader before any new item, so agreement
(core.stats.rater_agreement) is measured as soon as grading starts. Both grades enter
the estimate through their mean (core.stats.rater_agreement.final_grades).
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from core.inputs.limits import MAX_NAME_CHARS, check_length
from core.scales import Scale
from core.services.grading import budget_reached, check_comment, check_seconds, queue_state, ungraded
from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.stats.queue import Draws, QueueState
from core.store import Store, accounts, write_turns
from core.store.accounts import Held
from core.store.models import utcnow

DEFAULT_TTL = timedelta(minutes=10)
LATE = (
    f"another grader has this item now: your hold on it lapsed after {DEFAULT_TTL.seconds // 60} minutes "
    "without a grade and the item went back to the queue. This grade was not saved; your next item is the next one "
    "handed to you (the card's, or GET next's)"
)
OVERLAP_SEED_OFFSET = 104_729  # keeps the overlap draw independent of the queue's order for the same seed


@functools.lru_cache(maxsize=128)
def drawn_positions(n_items: int, fraction: float, seed: int) -> frozenset[int]:
    """round(fraction * n_items) positions drawn without replacement with ``seed`` (a larger fraction keeps
    the smaller's items): the double-graded share here, the audit share in core.services.review."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"share {fraction} is not in [0, 1]")
    count = int(round(fraction * n_items))
    rng = np.random.default_rng(seed)
    return frozenset(int(p) for p in rng.permutation(n_items)[:count])


def overlap_positions(n_items: int, fraction: float, seed: int) -> frozenset[int]:
    """The items chosen for double grading (``drawn_positions`` with the project's seed + OVERLAP_SEED_OFFSET)."""
    return drawn_positions(n_items, fraction, seed + OVERLAP_SEED_OFFSET)


@dataclass(frozen=True, eq=False)
class _Rules:
    """What a claim hands out by, all but the grader: ``claim``'s arguments."""

    design: Design
    seed: int
    overlap: float
    ttl: timedelta
    budget: int | None
    closed: Callable[[QueueState], bool] | None
    settings: ProjectSettings | None
    held: Callable[[QueueState], bool] | None = None

    def same(self, other: _Rules) -> bool:
        """Whether ``other`` hands out by the same rules, so one read of the queue serves both: the same design
        object (core.api.cards keeps one per project), equal settings and the same stopping rule (equal
        partials of the same function: grade_actions builds one per press)."""
        mine = (self.seed, self.overlap, self.ttl, self.budget, self.settings)
        theirs = (other.seed, other.overlap, other.ttl, other.budget, other.settings)
        return (
            self.design is other.design
            and mine == theirs
            and _same_callable(self.closed, other.closed)
            and _same_callable(self.held, other.held)
        )


def _same_callable(a: Callable | None, b: Callable | None) -> bool:
    """``a is b``, or equal (a bound method of one object), or both partials of the same callable with the same
    arguments, positional and by keyword (`_same_argument`: a partial among them, grade_actions' getter of
    the skips, by these rules too)."""
    if a is b:
        return True
    if not (isinstance(a, functools.partial) and isinstance(b, functools.partial)):
        return a is not None and b is not None and a == b
    return (
        _same_callable(a.func, b.func)
        and a.keywords.keys() == b.keywords.keys()
        and all(_same_argument(a.keywords[k], b.keywords[k]) for k in a.keywords)
        and len(a.args) == len(b.args)
        and all(_same_argument(x, y) for x, y in zip(a.args, b.args))
    )


def _same_argument(x: object, y: object) -> bool:
    """The same argument of a partial: the same object, a partial the same by `_same_callable`, or an equal value
    (a Design by identity alone: it holds arrays)."""
    if isinstance(x, functools.partial):
        return _same_callable(x, y)
    return x is y or (not isinstance(x, Design) and x == y)


class _Live:
    """The project's live reservations, read once per batch and kept as the batch's claims change them."""

    def __init__(self, store: Store, project_id: int) -> None:
        self.held = accounts.live(store, project_id)

    def of(self, grader: str) -> Held | None:
        return next((r for r in self.held if r.grader == grader), None)

    def others(self, grader: str, slot: int) -> set[int]:
        """The positions the other graders hold at ``slot``."""
        return {r.position for r in self.held if r.grader != grader and r.slot == slot}

    def drop(self, grader: str) -> None:
        """The grader's reservations went (``release``, or ``try_reserve``'s first step)."""
        self.held = [r for r in self.held if r.grader != grader]

    def reserve(self, grader: str, position: int, slot: int, ttl: timedelta) -> int:
        """``try_reserve`` gave the grader (position, slot), in place of their other reservations; the position."""
        self.drop(grader)
        self.held.append(Held(position, slot, grader, utcnow() + ttl))
        return position


class _Queue:
    """The queue's state as one batch of claims with the same rules reads it: the grades and skips read once (and
    drawn from, ``draws``), the stopping rule asked once, and the positions whose reservation was lost to a race
    (reserved or graded elsewhere since), which no claim of the batch draws again."""

    def __init__(self, store: Store, project_id: int, rules: _Rules) -> None:
        self.rules = rules
        self.state = queue_state(store, project_id, frozenset(), rules.settings)
        self.lost: set[int] = set()

    @functools.cached_property
    def draws(self) -> Draws:
        """The queue's draws on these grades (core.stats.queue.Draws: the grades read once for every draw)."""
        return Draws(self.rules.design, self.state, self.rules.seed)

    @functools.cached_property
    def closed(self) -> bool:
        """Whether the stopping rule closes the queue (asked once a claim gets past the budget's check)."""
        return self.rules.closed is not None and self.rules.closed(self.state)

    @functools.cached_property
    def held(self) -> bool:
        """Whether the stopping rule waits for the skipped items alone (asked only while the queue is open)."""
        return self.rules.held is not None and self.rules.held(self.state)

    def with_held(self, held: set[int]) -> QueueState:
        """The state with ``held`` (the other graders' first grades) reserved, as ``claim`` reads it."""
        return dataclasses.replace(self.state, reserved=ungraded(held, self.state.graded))


class _Batch:
    """One batch of claims of a project, served one after another on one read of the reservations and one of
    the queue's state per rules (``_Queue``)."""

    def __init__(self, store: Store, project_id: int) -> None:
        self.store, self.project_id = store, project_id
        self.live = _Live(store, project_id)
        self._queues: list[_Queue] = []

    def queue(self, rules: _Rules) -> _Queue:
        """The queue's state for ``rules``, read at the batch's first claim that needs it."""
        found = next((q for q in self._queues if q.rules.same(rules)), None)
        if found is None:
            found = _Queue(self.store, self.project_id, rules)
            self._queues.append(found)
        return found

    def claim(self, grader: str, rules: _Rules) -> int | None:
        """``claim``'s answer for ``grader``, with the claims of the batch before it counted as made."""
        store, project_id, live = self.store, self.project_id, self.live
        current = live.of(grader)
        if current is not None and store.grade_of(project_id, current.position, grader) is None:
            # a first grade held from before the budget was fixed or lowered, when the others' items reach it
            passed = (
                current.slot == 0
                and rules.budget is not None
                and budget_reached(self.queue(rules).with_held(live.others(grader, 0)), rules.budget)
            )
            if not passed:
                accounts.renew(store, project_id, grader, rules.ttl)
                return current.position
            accounts.release(store, project_id, grader)
            live.drop(grader)
        second = self._second_grade(grader, rules)
        if second is not None:
            return live.reserve(grader, second, 1, rules.ttl)
        first = self._first_grade(grader, rules)
        return None if first is None else live.reserve(grader, first, 0, rules.ttl)

    def _skipped_first(self, grader: str, rules: _Rules, queue: _Queue, state: QueueState) -> int | None:
        """While the stopping rule waits for the skipped items alone, one of them that another grader skipped
        and nobody holds, reserved for ``grader`` (the first in pool order); None where there is
        none for them: the grades of those items, not fresh ones, are what lets the rule say done."""
        for position in sorted(state.skipped - state.reserved - queue.lost - self._skipped_by(grader, state)):
            if accounts.try_reserve(self.store, self.project_id, position, 0, grader, rules.ttl):
                return position
            queue.lost.add(position)
        return None

    def _second_grade(self, grader: str, rules: _Rules) -> int | None:
        """Reserve the oldest double-graded item someone else graded once and nobody holds for its second grade."""
        double = overlap_positions(rules.design.N, rules.overlap, rules.seed)
        if not double:
            return None
        taken = self.live.others(grader, 1)
        for position in accounts.awaiting_second_grade(self.store, self.project_id, sorted(double), grader):
            if position not in taken and accounts.try_reserve(
                self.store, self.project_id, position, 1, grader, rules.ttl
            ):
                return position
        return None

    def _skipped_by(self, grader: str, state: QueueState) -> frozenset[int]:
        """The items ``grader`` skipped (and has not taken back): never handed back to them, since a skipped item
        goes to another grader (an integrator's review: the skipper of one of the last items got it back at
        once, looping, while every other grader was told to wait for their hold)."""
        return frozenset(self.store.skipped_by(self.project_id, grader)) if state.skipped else frozenset()

    def _first_grade(self, grader: str, rules: _Rules) -> int | None:
        """Reserve the queue's next item that nobody holds and ``grader`` did not skip; None when every item is
        graded or held, when the items graded and held by others already reach the budget, or when the stopping
        rule has said done."""
        queue = self.queue(rules)
        state = queue.with_held(self.live.others(grader, 0))
        if budget_reached(state, rules.budget) or queue.closed:
            return None
        if queue.held and (skipped := self._skipped_first(grader, rules, queue, state)) is not None:
            return skipped
        theirs = self._skipped_by(grader, state)
        while True:
            position = queue.draws.next(state.reserved | queue.lost | theirs)
            if position is None:
                return None
            if accounts.try_reserve(self.store, self.project_id, position, 0, grader, rules.ttl):
                return position
            queue.lost.add(position)  # someone reserved or graded it since the state was read


def claim(
    store: Store,
    project_id: int,
    design: Design,
    seed: int,
    grader: str,
    *,
    overlap: float = 0.0,
    ttl: timedelta = DEFAULT_TTL,
    budget: int | None = None,
    closed: Callable[[QueueState], bool] | None = None,
    settings: ProjectSettings | None = None,
    held: Callable[[QueueState], bool] | None = None,
) -> int | None:
    """The position to show ``grader`` now, reserved for them; None when nothing is left for them.

    ``closed``: whether the project's grades close the queue to new first grades (the stopping rule has said
    done: core.services.live.rule_says_done); an item the grader already holds is still theirs to grade.

    ``budget``: the most items to grade (core.stats.design.grading_budget); once the items graded and held by
    others reach it, no new item is handed out, while second grades of double-graded items go on. Graders
    of one process are counted one after another (``_batched``); on several replicas two claims at the
    same instant can both pass the count, so the budget can be passed by one item per grader claiming at
    once. That overshoot depends on timing, never on the grades seen, so the fixed-n interval stays valid
    at the number of items actually graded.

    ``settings``: the project's, where the caller has read them (the queue's state reads the criteria from them;
    else it reads the project again).

    ``held``: asked only where ``closed`` said no, whether the stopping rule waits for the skipped items alone
    (core.services.live.rule_held: the looks said done, the skips keep it open); then a skipped item another
    grader passed over is handed out before any fresh one."""
    if not grader:
        raise ValueError("a reservation needs the grader's name")
    rules = _Rules(design, seed, overlap, ttl, budget, closed, settings, held)
    return _batched(store, project_id, _Ask(grader, rules))


@dataclass
class _Ask:
    """One grader's claim, waiting for the batch that serves it: its answer or its failure, and whether it
    serves the next batch."""

    grader: str
    rules: _Rules
    answered: threading.Event = dataclasses.field(default_factory=threading.Event)
    position: int | None = None
    failure: BaseException | None = None
    leads: bool = False


class _Turns:
    """The claims of one project in this process waiting for a batch, and whether one is being served."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.waiting: list[_Ask] = []
        self.serving = False


_turns: dict[tuple[str, int], _Turns] = {}
_turns_guard = threading.Lock()


def _batched(store: Store, project_id: int, ask: _Ask) -> int | None:
    """``ask`` answered in a batch: the graders of one process claim in turn, in batches.

    Without turns they would all compute the same next item and all but one would lose the race for it and
    draw again (benchmarks/reliability.md: with 8 graders, about 5 lost races per grade and 2.4 times the
    time). One at a time, 100 graders queued behind each claim's reads (the reservations, the grades, the
    stopping rule), each read of them waiting for the interpreter's lock again: 93 grades a second
    (benchmarks/concurrent_graders.md). So the claims that arrive while a batch is served wait, and the
    next batch serves them all, on one read (``_Batch``), as if they had claimed one after another. The
    claim that arrived first serves that batch (its own in it), then hands the turn to the next one waiting.
    Graders served by other processes are still kept apart by the database's reservation key.
    """
    with _turns_guard:
        turns = _turns.setdefault((str(store.engine.url), project_id), _Turns())
    with turns.guard:
        turns.waiting.append(ask)
        ask.leads = not turns.serving
        turns.serving = True
    if not ask.leads:
        ask.answered.wait()
    if ask.leads:
        _serve(store, project_id, turns)
    if ask.failure is not None:
        raise ask.failure
    return ask.position


def _serve(store: Store, project_id: int, turns: _Turns) -> None:
    """Serve every claim waiting now as one batch, then hand the turn to the first claim that came since (or
    end the turns): whatever fails, the waiting graders are answered."""
    with turns.guard:
        asks, turns.waiting = turns.waiting, []
    try:
        batch = _Batch(store, project_id)
        with write_turns.kept():  # the batch's reservations wait for the database's turn once, not each
            for ask in asks:
                try:
                    ask.position = batch.claim(ask.grader, ask.rules)
                except Exception as exc:  # noqa: BLE001 - this grader's failure, raised in their own thread
                    ask.failure = exc
    except BaseException as exc:  # the batch's read failed: every claim of it fails with it
        for ask in asks:
            ask.failure = ask.failure or exc
        raise
    finally:
        with turns.guard:
            following = turns.waiting[0] if turns.waiting else None
            turns.serving = following is not None
            if following is not None:
                following.leads = True
        for ask in asks:
            ask.answered.set()
        if following is not None:
            following.answered.set()


def record_grade(store: Store, project_id: int, position: int, scale: Scale, label: str, grader: str, **details) -> int:
    """Record the grade (``submit``) and free the grader's reservation, in one transaction; returns the grade id.

    It records whatever it is given: the grade page's path, core.services.grade_actions.grade, first
    makes sure the grader holds the item (``hold``, the expiry rule above).
    """
    return submit(store, project_id, position, scale, label, grader, release=True, **details)


def record_card(
    store: Store,
    project_id: int,
    position: int,
    card: list[tuple[str, float, str]],
    grader: str,
    *,
    comment: str = "",
    seconds: float | None = None,
    rubric: bool = False,
) -> list[int]:
    """Record a card's grades in one transaction and free the grader's reservation, as ``record_grade`` does
    for one grade: a side-by-side card's (Store.add_card_grades: (target, value, label) side by side) or,
    with ``rubric``, a rubric card's (Store.add_rubric_grades: (criterion, value, label))."""
    check_length(grader, MAX_NAME_CHARS, "the grader's name")
    add = store.add_rubric_grades if rubric else store.add_card_grades
    comment, seconds = check_comment(comment), check_seconds(seconds)
    return add(project_id, position, card, grader=grader, comment=comment, seconds=seconds, release=True)


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
    release: bool = False,
) -> int:
    """Record ``label`` (a label of ``scale``) for the item; replaces this grader's earlier grade of it.
    ``release``: the grader's reservation goes in the same transaction (``record_grade``).

    Raises core.errors.NotSaved, with the message to show, when the database does not take the grade
    (down, disk full): nothing is half-written and every earlier grade stays; pressing again retries.
    Raises InputError, storing nothing, for a comment over MAX_COMMENT_CHARS or a viewing time ``check_seconds``
    refuses.
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
        comment=check_comment(comment),
        seconds=check_seconds(seconds),
        release=release,
    )


def skip(store: Store, project_id: int, position: int, grader: str) -> None:
    """Pass on the item: it goes back to the queue (after its stratum's other free items)."""
    store.add_skip(project_id, position, grader)
    accounts.release(store, project_id, grader)


def current(store: Store, project_id: int, grader: str) -> int | None:
    """The position of the item ``grader`` holds now (their live reservation), None without one."""
    held = accounts.held(store, project_id, grader)
    return None if held is None else held.position


def hold(store: Store, project_id: int, position: int, grader: str, *, ttl: timedelta = DEFAULT_TTL) -> bool:
    """Make sure ``grader`` holds the item: their live reservation, else a new one if nobody else holds it and it
    still needs a grade from them (its first, or the second of an item chosen for double grading); False otherwise.

    Used before a grade is saved (a reservation may have lapsed: the expiry rule), after an undo and to reopen a
    skipped item. The new reservation is ``try_reserve``'s, atomic across processes.
    """
    current = accounts.held(store, project_id, grader)
    if current is not None and current.position == position:
        return True
    count = accounts.grade_count(store, project_id, position)
    if count >= (2 if position in double_graded(store, project_id) else 1):
        return False
    return accounts.try_reserve(store, project_id, position, count, grader, ttl)


def double_graded(store: Store, project_id: int) -> frozenset[int]:
    """The project's items chosen for double grading, from its settings (``overlap``, ``seed``)."""
    settings = store.project(project_id).settings
    return overlap_positions(store.item_count(project_id), float(settings.overlap), int(settings.seed))
