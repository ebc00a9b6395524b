"""The planned looks (core.stats.stopping.LookReplay) on a live project's grades, each grade replayed once.

A project's grades only grow at the end of their grading order, except when one is changed, undone or
reviewed. The replay of the grades read last time is kept in this process (per design object and target) and
resumed with the grades added since; any other change (a grade changed or withdrawn, another target) replays
them all again. The dashboard's reading and the queue, which asks at every card whether the rule has said
done (core.services.grade_actions.claim), then pay one step per grade instead of one replay of every grade
(about 0.6 ms a grade: 0.6 s a card at 1,000 grades).

Only the design criterion's grades are replayed here (a rubric's primary criterion: the stopping rule reads
it alone), so the key needs no criterion: the other criteria's readings (core.services.criteria_reading) take
no look and never replace the kept replay.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from core.stats.allocation import Design
from core.stats.stopping import LookBatch, LookReplay

KEEP = 64
"""Replays kept (one per project and target being read); the least recently used are dropped."""


@dataclass
class _Kept:
    design: weakref.ref
    positions: np.ndarray
    grades: np.ndarray
    replay: LookReplay
    lock: threading.Lock


_kept: OrderedDict[tuple[int, float], _Kept] = OrderedDict()
_guard = threading.Lock()


def live_looks(design: Design, positions: np.ndarray, grades: np.ndarray, target: float) -> LookBatch:
    """core.stats.stopping.run_looks on one grading order (``positions`` and ``grades``, 1-D, in grading order),
    resumed from the replay of a prefix of them where this process kept one."""
    positions = np.asarray(positions, dtype=np.int64)
    grades = np.asarray(grades, dtype=float)
    key = (id(design), float(target))
    with _guard:
        kept = _kept.get(key)
        if kept is None or kept.design() is not design:
            kept = _Kept(weakref.ref(design), positions[:0], grades[:0], LookReplay(design, target), threading.Lock())
            _kept[key] = kept
        _kept.move_to_end(key)
        while len(_kept) > KEEP:
            _kept.popitem(last=False)
    with kept.lock:
        seen = kept.positions.size
        appended = seen <= positions.size and (
            np.array_equal(kept.positions, positions[:seen]) and np.array_equal(kept.grades, grades[:seen])
        )
        if not appended:
            kept.replay, seen = LookReplay(design, target), 0
        kept.replay.advance(positions[None, seen:], grades[None, seen:])
        kept.positions, kept.grades = positions.copy(), grades.copy()  # not the caller's arrays, which may change
        return kept.replay.batch()
