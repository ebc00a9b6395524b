"""core.services.live: the project read from the store is the reading of its grades and skips, with the
anytime interval the app caches or one computed for the planned budget."""

from __future__ import annotations

from core.scales import BINARY
from core.services import live, reservations, setup
from core.services.reading import read_project
from core.services.tracking import current_estimate
from core.settings import ProjectSettings
from core.stats.skips import skip_bound


def read(reading) -> tuple:
    """What the pages show of a reading: the intervals, the decision and the forecast."""
    f = reading.forecast
    return (
        reading.fixed_n,
        reading.anytime,
        reading.rule,
        reading.now,
        reading.done,
        reading.stop_at,
        f.n,
        f.low,
        f.high,
    )


def test_the_live_reading_is_the_reading_of_the_stored_grades_and_skips(prepared_project):
    store, pid = prepared_project
    settings = store.project(pid).settings
    design = setup.design_of(store.load_items(pid), ProjectSettings.from_dict(settings).stopping)
    for position in range(0, design.N, 2):
        reservations.submit(store, pid, position, BINARY, "Correct" if position % 3 else "Incorrect", "ann")
    reservations.skip(store, pid, 1, "ann")
    now = live.live_reading(store, pid, design, settings, "default")
    graded = store.graded_positions(pid)
    assert now.graded == graded and now.skips.skipped == 1
    n0 = ProjectSettings.from_dict(settings).anytime_n0(design)
    anytime = setup.anytime_after(design, graded, graded.values(), n0)
    estimate = current_estimate(design, graded, "default")
    skips = skip_bound(design, graded, graded.values(), {1})
    assert (now.anytime.low, now.anytime.high, now.anytime.n0) == (anytime.low, anytime.high, anytime.n0)
    assert read(now.reading) == read(read_project(design, settings, graded, estimate, anytime, skips=skips))
    cached = live.live_reading(store, pid, design, settings, "default", lambda g: anytime)
    assert read(cached.reading) == read(now.reading)
    before = live.live_reading(store, pid, design, settings, "default", graded={})
    assert before.anytime is None and before.reading.graded == 0
    assert not now.reading.others  # ann alone: the forecast reaches the stop her fresh grades give
    reservations.submit(store, pid, 3, BINARY, "Correct", "bob")  # bob did not skip item 1: he is given it
    assert live.live_reading(store, pid, design, settings, "default").reading.others
