"""Claims served in batches (core.services.reservations._batched): a batch hands out what the same claims made one
after another would, concurrent graders get distinct items with one read of the reservations per batch, and a
claim that fails fails alone."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import pytest

from core.scales import BINARY
from core.services import live, reservations
from core.store import Store, accounts
from core.testing.waiting import until
from core.testing.workload import synthetic_project, true_label

GRADERS = [f"grader{k}" for k in range(12)]


def _opened(folder: Path, name: str, settings: dict | None = None):
    store = Store.open(f"sqlite:///{folder / name}")
    pid, design = synthetic_project(store, 80, settings=settings)
    return store, pid, design


def _rules(design, settings: dict, budget: int | None = 40, closed=None) -> reservations._Rules:
    """The rules grade_actions.claim passes: the seed, double grading, a budget and the stopping rule (by
    default the project's, core.services.live.rule_says_done)."""
    closed = functools.partial(live.rule_says_done, design, settings) if closed is None else closed
    return reservations._Rules(design, 3, 0.25, reservations.DEFAULT_TTL, budget, closed, None)


def _closes_at_20(state) -> bool:
    """A stopping rule that says done at 20 graded items."""
    return len(state.graded) >= 20


def _one_by_one(store: Store, pid: int, rules: reservations._Rules) -> list[int | None]:
    """Each grader's claim (``reservations.claim``), one after another."""
    return [
        reservations.claim(
            store, pid, rules.design, rules.seed, g, overlap=rules.overlap, budget=rules.budget, closed=rules.closed
        )
        for g in GRADERS
    ]


def _together(store: Store, pid: int, rules: reservations._Rules) -> list[int | None]:
    """Every grader's claim in one batch."""
    batch = reservations._Batch(store, pid)
    return [batch.claim(g, rules) for g in GRADERS]


@pytest.mark.parametrize(("budget", "closed", "first_grades"), [(40, None, 40), (None, _closes_at_20, 20)])
def test_a_batch_hands_out_what_the_claims_one_after_another_would(tmp_path, monkeypatch, budget, closed, first_grades):
    """A replay: each round every grader claims (on one store one by one, on the other in one batch), and every
    third grader leaves their item ungraded (a reload keeps it); double grading, the budget and the stopping
    rule act in both the same way, and the batch loses no race to its own claims."""
    apart, pid, design = _opened(tmp_path, "apart.db")
    batched, pid_b, design_b = _opened(tmp_path, "batched.db")
    rules, rules_b = _rules(design, {}, budget, closed), _rules(design_b, {}, budget, closed)
    tries, real_reserve = [], accounts.try_reserve

    def counted(store_, *args):
        tries.append(store_ is batched)
        return real_reserve(store_, *args)

    monkeypatch.setattr(accounts, "try_reserve", counted)
    handed: list[list[int | None]] = []
    for round_ in range(8):
        one = _one_by_one(apart, pid, rules)
        tries.clear()
        all_ = _together(batched, pid_b, rules_b)
        assert all_ == one, f"round {round_}"
        assert len(tries) <= len(GRADERS) - one.count(None)  # a reload renews; every try wins
        handed.append(one)
        for store, project in ((apart, pid), (batched, pid_b)):
            for k, (grader, position) in enumerate(zip(GRADERS, one)):
                if position is not None and (k + round_) % 3:
                    reservations.record_grade(store, project, position, BINARY, true_label(position), grader)
        assert accounts.reserved(batched, pid_b) == accounts.reserved(apart, pid)
    first = {p for row in handed for p in row if p is not None}
    assert len(first) >= first_grades and None in handed[-1]  # the queue closed: past that, second grades only


def test_concurrent_graders_are_served_in_one_batch_each_a_distinct_item(tmp_path, monkeypatch):
    """While the first claim's batch reads the reservations, the other graders' claims wait, and the next batch
    serves them all on one read: each gets its own item, reserved for them in the database."""
    store, pid, design = _opened(tmp_path, "together.db")
    reads, real_live = [], accounts.live

    def gated(store_, project_id):
        if not reads:  # the first batch waits until every other grader's claim is waiting for the next
            turns = reservations._turns[(str(store.engine.url), pid)]
            until(lambda: len(turns.waiting) == len(GRADERS) - 1, timeout=60, what="the other claims to wait")
        reads.append(project_id)
        return real_live(store_, project_id)

    monkeypatch.setattr(accounts, "live", gated)
    handed: dict[str, int | None] = {}

    def claim(grader: str) -> None:
        handed[grader] = reservations.claim(store, pid, design, 3, grader)

    threads = [threading.Thread(target=claim, args=(g,)) for g in GRADERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(reads) == 2
    assert None not in handed.values() and len(set(handed.values())) == len(GRADERS)
    assert accounts.reserved(store, pid) == {p: g for g, p in handed.items()}


def test_a_claim_that_fails_fails_alone_and_the_turns_go_on(tmp_path, monkeypatch):
    """A grader whose reservation the database refuses gets that failure; the others of the batch their items,
    and a later claim is served (the turn was handed on)."""
    store, pid, design = _opened(tmp_path, "fails.db")
    real_reserve = accounts.try_reserve

    def refusing(store_, project_id, position, slot, grader, ttl):
        if grader == "grader1":
            raise OSError("disk full")
        return real_reserve(store_, project_id, position, slot, grader, ttl)

    monkeypatch.setattr(accounts, "try_reserve", refusing)
    batch = reservations._Batch(store, pid)
    asks = [reservations._Ask(g, _rules(design, {})) for g in GRADERS[:3]]
    turns = reservations._Turns()
    turns.waiting, turns.serving = list(asks), True
    reservations._serve(store, pid, turns)
    assert isinstance(asks[1].failure, OSError) and asks[1].position is None
    assert asks[0].failure is None and asks[2].failure is None and asks[0].position != asks[2].position
    assert all(a.answered.is_set() for a in asks) and not turns.serving
    assert batch.claim("grader3", _rules(design, {})) not in (None, asks[0].position, asks[2].position)
    with pytest.raises(OSError, match="disk full"):
        reservations.claim(store, pid, design, 3, "grader1")
    assert reservations.claim(store, pid, design, 3, "grader4") is not None


def test_a_batch_whose_read_fails_fails_every_claim_of_it_and_the_next_is_served(tmp_path, monkeypatch):
    store, pid, design = _opened(tmp_path, "read.db")
    real_live = accounts.live
    monkeypatch.setattr(accounts, "live", lambda *_: (_ for _ in ()).throw(OSError("database gone")))
    asks = [reservations._Ask(g, _rules(design, {})) for g in GRADERS[:2]]
    turns = reservations._Turns()
    turns.waiting, turns.serving = list(asks), True
    with pytest.raises(OSError, match="database gone"):
        reservations._serve(store, pid, turns)
    assert all(isinstance(a.failure, OSError) and a.answered.is_set() for a in asks) and not turns.serving
    monkeypatch.setattr(accounts, "live", real_live)
    assert reservations.claim(store, pid, design, 3, "grader0") is not None


def test_two_presses_rules_are_the_same_rules(tmp_path):
    """grade_actions.claim builds its stopping rule per press, with a getter of the skips bound to the store: two
    presses' rules are the same rules, so one batch reads the queue once for both."""
    store, pid, design = _opened(tmp_path, "same.db")
    settings = store.project(pid).settings

    def press() -> reservations._Rules:
        getter = functools.partial(store.skip_steps, pid)
        closed = functools.partial(live.rule_says_done, design, settings, skip_steps=getter)
        return reservations._Rules(design, 3, 0.25, reservations.DEFAULT_TTL, None, closed, settings)

    assert press().same(press())
    other = Store.open(f"sqlite:///{tmp_path / 'same.db'}")  # another store's getter is another rule
    elsewhere = functools.partial(other.skip_steps, pid)
    closed = functools.partial(live.rule_says_done, design, settings, skip_steps=elsewhere)
    assert not press().same(reservations._Rules(design, 3, 0.25, reservations.DEFAULT_TTL, None, closed, settings))
