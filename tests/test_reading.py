"""core.services.reading: one reading of a project, and the skips that keep it from stopping."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.services import reading as reading_module
from core.services.progress import percent
from core.services.reading import (
    LOOKS_WORDS,
    expected_score_words,
    fresh_words,
    grades_at_information,
    headline_words,
    held_short,
    interval_label,
    looks_words,
    next_look_grades,
    read_project,
    reported_estimate,
    reported_from,
    saving_headline,
    saving_metric,
    saving_note,
    saving_words,
    status_short,
    stopping_words,
)
from core.stats.confseq import anytime_interval
from core.stats.design import prepared_design
from core.stats.estimate import estimate
from core.stats.simulate import labels_of, replay_queue, replication_orders, synthetic_items
from core.stats.skips import skip_bound

SETTINGS = {"target_half_width": 0.1, "regime": "looks"}


def _graded(n: int):
    items = synthetic_items(1000, signal=1.0, seed=5)
    labels = labels_of(items)
    design = prepared_design(items)
    positions = replay_queue(design, labels, replication_orders(labels.size, 1, 1), n)[0]
    graded = {int(p): float(labels[p]) for p in positions}
    return design, graded


def test_a_project_is_done_at_its_look_and_reads_the_looks_interval():
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    reading = read_project(design, SETTINGS, graded, e)
    assert reading.done and reading.stop_at is not None and reading.stop_at <= 400
    assert reading.rule is not None and reading.rule.half_width <= 0.1 and reading.now == reading.rule
    assert reading.forecast.low <= reading.forecast.n <= reading.forecast.high
    rule = reading.rule  # the result first, in numbers, not the look's name
    assert stopping_words(reading).startswith(
        f"Done at {reading.stop_at:,} graded items: the interval at the stop, {rule.low:.3f} – {rule.high:.3f} "
        f"(±{rule.half_width:.3f}), is within the target ±0.100."
    )
    assert interval_label(reading) == "95% interval at the stop"  # the looks hold together at 95%


def test_a_look_taken_without_a_stop_says_what_it_read():
    """Between looks the words say how the last look ended, not only that it was taken."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    first = dict(list(graded.items())[: stop - 1])  # the first look taken, the second not yet reached
    reading = read_project(design, SETTINGS, first, estimate(design, list(first), list(first.values())))
    taken = [n for n in reading.looks_taken if n > 0]
    assert not reading.done and len(taken) == 1
    words = stopping_words(reading)
    assert f"Planned looks: 1 of 2 taken. Look 1, at {taken[0]:,} graded items, read its 99.4% interval wider" in words
    assert "grading goes on" in words
    # the next look in grades, from the forecast stop, not only as a share of information
    assert f"The next comes at about {reading.forecast.n:,} graded items ({len(first):,} so far), once 100% of" in words


def test_a_look_the_forecast_puts_behind_the_grades_is_placed_by_the_information_read_now():
    """Where the forecast's share of its stop is no more than the grades given, the next look is placed by the
    information the grades show, not at "the next grade" over and over: the variance falls as 1 / n - 1 / N,
    and read as 1 / n a pool of 200 put the stop at 124 where it came at 88 (a manager's review)."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    first = dict(list(graded.items())[: stop - 1])
    reading = read_project(design, SETTINGS, first, estimate(design, list(first), list(first.values())))
    assert f"The next comes at about {reading.next_look:,} graded items ({reading.graded:,} so far)" in stopping_words(
        reading
    )
    n, size = reading.graded, design.N
    behind = replace(reading.forecast, n=n)
    expected = math.ceil(1 / (0.8 * (1 / n - 1 / size) + 1 / size))  # the last look, at 100% of the information
    assert next_look_grades(behind, n, 0.8, 1.0, size) == expected < math.ceil(n / 0.8)
    assert grades_at_information(64, 0.524, 1.0, 200) == 95  # the review's pool: 124 read as 1 / n
    # never sooner than the information can grow: at 80 grades with 30% of it, the look at 50% was said to come at
    # 81 (the forecast's half of 163), then at 119 (a review); I grows at most as n^2, so not before 80 sqrt(5/3)
    soon = replace(reading.forecast, n=163)
    assert next_look_grades(soon, 80, 0.3, 0.5, 2000) == math.ceil(80 * math.sqrt(0.5 / 0.3)) == 104
    assert next_look_grades(soon, 40, 0.13, 0.5, 2000) == 82  # early, the forecast's: the information reads low


def test_a_forecast_whose_draws_all_passed_is_read_from_the_information_now(monkeypatch):
    """Where every draw of the forecast puts the stop among the grades given while the last look's interval is
    still wider than the target, the grades still needed come from the information read now (n / I), not "1
    more" grade after grade."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    first = dict(list(graded.items())[: int(0.8 * stop)])
    e_first = estimate(design, list(first), list(first.values()))
    real = reading_module.forecast
    monkeypatch.setattr(  # every draw passed: the median at the next grade, its floor
        reading_module,
        "forecast",
        lambda *a, **k: replace(real(*a, **k), n=len(first) + 1, low=len(first) + 1, high=len(first) + 1),
    )
    reading = read_project(design, SETTINGS, first, e_first)
    assert not reading.done and 0 < reading.information < 1
    needed = grades_at_information(len(first), reading.information, 1.0, design.N)
    assert reading.forecast.n == needed > len(first) + 1 and reading.forecast.high >= needed
    assert reading.items_left == needed - len(first)


def test_a_tighter_target_after_a_stop_says_why_the_interval_shown_is_now_wider():
    """A manager who tightens the target after the stop sees the anytime-valid interval where the look's was: the
    words say a look's interval holds only at its look, read again against the new target."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    sequence = anytime_interval(design, list(graded), list(graded.values()), n0=400)
    stopped = read_project(design, SETTINGS, graded, e, sequence)
    tighter = read_project(design, {**SETTINGS, "target_half_width": 0.01}, graded, e, sequence)
    assert stopped.done and not tighter.done and tighter.now == tighter.anytime
    words = stopping_words(tighter)
    assert "the interval shown is the anytime-valid one, wider than a look's" in words
    assert "a stop made at the old one no longer stands" in words
    # the dashboard's box gives where grading stands, and how the looks are read apart under it (a review found
    # 130 words in it, the same after every grade)
    brief = stopping_words(tighter, brief=True)
    assert (
        brief.startswith("Planned looks:")
        and LOOKS_WORDS not in brief
        and brief in words.replace(f" {LOOKS_WORDS}", "")
    )
    assert looks_words(tighter) == LOOKS_WORDS and looks_words(stopped) == ""


def test_skips_that_could_move_the_estimate_past_the_target_keep_it_from_stopping():
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    free = np.setdiff1d(np.arange(design.N), list(graded))[:40]  # 40 items drawn and skipped, never graded
    skips = skip_bound(design, list(graded), list(graded.values()), free)
    reading = read_project(design, SETTINGS, graded, e, skips=skips)
    assert not reading.done and reading.held_by_skips and reading.skipped == 40
    assert reading.items_left == 40  # what the rule waits for: the skipped items, not a forecast of more grades
    # one stop for every page: the forecast's (the saving's, the setup headline's) is the skipped items graded, a
    # manager's review saw 3 items left beside a forecast stop of 39 of 38 + 3 that grew with every new grade
    held_at = len(graded) + 40
    assert reading.forecast.n == held_at
    # nobody else may grade them (one grader never gets them back): the range reaches the fresh grades' stop
    f = reading.forecast
    assert reading.fresh_low is not None and (f.low, f.high) == (min(held_at, reading.fresh_low), reading.fresh_high)
    headline = headline_words(reading, 0.95)
    assert (
        f"is reached once the 40 skipped items are graded ({held_at:,} graded items in all); if items go on" in headline
    )
    assert "(9% of those shown), fresh grades alone likely end it at" in headline
    team = read_project(design, SETTINGS, graded, e, skips=skips, others=True)  # another grader takes them
    assert (team.forecast.n, team.forecast.low, team.forecast.high) == (held_at, held_at, held_at)
    assert team.fresh_low is None and "fresh grades" not in stopping_words(team) + headline_words(team, 0.95)
    assert reading.rule.half_width > 0.1  # widened by the skips' worst case
    assert "40 skipped items keep the interval wider" in stopping_words(reading)
    assert "or by whoever skipped them (Grade page, My graded and skipped items)" in stopping_words(reading)
    one = replace(reading, skipped=1)  # the words agree with the count
    assert "1 skipped item keeps the interval wider than the target ±0.100 (it could be 0 or 1). Have it graded" in (
        stopping_words(one)
    )
    few = skip_bound(design, list(graded), list(graded.values()), free[:1])
    assert read_project(design, SETTINGS, graded, e, skips=few).done  # one skip moves it too little


def _one_grader_skipping(every: int, n: int):
    """A project of one grader who skips every ``every``-th card the queue hands out (a skipped item never goes
    back to them, so it stays skipped): the design, and the reading after each count of cards handed out."""
    items = synthetic_items(3000, signal=1.0, seed=5)
    labels = labels_of(items)
    design = prepared_design(items)
    order = [int(p) for p in replay_queue(design, labels, replication_orders(labels.size, 2, 1), n)[0]]
    skipped = {p: k - k // every for k, p in enumerate(order) if k % every == every - 1}  # -> grades before it
    settings = {"target_half_width": 0.05, "regime": "looks"}

    def reading_after(cards: int):
        graded = {p: float(labels[p]) for p in order[:cards] if p not in skipped}
        standing = [p for p in order[:cards] if p in skipped]
        e = estimate(design, list(graded), list(graded.values()))
        skips = skip_bound(design, list(graded), list(graded.values()), standing)
        return read_project(design, settings, graded, e, skips=skips, skip_steps={p: skipped[p] for p in standing})

    return design, reading_after


def test_one_grader_who_skips_is_told_when_fresh_grades_alone_reach_the_target():
    """A manager's review: one grader skipping every 25th card saw "218 (218 to 218)" once the skips held the
    rule, where the stop came at 475 as the fresh grades outweighed the skips' worst case. The range now runs from
    the skipped items graded by another grader to the fresh grades' own stop, which holds the one grader's."""
    design, reading_after = _one_grader_skipping(25, 1400)
    end = reading_after(1400)
    assert end.done and end.skipped_at_stop > 0
    stop = end.stop_at
    held = [r for r in map(reading_after, range(150, 1400, 25)) if r.held_by_skips]
    assert held and held[0].graded + 20 < stop  # the skips held the rule well before the stop
    assert all(r.forecast.n == r.graded + r.skipped for r in held)  # another grader's stop: the range's middle
    assert all(r.forecast.low <= stop <= r.forecast.high and r.fresh_low <= stop <= r.fresh_high for r in held)
    assert (
        "if items go on being skipped as now (4% of those shown), fresh grades alone likely end it"
        in stopping_words(held[0])
    )
    assert held[0].next_look is None  # both looks are taken: no look to come
    rare = replace(held[0], skipped=1, graded=400)  # a share that rounds to 0% (a review read "0% skipped")
    assert "(under 1% of those shown)" in fresh_words(rare)
    unread = replace(held[0], skip_width=0.0, fresh_low=None, fresh_high=None)  # a stratum neither graded nor skipped
    assert fresh_words(unread) == ""  # no "fresh grades" sentence until the worst case can be read
    first = held[0]  # the presenter's caption gives both ways to the end
    assert held_short(first) == (
        f"{first.skipped} skipped items to grade first, or {first.fresh_low:,} to {first.fresh_high:,} graded items "
        "without them"
    )
    early = reading_after(100)  # before the looks: the range reaches the fresh grades' stop too
    assert early.skipped and not early.held_by_skips and early.forecast.high >= early.fresh_high
    assert "stand (another grader gets them once they alone keep the rule from stopping); if items" in stopping_words(
        early
    )
    # the saving at the stop says what the skips cost, in grades
    assert end.stop_without_skips is not None and end.stop_without_skips < stop
    cost = f"cost {stop - end.stop_without_skips:,} more grades: without them the rule had the target at"
    assert cost in saving_note(end) and cost in saving_headline(end)[1]
    assert cost in saving_words(end)


def test_skips_whose_worst_case_is_as_wide_as_the_target_are_never_outweighed_by_fresh_grades():
    design, reading_after = _one_grader_skipping(4, 400)  # a quarter of the items skipped: wider than ±0.05
    reading = reading_after(400)
    assert not reading.done and reading.skip_width >= 0.05 and reading.fresh_low is None
    assert reading.forecast.high < design.N  # no stop to range over: never one at the pool's size
    assert "fresh grades alone never end it: the skipped items' worst case (±0." in stopping_words(reading)
    assert "is at least as wide as the target ±0.050" in stopping_words(reading)


def test_a_grader_who_has_seen_every_item_is_told_only_the_skipped_items_can_end_it():
    items = synthetic_items(200, signal=1.0, seed=5)
    labels = labels_of(items)
    design = prepared_design(items)
    order = [int(p) for p in replay_queue(design, labels, replication_orders(labels.size, 2, 1), 200)[0]]
    graded = {p: float(labels[p]) for p in order[:150]}
    skips = skip_bound(design, list(graded), list(graded.values()), order[150:])
    e = estimate(design, list(graded), list(graded.values()))
    reading = read_project(design, {"target_half_width": 0.05}, graded, e, skips=skips)
    assert not reading.done and reading.fresh_left == 0 and reading.fresh_low is None
    assert "every other item is graded, so only the skipped items can end it" in stopping_words(reading)


def test_a_stop_the_skips_held_is_dated_when_they_stopped_holding_it():
    """Items skipped before the looks said done and graded after it (by another grader): the stop is where the
    rule, with the skips standing then, said done, and its estimate counts every grade up to there; skips that
    came after the stop move nothing."""
    design, graded = _graded(400)
    positions, values = list(graded), list(graded.values())
    e = estimate(design, positions, values)
    alone = read_project(design, SETTINGS, graded, e)
    stop = alone.stop_at
    late = positions[stop + 5 : stop + 45]  # graded after the looks said done, skipped after the first grade
    held = read_project(design, SETTINGS, graded, e, skip_steps={p: 1 for p in late})
    assert held.done and held.stop_at > stop + 5
    assert held.stop_value == pytest.approx(estimate(design, positions[: held.stop_at], values[: held.stop_at]).value)
    assert held.rule.half_width <= 0.1 and "widened" in held.rule.name and held.forecast.n == held.stop_at
    after = read_project(design, SETTINGS, graded, e, skip_steps={p: stop for p in late})
    assert (after.stop_at, after.stop_value, after.rule) == (alone.stop_at, alone.stop_value, alone.rule)


def test_the_stop_a_reading_dates_is_the_first_grade_at_which_the_reading_then_said_done():
    """Read after every grade, with the skips made by then: the first reading that says done is at the stop
    every later reading gives (never earlier: the dashboard said 'held' there), and a skip made after the stop
    changes nothing."""
    design, graded = _graded(400)
    positions, values = list(graded), list(graded.values())
    stop = read_project(design, SETTINGS, graded, estimate(design, positions, values)).stop_at
    steps = {p: stop - 3 for p in positions[stop + 20 : stop + 23]}  # skipped just before the look, graded later
    steps |= {p: stop + 1 for p in positions[stop + 40 : stop + 60]}  # skipped after the stop

    def reading_after(m: int):
        now = {p: graded[p] for p in positions[:m]}
        made = {p: before for p, before in steps.items() if before < m}
        standing = [p for p in made if p not in now]
        e = estimate(design, list(now), list(now.values()))
        skips = skip_bound(design, list(now), list(now.values()), standing)
        return read_project(design, SETTINGS, now, e, skips=skips, skip_steps=made)

    first = next(m for m in range(stop, len(positions) + 1) if reading_after(m).done)
    final = reading_after(len(positions))
    assert final.done and final.stop_at == first and first > stop
    assert all(reading_after(m).stop_at == first for m in (first, first + 30, len(positions)))


def test_the_score_the_manager_expects_sets_the_forecast_before_any_grade():
    """Before a grade the forecast is the surrogate's guess of the mean, unless the manager gave one: a mean of
    0.03 needs far fewer grades for the same half-width than the surrogate's guess near 0.5."""
    design, _ = _graded(0)
    e = estimate(design, [], [])
    guessed = read_project(design, SETTINGS, {}, e).forecast
    expected = read_project(design, {**SETTINGS, "expected_score": 0.03}, {}, e).forecast
    assert expected.n < guessed.n / 2
    assert expected.graded == guessed.graded == 0


def test_a_budget_fixed_in_advance_is_compared_at_its_own_precision_not_the_target():
    """The budget, not the target, sets a fixed budget's precision: its saving is against a uniform sample of
    the same precision (it showed +44% against uniform's size for a target it never reached), m grades with
    (1/m - 1/N) S^2 the design's variance, so (1 - deff)(1 - n/N): 1 - deff, which drops the finite-population
    correction, overstated it (a manager's review); and the headline gives the half-width the budget is expected
    to reach."""
    design, graded = _graded(60)
    settings = {"target_half_width": 0.02, "planned_budget": 60, "budget_fixed": True}
    e = estimate(design, list(graded), list(graded.values()))
    reading = read_project(design, settings, graded, e)
    assert reading.regime == "fixed" and reading.saving_known
    assert reading.saving.fixed_n == reading.saving.same_regime == pytest.approx((1 - e.deff) * (1 - 60 / design.N))
    assert reading.saving.uniform_fixed == round(1 / (e.deff / 60 + (1 - e.deff) / design.N))  # whole grades
    assert reading.budget_half_width == pytest.approx(reading.fixed_n.half_width, rel=1e-6)  # at the budget now
    words = headline_words(reading, 0.95)
    assert words.startswith("With the budget fixed in advance at 60 grades, expect about ±")
    assert "the target is ±0.020" in words and "same precision" in saving_words(reading)
    before = read_project(design, settings, {}, estimate(design, [], []))
    assert not before.saving_known and 0 < before.budget_half_width < 0.5  # planned from the surrogate
    assert np.isfinite(before.saving.fixed_n) and saving_metric(before)[0].startswith("Planned")


def test_once_done_the_forecast_is_the_stop_and_the_saving_is_never_planned_after_a_grade():
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    reading = read_project(design, SETTINGS, graded, e)
    assert reading.done and (reading.forecast.low, reading.forecast.n, reading.forecast.high) == (reading.stop_at,) * 3
    assert headline_words(reading, 0.95).startswith(f"Done: ±0.100 at 95% reached at {reading.stop_at:,} graded items")
    few = dict(list(graded.items())[:3])  # some strata without 2 grades: withheld, as on the dashboard
    early = read_project(design, SETTINGS, few, estimate(design, list(few), list(few.values())))
    assert not early.saving_known and saving_metric(early)[1] == "withheld"
    assert saving_note(early) == "until every stratum has 2 grades"  # why, under the metric, not in its help only
    assert "uniform random sampling" not in headline_words(early, 0.95)  # withheld there too, not quoted
    thirty = dict(list(graded.items())[:30])  # the forecast's draws said 87, the grades' S^2 89
    grading = read_project(design, SETTINGS, thirty, estimate(design, list(thirty), list(thirty.values())))
    assert not grading.done and saving_metric(grading)[0].startswith("Expected saving")  # a forecast, said so
    assert saving_note(grading).startswith(f"at the forecast stop ({grading.forecast.n:,} items), fixed-n likely ")
    # the expected saving's range: the fixed-n share at the forecast range's high and low (a manager's review read
    # one number swing from -92% to +63% over seven runs), none once done
    f, s = grading.forecast, grading.saving
    assert f.low < f.n < f.high and s.fixed_n_low < s.fixed_n < s.fixed_n_high
    assert s.fixed_n_low == pytest.approx(1 - f.high / s.uniform_fixed, abs=0.01)
    assert f"likely {percent(s.fixed_n_low, signed=True)} to " in saving_words(grading)
    assert np.isnan(reading.saving.fixed_n_low) and "likely" not in saving_words(reading)
    s = reading.saving  # done: the saving had, and the uniform grades each share is of
    assert saving_note(reading) == f"vs {s.uniform_fixed:,} · {s.uniform_same:,} uniform grades"
    _, words = saving_headline(grading)  # read under the big number: "45% fewer grades than uniform sampling, ..."
    low, high = (percent(grading.saving.fixed_n_low, signed=True), percent(grading.saving.fixed_n_high, signed=True))
    likely = f"likely {low} to {high}"  # the range the dashboard gives beside it (a review missed it here)
    g = grading.saving  # and uniform's two needs, short: the comparisons' counts made six lines on the presenter
    assert words == (
        f"grades than uniform sampling, expected at the forecast stop of {grading.forecast.n:,} items, {likely} "
        f"(uniform random sampling needs about {g.uniform_fixed:,} with the usual fixed-n interval, "
        f"{g.uniform_same:,} stopped by the same rule)"
    )
    assert saving_metric(reading)[0].startswith("Saving") and "uniform random sampling" in headline_words(grading, 0.95)
    for read in (reading, early, grading):  # one number for what uniform sampling needs: the saving's
        assert read.forecast.uniform == read.saving.uniform_fixed


def test_grades_after_the_stop_leave_the_reported_estimate_at_the_stop():
    """Cards held when the rule said done are graded after it: the estimate reported stays the stop's, with the
    interval read there, and says what all the grades give."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    at_stop = dict(list(graded.items())[:stop])
    e_stop = estimate(design, list(at_stop), list(at_stop.values()))
    assert reported_estimate(read_project(design, SETTINGS, at_stop, e_stop), e_stop) == (e_stop.value, "")
    later = dict(list(graded.items())[: stop + 5])
    e_later = estimate(design, list(later), list(later.values()))
    value, when = reported_estimate(read_project(design, SETTINGS, later, e_later), e_later)
    assert value == pytest.approx(e_stop.value) and value != e_later.value
    assert when == f"at the stop ({stop:,} graded items; {e_later.value:.3f} with all {stop + 5:,})"


def test_the_stops_estimate_goes_out_with_its_own_standard_error_and_grades():
    """The estimates export, lm-eval's results and Inspect's score paired the stop's estimate with the standard
    error and count of every grade given since (an integrator's review: 0.645 from 18 grades beside se 0.0839
    and 19 items): the row is read where its estimate was."""
    from core.exports.report import criterion_rows
    from core.services.criteria_reading import read_criteria
    from core.services.live import Live

    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    at_stop = dict(list(graded.items())[:stop])
    e_stop = estimate(design, list(at_stop), list(at_stop.values()))
    later = dict(list(graded.items())[: stop + 5])
    e_later = estimate(design, list(later), list(later.values()))
    reading = read_project(design, SETTINGS, later, e_later)
    reported = reported_from(design, reading, later, e_later)
    assert (reported.value, reported.se, reported.n) == pytest.approx((e_stop.value, e_stop.se, stop))
    assert reported_from(design, read_project(design, SETTINGS, at_stop, e_stop), at_stop, e_stop) is e_stop
    (row,) = criterion_rows(read_criteria(design, SETTINGS, {}, Live(later, e_later, None, None, reading, {}), ()))
    assert (row["estimate"], row["se"], row["graded_items"], row["of_graded_items"]) == pytest.approx(
        (e_stop.value, e_stop.se, stop, stop + 5)
    )
    assert (row["fixed_n_low"], row["fixed_n_high"]) == pytest.approx((e_stop.ci_low, e_stop.ci_high))
    assert row["anytime_low"] is None and e_later.se != pytest.approx(e_stop.se)


def test_another_estimator_at_the_stop_reports_the_estimate_the_rules_interval_is_read_around():
    """The dashboard's estimator picker showed the difference estimator's value beside the looks' interval,
    which is read around the stratified estimate: the value reported is the stop's, and the other is named."""
    design, graded = _graded(400)
    e = estimate(design, list(graded), list(graded.values()))
    stop = read_project(design, SETTINGS, graded, e).stop_at
    at_stop = dict(list(graded.items())[:stop])
    stratified = estimate(design, list(at_stop), list(at_stop.values()))
    difference = estimate(design, list(at_stop), list(at_stop.values()), method="difference")
    assert difference.value != pytest.approx(stratified.value)
    value, when = reported_estimate(read_project(design, SETTINGS, at_stop, difference), difference)
    assert value == pytest.approx(stratified.value)
    assert when.startswith("at the stop") and f"{difference.value:.3f} with the difference estimator" in when


def test_the_presenters_saving_names_the_grades_saved_as_fewer_or_more():
    """'3% fewer grades than uniform sampling (5 grades, ...)' read as if uniform needed 5 grades."""
    design, graded = _graded(400)
    reading = read_project(design, SETTINGS, graded, estimate(design, list(graded), list(graded.values())))
    s = reading.saving
    number, words = saving_headline(reading)
    grades = abs(round(s.uniform_fixed * s.fixed_n))
    fewer = f"{grades:,} grade{'s' if grades != 1 else ''} {'fewer' if s.fixed_n >= 0 else 'more'}"
    direction = "fewer" if s.fixed_n >= 0 else "more"  # in the big number itself: "4%" alone read as a saving
    assert number == f"{percent(abs(s.fixed_n))} {direction}" and words.startswith("grades than uniform sampling")
    assert f"({fewer} than the {s.uniform_fixed:,.0f} a uniform" in words
    tiny = replace(reading, saving=replace(s, fixed_n=0.005))  # 1 grade in 200: not rounded up to "1%"
    assert saving_headline(tiny)[0] == "<1% fewer"
    same = abs(round(s.uniform_same * s.same_regime))  # the other comparison as a count too, with its share
    more = f"{same:,} grade{'s' if same != 1 else ''} {'fewer' if s.same_regime >= 0 else 'more'}"
    assert (
        f"; {more} than the {s.uniform_same:,.0f} it needs stopped by the same rule ({percent(abs(s.same_regime))})"
        in (words)
    )
    even = replace(reading, saving=replace(s, fixed_n=0.001))  # no whole grade: "0 grades fewer (0%)" read oddly
    assert f"(as many grades as the {s.uniform_fixed:,.0f} a uniform sample needs" in saving_headline(even)[1]


def test_the_presenter_says_where_grading_stands_in_a_few_words():
    """A review found the presenter's only status a small grey footnote: the count's cell now says it."""
    design, graded = _graded(400)
    done = read_project(design, SETTINGS, graded, estimate(design, list(graded), list(graded.values())))
    assert status_short(done) == f"done at {done.stop_at:,}: ±0.100 reached"
    few = dict(list(graded.items())[:30])
    going = read_project(design, SETTINGS, few, estimate(design, list(few), list(few.values())))
    assert status_short(going) == f"about {going.items_left:,} more items to ±0.100" and going.items_left > 1
    e_few = estimate(design, list(few), list(few.values()))
    fixed = read_project(design, {**SETTINGS, "budget_fixed": True, "planned_budget": 50}, few, e_few)
    assert status_short(fixed) == "20 more items to the budget"
    held = replace(going, held_by_skips=True, skipped=3)
    assert status_short(held) == held_short(held) == "3 skipped items to grade first"


def test_the_headline_counts_the_grades_a_share_graded_twice_costs():
    """Double grading of half the items left the headline at "grade about 223 items": the grades it costs too."""
    design, graded = _graded(400)
    few = dict(list(graded.items())[:30])
    e = estimate(design, list(few), list(few.values()))
    once = read_project(design, SETTINGS, few, e)
    twice = read_project(design, {**SETTINGS, "overlap": 0.5}, few, e)
    assert "graded twice" not in headline_words(once, 0.95)
    grades = round(twice.forecast.n * 1.5)
    assert headline_words(twice, 0.95).endswith(f", about {grades:,} grades with 50% of the items graded twice")
    audited = read_project(design, {**SETTINGS, "overlap": 0.5, "audit_share": 0.1}, few, e)  # a reviewer's time
    reviews = round(audited.forecast.n * 0.1)
    assert headline_words(audited, 0.95).endswith(
        f"graded twice, and about {reviews:,} audit reviews (10% of the items graded)"
    )


def test_before_any_grade_a_design_of_one_stratum_plans_no_saving_against_uniform_under_its_own_rule():
    """One stratum is uniform random sampling: its planned saving under the same rule is 0, read on the forecast's
    own draws. Scaled from Bernoulli grades at the surrogate's mean (clipped at 0.02 for a surrogate that agrees
    with itself seldom), it showed +42% on a real pool (a manager's review)."""
    items = synthetic_items(1000, signal=1.0, seed=5)
    items["stratum"], items["agreement"], items["semantic_entropy"] = 0, 0.05, 2.0
    design = prepared_design(items)
    assert design.H == 1
    for expected in (None, 0.4):
        reading = read_project(design, {**SETTINGS, "expected_score": expected}, {}, estimate(design, [], []))
        assert reading.saving.same_regime == 0 and reading.saving.uniform_same == reading.forecast.n


def test_under_the_anytime_rule_one_grade_does_not_halve_the_forecast_and_no_grade_reads_no_nan():
    """The fixed-n over the anytime half-width is read from the intervals only near the n0 they are tuned for:
    read at the first grade, where both are [0, 1], it was 1, and the forecast fell from 441 grades to 194 with
    that grade (a manager's review); before any grade the words said "half-width nan"."""
    settings = {"target_half_width": 0.05, "regime": "anytime"}
    design, _ = _graded(0)
    before = read_project(design, settings, {}, estimate(design, [], []))
    assert "nan" not in stopping_words(before) and "no grade yet" in stopping_words(before)
    for n in (1, 5):
        design, graded = _graded(n)
        e = estimate(design, list(graded), list(graded.values()))
        n0 = before.forecast.n
        sequence = anytime_interval(design, list(graded), list(graded.values()), n0)
        after = read_project(design, settings, graded, e, sequence)
        assert after.forecast.n > 0.7 * before.forecast.n, n


def test_the_forecast_never_asks_for_more_grades_than_the_pool_holds():
    """Where the looks wait on information the grades given say is short, the forecast reads n / I grades: on a
    pool of 40 it said 70, with a saving of -94% read at them (an integrator's review)."""
    items = synthetic_items(40, signal=1.0, seed=0)
    labels = labels_of(items)
    design = prepared_design(items)
    positions = replay_queue(design, labels, replication_orders(labels.size, 0, 1), 28)[0]
    graded = {int(p): float(labels[p]) for p in positions}
    reading = read_project(
        design, SETTINGS | {"target_half_width": 0.05}, graded, estimate(design, list(graded), list(graded.values()))
    )
    assert not reading.done and 0 < reading.information < 1  # the case: the looks wait, the draws said done
    assert reading.forecast.n <= design.N and reading.forecast.high <= design.N


def test_once_the_saving_is_known_the_forecast_gives_uniforms_grades_as_the_saving_does():
    """forecast.uniform_same (the forecast's draws) read 313 beside the saving's 316 (an integrator's review)."""
    design, graded = _graded(120)
    reading = read_project(design, SETTINGS, graded, estimate(design, list(graded), list(graded.values())))
    assert reading.saving_known
    assert (reading.forecast.uniform, reading.forecast.uniform_same) == (
        reading.saving.uniform_fixed,
        reading.saving.uniform_same,
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_the_forecast_moves_by_the_grade_not_between_two_models(seed):
    """A pool of 200 with a strong surrogate, read after every grade: the forecast swung 63, 117, 65, 66, 121 in
    five grades (a manager's review). The draws assumed every grade given sat where Neyman's shares put it, and
    said the stop was a grade away; the reading then fell back on the information read now, without the pool's
    finite size. With the grades given kept in their strata (core.stats.forecast.least_grades) and the fall-back
    read with 1 / n - 1 / N, no grade moves it by more than a fifth (here 1.37 and 1.55 before)."""
    from benchmarks.pools import make_pool
    from core.stats.allocation import FLOOR_KAPPA
    from core.stats.simulate import design_from_items, labels_of, replay_queue, replication_orders

    items = make_pool(200, 0.65, kind="binary", auroc=0.9, seed=seed)
    labels = labels_of(items)
    design = design_from_items(items, kappa=FLOOR_KAPPA)
    order = replay_queue(design, labels, replication_orders(labels.size, seed, 1), 150)[0]
    settings = {**SETTINGS, "target_half_width": 0.05}
    forecasts = []
    for k in range(50, 150):
        graded = {int(p): float(labels[p]) for p in order[:k]}
        reading = read_project(design, settings, graded, estimate(design, list(graded), list(graded.values())))
        if reading.done:
            break
        forecasts.append(reading.forecast.n)
        assert reading.forecast.low <= reading.forecast.n <= reading.forecast.high
    steps = np.array(forecasts[1:]) / np.array(forecasts[:-1])
    assert len(forecasts) > 20 and steps.max() <= 1.2 and steps.min() >= 1 / 1.2


def test_a_score_expected_far_from_the_grades_is_said_to_disagree_with_them():
    """A manager's review typed 0.0001 for a pool of mean 0.3: the forecast kept leaning on it (112 of 198
    projections missed the stop), and no page said the grades disagreed. Now the dashboard says so where the score
    lies outside the grades' fixed-n interval, and nothing where it lies inside, or none was given, or once done."""
    design, graded = _graded(400)
    thirty = dict(list(graded.items())[:30])
    grading = read_project(design, SETTINGS, thirty, estimate(design, list(thirty), list(thirty.values())))
    low, high = grading.fixed_n.low, grading.fixed_n.high
    assert expected_score_words(grading, None) is None and expected_score_words(grading, (low + high) / 2) is None
    words = expected_score_words(grading, 0.0001)
    assert words is not None and "(0.0001)" in words and "Projects page" in words
    assert expected_score_words(grading, min(high + 0.05, 1.0)) is not None
    done = read_project(design, SETTINGS, graded, estimate(design, list(graded), list(graded.values())))
    assert done.done and expected_score_words(done, 0.0001) is None


def test_the_saving_at_a_stop_before_the_grades_given_is_the_stops_own():
    """Grades given after the stop (a correction reopened grading, another took it back) moved the saving shown
    for the same stop, +26% to +27% (a manager's review): it read S^2 from every grade while the estimate and its
    interval were the stop's. It is read from the stop's grades, as the reading of those grades alone gives it."""
    design, graded = _graded(400)
    everything = read_project(design, SETTINGS, graded, estimate(design, list(graded), list(graded.values())))
    assert everything.done and everything.stop_at < 400
    first = dict(list(graded.items())[: everything.stop_at])
    at_stop = read_project(design, SETTINGS, first, estimate(design, list(first), list(first.values())))
    assert at_stop.stop_at == everything.stop_at and at_stop.saving == everything.saving
