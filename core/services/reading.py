"""One reading of a project: every interval with its name and level, the one the stopping rule reads, the
stopping decision, the forecast and the saving, decided here once for the dashboard, the presenter view, the
setup headline and the report, which render it and decide nothing.

The regime (core.stats.stopping) is the project's (``ProjectSettings.stopping``):

- ``looks``: the rule reads the repeated confidence interval of the latest planned look
  (core.stats.stopping.LookReplay over the grades in grading order, core.services.live_looks); done at the
  first look whose interval is at most the target wide. Until then the interval valid if grading stopped now is the anytime one.
- ``anytime``: the rule reads the anytime-valid confidence sequence; done once it is narrow enough.
- ``fixed``: the rule is the budget n0; the fixed-n interval is read there.

Skips are not grades: items skipped and never graded widen the interval the rule reads by their worst case
(core.stats.skips: the estimate had they all been 0, or all 1; Manski 1989), so a project whose skips
alone keep it wider than the target cannot be done, and says why.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from core.services.live_looks import live_looks
from core.services.progress import counted, level_percent, percent
from core.settings import ProjectSettings, SettingsLike
from core.stats.allocation import Design, planned_allocation
from core.stats.confseq import AnytimeInterval
from core.stats.estimate import Estimate
from core.stats.estimate import estimate as compute_estimate
from core.stats.forecast import (
    RANGE,
    Forecast,
    StopSaving,
    expected_saving,
    forecast,
    grades_excess_kurtosis,
    measured_width_ratio,
    stop_saving,
    whole_grades,
)
from core.stats.looks import look_plan
from core.stats.savings import planned_design_effect, same_precision_grades
from core.stats.skips import SkipBound
from core.stats.stopping import ANYTIME, FIXED, LOOKS, LOOKS_METHOD, REGIME_NAMES, held_stop


@dataclass(frozen=True)
class Interval:
    """One interval of the reading: what it is (``name``), its ``level``, ``low`` and ``high``."""

    name: str
    level: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


FIXED_N = "fixed-n interval, valid when read once at a number of grades decided in advance"
ANYTIME_NAME = (
    "anytime-valid interval, valid however often you look and whenever you stop; each grade only narrows it, each "
    "one cut to where it overlaps every earlier one, though a reviewer's final grade rereads them and may widen it"
)
WHENEVER = "valid whenever you stop"
"""When the anytime-valid interval holds, in words (interval_when)."""
WIDENED = ", widened by the skipped items' worst case"
"""What an interval's name says once the skips' bound is added to it (`widened`)."""


def intervals(estimate: Estimate, anytime: AnytimeInterval | None) -> tuple[Interval, Interval | None]:
    """The fixed-n interval of ``estimate`` and the anytime-valid one of ``anytime`` (None without it), named."""
    fixed_n = Interval(FIXED_N, estimate.level, estimate.ci_low, estimate.ci_high)
    return fixed_n, None if anytime is None else Interval(ANYTIME_NAME, anytime.level, anytime.low, anytime.high)


@dataclass(frozen=True)
class Reading:
    """The project read once (module docstring).

    regime: core.stats.stopping's; target: the half-width the rule stops at; graded: items graded.
    fixed_n, anytime: those intervals now (anytime None where not computed); rule: the interval the stopping
    rule reads (None before the first look); now: the interval to report if grading stopped now; done: the
    rule's decision; stop_at: grades at which it said done (None: not yet); looks_taken: grades at each planned
    look taken (0: not yet); information: the share of the last look's information reached (looks only);
    forecast: grades to stop with an 80% range; skipped: items skipped and not graded, held_by_skips: the
    rule would be done but for them; saving: at the stop (or the forecast stop) against uniform
    sampling, from the grades' S^2 once every stratum has 2 grades (``saving_known``), else from Bernoulli
    grades at the surrogate's mean (a plan, not a measurement); with a budget fixed in advance, at the budget
    against uniform sampling of the same precision, and budget_half_width the fixed-n interval's half-width
    expected there (the budget, not the target, sets it; None in the other regimes); stop_value: the estimate
    at the stop the looks said done at (None otherwise), which grades given after it (cards held when it came,
    a target widened later) leave as it was: `reported_estimate`; next_look: about how many grades the next
    planned look comes at (`next_look_grades`; None outside planned looks and once done).
    """

    regime: str
    target: float
    graded: int
    fixed_n: Interval
    anytime: Interval | None
    rule: Interval | None
    now: Interval
    done: bool
    stop_at: int | None
    looks_taken: tuple[int, ...]
    information: float
    forecast: Forecast
    saving: StopSaving
    saving_known: bool
    budget: int | None = None
    skipped: int = 0
    held_by_skips: bool = False
    others: bool = False
    """Whether someone besides those who skipped the items standing skipped grades here: the queue hands them
    those items once they alone hold the rule, so the stop comes when they are graded."""
    fresh_low: int | None = None
    fresh_high: int | None = None
    """While skipped items stand, the rule is not done and nobody else grades here (``others``): the 80% range of
    the stop by fresh grades alone, items skipped at their share now (`_fresh_alone`); None otherwise, and where
    the skips' worst case alone is as wide as the target (``skip_width``) or no fresh item is left
    (``fresh_left``): fresh grades alone never reach it."""
    skip_width: float = 0.0
    """How much the skipped items' worst case widens the rule's interval now, on average on each side."""
    fresh_left: int = 0
    """Items neither graded nor skipped."""
    skipped_at_stop: int = 0
    """Skipped items standing at the stop, whose worst case widened the interval the rule read there (and cost the
    grades that brought it within the target: the saving at the stop counts them against the design)."""
    stop_without_skips: int | None = None
    """Where skips held the stop: the grades at which the grades alone had it (the skips cost the grades from there
    to ``stop_at``); None otherwise, and where the record of when each skip was made is not given."""
    budget_half_width: float | None = None
    stop_value: float | None = None
    next_look: int | None = None
    overlap: float = 0.0
    """The share of items graded twice (core.settings.ProjectSettings.overlap): each graded item costs 1 + overlap
    grades on average, which the headline says beside the items (`headline_words`)."""
    audit_share: float = 0.0
    """The pool's share a reviewer audits once graded (core.settings.ProjectSettings.audit_share): about that share
    of the items to the stop comes to review, which the headline says too (reviews a project plans)."""

    @property
    def regime_name(self) -> str:
        return REGIME_NAMES[self.regime]

    @property
    def budget_fixed(self) -> bool:
        """Whether the budget is fixed in advance (the ``fixed`` regime): the budget, not the target, stops it."""
        return self.regime == FIXED

    @property
    def items_left(self) -> int:
        """Graded items still needed: 0 once done; while skips hold the stop, the skipped items (what the rule
        waits for); else the forecast's middle count less the items graded."""
        if self.held_by_skips:
            return self.skipped
        return 0 if self.done else max(self.forecast.n - self.graded, 0)


def read_project(
    design: Design,
    settings: SettingsLike,
    graded: Mapping[int, float],
    estimate: Estimate,
    anytime: AnytimeInterval | None = None,
    *,
    skips: SkipBound | None = None,
    skip_steps: Mapping[int, int] | None = None,
    others: bool = False,
) -> Reading:
    """The reading of a project whose items at ``graded`` (position -> grade, in grading order) gave the
    fixed-n ``estimate``; ``anytime`` its confidence sequence (None where the page did not compute it);
    ``skips`` the bound of the items skipped and not graded (None: none); ``skip_steps`` every item skipped
    (and not taken back) -> the grades given before its skip (Store.skip_steps): the looks then read each skip
    from the grade after it until its item is graded, at every grade from the look on
    (core.stats.stopping.held_stop), as the simulator's replay does, so a stop the skips held is dated when
    they let it go, and a skip made after the stop changes nothing. None: the skips standing now widen the
    look's interval (a caller without the record of when each was made). ``others``: someone besides the skippers
    grades here (`Reading.others`); else the forecast's range reaches the stop fresh grades alone give."""
    settings = ProjectSettings.from_dict(settings)
    regime, target = settings.stopping, float(settings.target_half_width)
    positions = np.fromiter(graded.keys(), dtype=np.int64, count=len(graded))
    grades = np.fromiter(graded.values(), dtype=float, count=len(graded))
    fixed_n, sequence = intervals(estimate, anytime)
    budget = settings.budget(design.N)
    taken: tuple[int, ...] = ()
    information = float("nan")
    stop_at = stop_value = None
    if regime == FIXED:
        done = estimate.n >= (budget or design.N)
        rule, stop_at = fixed_n, (estimate.n if done else None)
    elif regime == ANYTIME:
        rule = sequence
        done = sequence is not None and estimate.n > 0 and sequence.half_width <= target
        stop_at = estimate.n if done else None
    else:
        plan = look_plan()
        looks = live_looks(design, positions, grades, target)
        taken = tuple(int(n) for n in looks.taken[0])
        done = bool(looks.stopped[0])
        last = int(looks.last[0])
        rule = None
        if last >= 0:
            rule = Interval(look_name(last), plan.levels[last], float(looks.last_low[0]), float(looks.last_high[0]))
        stop_at = int(looks.n[0]) if done else None
        stop_value = float(looks.value[0]) if done else None
        half = fixed_n.half_width * plan.constants[-1] / 1.96  # the last look's width, to first order
        information = float(min((target / half) ** 2, 1.0)) if half > 0 and not estimate.missing else 0.0
    widen = skip_widening(estimate, skips)
    sequence = widened(sequence, widen)
    if regime == LOOKS and done and skip_steps is not None:  # the skips read as they stood at each grade
        look = int(looks.look[0])
        held = held_stop(design, positions, grades, stop_at, plan.levels[look], target, dict(skip_steps))
        held_by_skips = held is not None and not held.done  # None: no skip stood at the look, its stop stands
        skipped_at_stop = held.standing if held is not None and held.done else 0
        stop_without_skips = stop_at if skipped_at_stop and held is not None and held.n > stop_at else None
        if held is not None:
            rule = Interval(
                look_name(look) + (WIDENED if held.standing else ""), plan.levels[look], held.low, held.high
            )
            done = held.done
            stop_at, stop_value = (held.n, held.value) if held.done else (None, None)
    else:
        rule = widened(rule, widen)
        held_by_skips = bool(done and regime != FIXED and rule is not None and rule.half_width > target + 1e-12)
        done = done and not held_by_skips
        stop_at, stop_value = (stop_at, stop_value) if done else (None, None)
        widened_at_stop = done and regime != FIXED and skips is not None and widen != (0.0, 0.0)
        skipped_at_stop = skips.skipped if widened_at_stop else 0
        stop_without_skips = None
    now = rule if (done and rule is not None) or sequence is None else sequence
    if regime == FIXED:
        now = widened(fixed_n, widen)
    width_ratio = _width_ratio(fixed_n, sequence, anytime) if regime == ANYTIME else None
    project = functools.partial(
        forecast,
        design,
        positions,
        grades,
        regime=regime,
        n0=budget,
        expected=settings.expected_score,
        width_ratio=width_ratio,
        levels=settings.grading_scale.values,
    )
    forecast_ = project(target)
    skipped = 0 if skips is None else skips.skipped
    fresh_left = max(design.N - estimate.n - skipped, 0)
    fresh = None
    if skipped and regime != FIXED and not done and not others:
        fresh = _fresh_alone(project, target, widen, skipped, estimate.n, information, design.N)
    if done and stop_at is not None:  # the rule said done: the stop is known, not forecast
        forecast_ = replace(forecast_, n=stop_at, low=stop_at, high=stop_at)
    elif held_by_skips:  # the rule waits on the skipped items alone: the stop comes once they are graded
        held_at = estimate.n + skipped
        forecast_ = replace(forecast_, n=held_at, low=held_at, high=held_at)
    elif regime == LOOKS and 0 < information < 1 and forecast_.n <= estimate.n + 1:
        forecast_ = _behind(forecast_, estimate.n, information, design.N)
    if fresh is not None:  # nobody else grades here: the range reaches the stop fresh grades alone give
        forecast_ = replace(forecast_, low=min(forecast_.low, fresh[0]), high=max(forecast_.high, fresh[1]))
    next_look = None
    if regime == LOOKS and not done and sum(n > 0 for n in taken) < look_plan().count:  # a look still to come
        plan = look_plan()
        following = plan.fractions[min(sum(n > 0 for n in taken), plan.count - 1)]
        next_look = next_look_grades(forecast_, estimate.n, information, following, design.N)
    if regime == FIXED:
        saving, budget_half = _budget_saving(design, estimate, budget or design.N)
    else:
        # the saving at a stop before the grades given now (a correction reopened grading, and another took it
        # back) is the stop's grades', as the estimate reported there is: read from every grade, one stop showed
        # +26% and, 17 grades later, +27% (a manager's review)
        at_stop = _stop_estimate(design, graded, stop_at) if stop_at is not None and stop_at < estimate.n else estimate
        excess = functools.partial(grades_excess_kurtosis, design, positions, grades)  # read where it is used
        saving = _saving(design, at_stop, forecast_, stop_at, target, regime, width_ratio, excess)
        budget_half = None
    if saving.uniform_fixed is not None:  # one number for what uniform sampling needs: the saving's (the
        # forecast's own under the same rule read 313 beside the saving's 316: an integrator's review)
        forecast_ = replace(forecast_, uniform=saving.uniform_fixed, uniform_same=saving.uniform_same or 0)
    return Reading(
        regime=regime,
        target=target,
        graded=estimate.n,
        fixed_n=fixed_n,
        anytime=sequence,
        rule=rule,
        now=now,
        done=bool(done),
        stop_at=stop_at,
        looks_taken=taken,
        information=information,
        forecast=forecast_,
        saving=saving,
        saving_known=estimate.saving is not None
        and bool(np.isfinite(saving.fixed_n))
        and saving.uniform_fixed is not None,
        budget=budget,
        skipped=skipped,
        held_by_skips=held_by_skips,
        others=others,
        fresh_left=fresh_left,
        stop_without_skips=stop_without_skips,
        fresh_low=None if fresh is None else fresh[0],
        fresh_high=None if fresh is None else fresh[1],
        skip_width=sum(widen) / 2,
        skipped_at_stop=skipped_at_stop,
        budget_half_width=budget_half,
        stop_value=stop_value,
        next_look=next_look,
        overlap=float(settings.overlap),
        audit_share=float(settings.audit_share),
    )


def _behind(forecast_: Forecast, graded: int, information: float, size: int) -> Forecast:
    """The forecast where its draws put the stop among the grades given, yet the last look's interval is still
    wider than the target: the information read now, from those grades, says the stop needs about n / I grades
    (the half-width shrinks as 1 / sqrt(n)), and the range is widened to hold it. (A manager's review saw "1
    more item" and "ETA < 1 min" after each of 11 grades while the information rose from 89% to 99%; the
    draws, whose model of the interval is a little narrower than the one the looks read near the stop, had
    all passed.) At most ``size``, the pool's items."""
    at = grades_at_information(graded, information, 1.0, size)
    return replace(forecast_, n=at, high=max(forecast_.high, at))


def _fresh_alone(
    project: Callable[[float], Forecast],
    target: float,
    widen: tuple[float, float],
    skipped: int,
    graded: int,
    information: float,
    size: int,
) -> tuple[int, int] | None:
    """The 80% range of the stop by fresh grades alone: nobody grades the skipped items (a project of one grader:
    a skipped item never goes back to its skipper) and items go on being skipped at the share q they are, so the
    skips' worst case keeps its width, w = (down + up) / 2 on average on each side (core.stats.skips), which is
    in proportion to q, and the rule's own interval must come within target - w: ``project``'s forecast at that
    half-width. q is known from the items shown, ``skipped`` of ``graded`` + ``skipped``, only as a binomial
    share is: the range runs from the forecast's low at the low end of q's 80% range (Jeffreys' Beta posterior,
    Beta(k + 1/2, n - k + 1/2); Brown, Cai and DasGupta 2001) to its high at the high end, at most the grades
    the fresh items left of the pool's ``size`` give at that share (all of them where w there is as wide as the
    target). With q as read alone the range was too narrow where the forecast at one half-width is nearly
    certain (binary grades of mean 0.5). None where w at the low end is as wide as the target (fresh grades
    alone never bring the interval within it), where no fresh item is left, and where w cannot be read yet (a
    stratum neither graded nor skipped: a range then quoted as fresh grades' was the plain forecast, and one
    grade later "never": an outside review). (The forecast of the skipped items graded alone, a range of one
    point, said 218 to 218 where the one grader's stop came at 475: a manager's review;
    benchmarks/one_grader_skips.md measures this one.)"""
    w, share, left = sum(widen) / 2, skipped / (graded + skipped), size - graded - skipped
    low_share, high_share = stats.beta.ppf(RANGE, skipped + 0.5, graded + 0.5)
    low_w, high_w = w * low_share / share, w * high_share / share
    if w <= 0 or low_w >= target or not left:
        return None
    most = graded + max(round(left * (1 - share)), 1)  # the grades the items left give, skipped at the share q
    low = min(_stop_within(project, target - low_w, target, graded, information, size).low, most)
    high = most if high_w >= target else _stop_within(project, target - high_w, target, graded, information, size).high
    return low, max(min(high, most), low)


def _stop_within(
    project: Callable[[float], Forecast], half: float, target: float, graded: int, information: float, size: int
) -> Forecast:
    """``project``'s forecast of the stop at half-width ``half`` (below the ``target``); where its draws put it
    among the grades given, yet the look's interval is still wider than that, the ``information`` read now (the
    share of the target's, for ``looks``), rescaled to ``half``, says when (`_behind`), as for the rule itself."""
    fresh = project(half)
    needed = information * (half / target) ** 2  # the information is (half-width wanted / now)^2
    if 0 < needed < 1 and fresh.n <= graded + 1:
        fresh = _behind(fresh, graded, needed, size)
    return fresh


def grades_at_information(graded: int, information: float, fraction: float, size: int) -> int:
    """The grades at which the information read now, I after n grades, reaches ``fraction`` f: the variance falls
    as 1 / n - 1 / N (a sample of n of the pool's N items, Cochran 1977, eq. 2.8), so it is read at n' with
    1 / n' - 1 / N = (I / f) (1 / n - 1 / N); never before the next grade, at most N. Read as n f / I, without
    the pool's finite size, a pool of 200 said 124 at 64 grades where its stop came at 88 (a manager's review),
    and 70 for a pool of 40 (an integrator's)."""
    inverse = (information / fraction) * (1 / graded - 1 / size) + 1 / size
    return min(max(graded + 1, math.ceil(1 / inverse - 1e-9)), size)


def look_name(look: int) -> str:
    """The name of planned look ``look``'s interval (0-based), with its own level and the looks' together (a
    report read "95% interval at the stop (look 2 of 2, a repeated confidence interval at 95.2%)" as two levels
    of one interval: a manager's review)."""
    plan = look_plan()
    return (
        f"look {look + 1} of {plan.count}, a repeated confidence interval at {level_percent(plan.levels[look])} at "
        f"this look, {level_percent(plan.level)} over the looks together"
    )


def _saving(
    design: Design,
    estimate: Estimate,
    forecast_: Forecast,
    stop_at: int | None,
    target: float,
    regime: str,
    width_ratio: float | None,
    excess: Callable[[], float],
) -> StopSaving:
    """The saving at the stop (or the forecast stop): from the grades' S^2 once it is known (before the stop, with
    the range the grades' ``excess`` kurtosis, read only then, gives the uniform size: core.stats.forecast.
    expected_saving); before, a plan on the forecast's own draws, uniform's grades with the fixed-n interval and under the same rule alike
    (``uniform``, ``uniform_same``). Scaled from Bernoulli grades at the surrogate's mean, clipped at 0.02,
    the same rule's had shown +42% for a design of one stratum, plain uniform sampling (a manager's review)."""
    n = stop_at or max(forecast_.n, estimate.n)
    if estimate.saving is not None:
        live = estimate.saving
        if stop_at is not None:
            return stop_saving(n, live.s2, estimate.value, design.N, target, regime, width_ratio, live.apart)
        at = replace(forecast_, n=n)
        return expected_saving(at, live.s2, estimate.value, design.N, target, regime, width_ratio, live.apart, excess())
    same, fixed = forecast_.uniform_same, forecast_.uniform
    return StopSaving(1 - n / max(same, 1), 1 - n / max(fixed, 1), same, fixed)


def _budget_saving(design: Design, estimate: Estimate, budget: int) -> tuple[StopSaving, float]:
    """A budget fixed in advance: the saving at the budget against a uniform sample of the same precision
    (the fixed-n interval's own comparison: the budget, not the target, sets how precise it is), m grades
    (core.stats.savings.same_precision_grades) and 1 - budget / m, and the fixed-n interval's half-width
    expected at the budget. From the grades' design effect and interval once every stratum has 2 grades, to
    first order in 1 / n; before, from the surrogate's predicted stratum means and spreads and the planned
    allocation (core.stats.savings.planned_design_effect)."""
    if estimate.saving is not None:
        deff = estimate.saving.deff
        half = (estimate.ci_high - estimate.ci_low) / 2 * np.sqrt(estimate.n / max(budget, 1))
    else:
        deff, variance = planned_design_effect(
            design.weights, design.sizes, design.prior_mean, design.prior_sd, planned_allocation(design, budget)
        )
        half = stats.norm.ppf(0.5 + estimate.level / 2) * np.sqrt(variance)
    m = same_precision_grades(budget, deff, design.N) if deff > 0 else float("nan")
    uniform = whole_grades(m)
    return StopSaving(1 - budget / m, 1 - budget / m, uniform, uniform), float(half)


def skip_widening(estimate: Estimate, skips: SkipBound | None) -> tuple[float, float]:
    """How far the skipped items could move the estimate down and up (0, 0 without skips or an estimate)."""
    if skips is None or not skips.skipped or estimate.missing or not np.isfinite(skips.low + skips.high):
        return 0.0, 0.0
    return max(estimate.value - skips.low, 0.0), max(skips.high - estimate.value, 0.0)


def widened(interval: Interval | None, widen: tuple[float, float]) -> Interval | None:
    """``interval`` with the skips' worst case added to each side (the same interval without skips)."""
    if interval is None or widen == (0.0, 0.0):
        return interval
    name = interval.name + WIDENED
    return Interval(name, interval.level, max(interval.low - widen[0], 0.0), min(interval.high + widen[1], 1.0))


def _width_ratio(fixed_n: Interval, sequence: Interval | None, anytime: AnytimeInterval | None) -> float | None:
    """core.stats.forecast.measured_width_ratio of the intervals now (None without the sequence)."""
    if sequence is None or anytime is None:
        return None
    return measured_width_ratio((fixed_n.low, fixed_n.high), (sequence.low, sequence.high), anytime.n, anytime.n0)


def interval_label(reading: Reading) -> str:
    """The interval to report as a metric's short label, its level and kind in about 30 characters, which a
    quarter of the dashboard's width shows whole ('95.0% interval, valid whenever you stop' was cut to '...
    whenever y...'): '95% interval at the stop' (the looks' intervals hold together at the project's level;
    the look it was read at, and its own level, are in its name, `Interval.name`),
    '95% interval at the budget', '95% fixed-n interval' before the budget, else '95% anytime-valid
    interval'."""
    level = level_percent(reported_level(reading))
    if reading.regime == FIXED:
        return f"{level} interval at the budget" if reading.done else f"{level} fixed-n interval"
    if reading.done and reading.rule is not None and reading.regime == LOOKS:
        return f"{level} interval at the stop"
    return f"{level} anytime-valid interval"


def reported_level(reading: Reading) -> float:
    """The level to quote the interval to report (``reading.now``) at: at a stop at a planned look, the looks'
    joint level (95%: each look's interval is a little wider, 95.2% at the last, so that together they hold at
    95%; its name says the look's own), else the interval's own. One level on every page and in the report (a
    manager's review read "95%" on the Dashboard beside "95.2%" in the presenter view and the report)."""
    if reading.done and reading.rule is not None and reading.regime == LOOKS:
        return look_plan().level
    return reading.now.level


def looks_level_words(reading: Reading) -> str:
    """Why a look's interval reads 95.2% where the target says 95%, for the planned looks (else ""): each
    look's interval is a little wider than one fixed-n interval's, so that the looks hold together at the
    project's level (core.stats.looks)."""
    if reading.regime != LOOKS:
        return ""
    plan = look_plan()
    levels = " and ".join(map(level_percent, plan.levels))
    return (
        f"The planned looks' intervals are at {levels}, so that together they hold at {plan.level:.0%}, the "
        "level the target is set at. "
    )


def interval_when(reading: Reading) -> str:
    """When the headline interval holds, in words: 'at the stop (look 2 of 2)', 'valid whenever you stop'."""
    if reading.regime == FIXED:
        return "at the budget fixed in advance" if reading.done else "fixed-n, to be read at the budget"
    if reading.done and reading.rule is not None:
        return f"at the stop ({reading.rule.name.split(',')[0]})" if reading.regime == LOOKS else "at the stop"
    return WHENEVER


def stopping_words(reading: Reading, brief: bool = False) -> str:
    """The stopping rule's state in words for the dashboard and the presenter view; ``brief``: without how the
    planned looks are read (LOOKS_WORDS), which a page gives apart."""
    target = f"±{reading.target:.3f}"
    if reading.regime == FIXED:
        state = f"{reading.graded:,} of the {reading.budget:,} items of the budget fixed in advance graded"
        return f"Budget reached: {state}; report the fixed-n interval." if reading.done else f"{state}."
    if reading.held_by_skips:
        one, fresh = reading.skipped == 1, fresh_words(reading)
        return (
            f"Not done: {counted(reading.skipped, 'skipped item')} {'keeps' if one else 'keep'} the interval wider "
            f"than the target {target} ({'it could be 0 or 1' if one else 'they could be all 0 or all 1'}). Have "
            f"{'it' if one else 'them'} graded by another grader, or by whoever skipped {'it' if one else 'them'} "
            "(Grade page, My graded and skipped items)" + (f"; {fresh}." if fresh else ".")
        )
    if reading.regime == ANYTIME:
        if reading.done:
            return f"Done: the anytime-valid interval is within the target {target}."
        if reading.anytime is None:  # no grade yet: no interval to compare
            return f"Not done: no grade yet; the anytime-valid interval must come within the target {target}."
        return f"Anytime-valid half-width {reading.anytime.half_width:.3f} > target {target}.{_standing(reading)}"
    plan = look_plan()
    if reading.done:
        rule = reading.rule
        return (
            f"Done at {reading.stop_at:,} graded items: the interval at the stop, {rule.low:.3f} – {rule.high:.3f} "
            f"(±{rule.half_width:.3f}), is within the target {target}. Report it; more grades add nothing to it."
        )
    taken = [n for n in reading.looks_taken if n > 0]
    nxt = plan.fractions[min(len(taken), plan.count - 1)]
    last = (
        f" Look {len(taken)}, at {taken[-1]:,} graded items, read its {level_percent(plan.levels[len(taken) - 1])} "
        f"interval wider than {target}: grading goes on."
        if taken
        else ""
    )
    following = (
        f" The next comes at about {reading.next_look:,} graded items ({reading.graded:,} so far), once {nxt:.0%} of "
        f"the precision the target {target} needs is reached ({reading.information:.0%} now)."
        if reading.next_look is not None
        else ""
    )
    why = "" if brief else f" {LOOKS_WORDS}"
    return f"Planned looks: {len(taken)} of {plan.count} taken.{last}{following}{why}{_standing(reading)}"


LOOKS_WORDS = (
    "Grading may stop at a look; between looks the interval shown is the anytime-valid one, wider than a look's, "
    "which holds only at its look (after a target is tightened, the looks are read again against the new target, "
    "so a stop made at the old one no longer stands)."
)
"""How the planned looks are read, which `stopping_words` gives after where they stand (the dashboard, after a
review found its box of 130 words the same after every grade, gives it apart: `looks_words`)."""


def looks_words(reading: Reading) -> str:
    """LOOKS_WORDS where the project stops at planned looks and is not done (a page gives them under the brief
    `stopping_words`); "" otherwise."""
    return LOOKS_WORDS if reading.regime == LOOKS and not reading.done else ""


def _standing(reading: Reading) -> str:
    """The skipped items standing while the rule is not done (another grader gets them once they alone hold it),
    and the stop by fresh grades alone (`fresh_words`); "" without them."""
    if not reading.skipped or reading.done:
        return ""
    one = reading.skipped == 1
    fresh = fresh_words(reading)
    return (
        f" {counted(reading.skipped, 'skipped item')} {'stands' if one else 'stand'} (another grader gets "
        f"{'it' if one else 'them'} once {'it keeps' if one else 'they alone keep'} the rule from stopping)"
        + (f"; {fresh}." if fresh else ".")
    )


def status_short(reading: Reading) -> str:
    """Where grading stands, in a few words for a room (the presenter): "done at 172, ±0.050 reached", "8 skipped
    items to grade first" (`held_short`), "about 40 more items to ±0.050", or a fixed budget's items left (a review
    found the presenter's only status a small footnote)."""
    if reading.regime == FIXED:
        left = max((reading.budget or 0) - reading.graded, 0)
        return "done: the budget is graded" if reading.done else f"{counted(left, 'more item')} to the budget"
    if reading.done:
        at = "" if reading.stop_at is None else f" at {reading.stop_at:,}"
        return f"done{at}: ±{reading.target:.3f} reached"
    if reading.held_by_skips:
        return held_short(reading)
    return f"about {counted(reading.items_left, 'more item')} to ±{reading.target:.3f}"


def held_short(reading: Reading) -> str:
    """While skips hold the rule, what ends it, short (the presenter's `status_short`): "8 skipped items to grade first",
    and where nobody else grades here, ", or 459 to 592 graded items without them" (`fresh_words`' range)."""
    one = reading.skipped == 1
    alone = (
        f", or {reading.fresh_low:,} to {reading.fresh_high:,} graded items without {'it' if one else 'them'}"
        if reading.fresh_low is not None and reading.fresh_high is not None
        else ""
    )
    return f"{counted(reading.skipped, 'skipped item')} to grade first{alone}"


def fresh_words(reading: Reading) -> str:
    """Where skipped items stand, the rule is not done and nobody else grades here, when fresh grades alone bring it
    to the target (the forecast range reaches it: `_fresh_alone`), or that they never do; "" otherwise, and while
    the skips' worst case cannot be read yet."""
    if not reading.skipped or reading.done or reading.regime == FIXED or reading.others:
        return ""
    if not reading.fresh_left:
        return "every other item is graded, so only the skipped items can end it"
    if reading.fresh_low is None or reading.fresh_high is None:
        if reading.skip_width < reading.target:
            return ""  # the worst case is not read yet (a stratum neither graded nor skipped)
        return (
            f"fresh grades alone never end it: the skipped items' worst case (±{reading.skip_width:.3f}) is at least "
            f"as wide as the target ±{reading.target:.3f}"
        )
    share = reading.skipped / (reading.graded + reading.skipped)
    rate = "under 1%" if share < 0.005 else percent(share)
    stop = (
        f"{reading.fresh_low:,}"
        if reading.fresh_low == reading.fresh_high
        else f"{reading.fresh_low:,} to {reading.fresh_high:,}"
    )
    return (
        f"if items go on being skipped as now ({rate} of those shown), fresh grades alone likely end it at {stop} "
        "graded items"
    )


def next_look_grades(forecast_: Forecast, graded: int, information: float, fraction: float, size: int) -> int:
    """About how many grades the look at information ``fraction`` comes at: that fraction of the forecast stop,
    since the information grows about in proportion to the grades. (The information read now is no guide at
    first: a few grades' interval is wider than 1 / sqrt(n) extrapolates, so at 40 grades it read 13% on a
    project whose forecast stop was 156.) Where the forecast puts the look among the grades given, the
    information read now, from those grades, is the guide (`grades_at_information`; the forecast's own count
    said "1 more" grade after grade, while the look waited on 97% becoming 100%). Never sooner than the
    information can grow there: I = (target / h)^2, and h falls at most as 1 / n (as the exact bound of equal
    grades does, 3.7 / n, faster than the 1 / sqrt(n) of grades that vary), so I grows at most as n^2 and reaches
    f no sooner than n sqrt(f / I) (a review read "about 81" at 80 grades with 30% of the precision, then "about
    119" at 90, no look having come)."""
    by_forecast = math.ceil(fraction * forecast_.n)
    if by_forecast > graded or information <= 0:
        soonest = math.ceil(graded * math.sqrt(fraction / information)) if 0 < information < fraction else 0
        return min(max(graded + 1, by_forecast, soonest), size)
    return grades_at_information(graded, information, fraction, size)


def reported_estimate(reading: Reading, estimate: Estimate) -> tuple[float, str]:
    """The estimate to report and when it holds, in words: where the looks said done, the stop's, the centre of
    the interval read there (the looks read the stratified estimator, core.stats.stopping), with what the grades
    given since give (cards held when it came, a target widened later) or what ``estimate``'s other estimator
    gives; else the estimate of every grade ('')."""
    if reading.stop_value is None or reading.stop_at is None:
        return estimate.value, ""
    if reading.stop_at < estimate.n:
        return reading.stop_value, (
            f"at the stop ({reading.stop_at:,} graded items; {estimate.value:.3f} with all {estimate.n:,})"
        )
    if estimate.method != LOOKS_METHOD:
        return reading.stop_value, (
            f"at the stop, the {LOOKS_METHOD} estimate its interval is read around ({estimate.value:.3f} with the "
            f"{estimate.method} estimator)"
        )
    return estimate.value, ""


def reported_from(design: Design, reading: Reading, graded: Mapping[int, float], estimate: Estimate) -> Estimate:
    """The estimate the reported value comes from (`reported_estimate`), with its own standard error, grades and
    fixed-n interval: where the looks said done before the grades given now (or read another estimator than
    ``estimate``'s), the LOOKS_METHOD estimate of the first ``stop_at`` grades of ``graded`` (position -> grade,
    in grading order), else ``estimate``. The stop's value went out beside every grade's standard error and
    count (the estimates export, lm-eval's results, Inspect's score: an integrator's review), so estimate +-
    1.96 se mixed two sets of grades."""
    if not reported_estimate(reading, estimate)[1]:
        return estimate
    return _stop_estimate(design, graded, reading.stop_at)


def _stop_estimate(design: Design, graded: Mapping[int, float], stop_at: int) -> Estimate:
    """The LOOKS_METHOD estimate of the first ``stop_at`` grades of ``graded`` (position -> grade, in grading
    order): the one the looks read at the stop."""
    first = list(graded.items())[:stop_at]
    return compute_estimate(design, [p for p, _ in first], [g for _, g in first], method=LOOKS_METHOD)


def grades_words(n: int, low: int, high: int, range_name: str = "likely") -> str:
    """A forecast of grades in words: "about N (likely LOW to HIGH)", or N alone where the range is a point (a
    budget fixed in advance, or a stop already known)."""
    return f"about {n:,} ({range_name} {low:,} to {high:,})" if low < high else f"{n:,}"


def headline_words(reading: Reading, level: float) -> str:
    """The setup's headline: the grades the target needs (likely range; uniform's fixed-n size), the stop once the
    rule said done, or, with a budget fixed in advance, the half-width the budget is expected to give."""
    f, s = reading.forecast, reading.saving
    if reading.regime == FIXED:
        need = (
            ""
            if s.uniform_fixed is None
            else f"; uniform random sampling would need about {s.uniform_fixed:,} grades for the same precision"
        )
        return (
            f"With the budget fixed in advance at {reading.budget:,} grades, expect about "
            f"±{reading.budget_half_width:.3f} at {level:.0%} (the target is ±{reading.target:.3f}{need})"
        )
    # uniform's need is the saving's, said only where the saving is (withheld from the first grade until every
    # stratum has 2: the dashboard's "withheld" beside a headline quoting it read as two answers)
    told = reading.saving_known or reading.graded == 0
    uniform = [f"uniform random sampling would need about {s.uniform_fixed:,}"] if told else []
    if reading.done:
        more = f" ({uniform[0]})" if uniform else ""
        return f"Done: ±{reading.target:.3f} at {level:.0%} reached at {reading.stop_at:,} graded items{more}"
    if reading.held_by_skips:
        one = reading.skipped == 1
        return (
            f"±{reading.target:.3f} at {level:.0%} is reached once the {counted(reading.skipped, 'skipped item')} "
            f"{'is' if one else 'are'} graded ({f.n:,} graded items in all)"
            + (f"; {fresh}" if (fresh := fresh_words(reading)) else "")
        )
    inside = ([f"likely {f.low:,} to {f.high:,}"] if f.low < f.high else []) + uniform
    more = f" ({'; '.join(inside)})" if inside else ""
    # a share graded twice costs grades the items do not count (a manager setting it saw no change: a review)
    twice = (
        f", about {round(f.n * (1 + reading.overlap)):,} grades with {reading.overlap:.0%} of the items graded twice"
        if reading.overlap > 0
        else ""
    )
    audited = (  # the reviews an audit share asks for: a reviewer's time as the grades are the graders'
        f", and about {counted(round(f.n * reading.audit_share), 'audit review')} ({reading.audit_share:.0%} of "
        "the items graded)"
        if reading.audit_share > 0
        else ""
    )
    return f"To reach ±{reading.target:.3f} at {level:.0%}, grade about {f.n:,} items{more}{twice}{audited}"


def expected_score_words(reading: Reading, expected: float | None) -> str | None:
    """Where the manager gave the score they expect and the grades so far disagree with it (it lies outside their
    fixed-n 95% interval), a warning saying so; None otherwise (and once done: the stop no longer reads it). The
    forecast reads that score as pseudo-grades beside the grades (core.stats.forecast, EXPECTED_PRIOR_GRADES), so
    a score far off keeps pulling it: typed as 0.0001 for a pool of mean 0.3, 112 of 198 projections missed the
    stop, against 54 at 0.3 (a manager's review)."""
    if expected is None or reading.done or reading.graded < 2:
        return None
    low, high = reading.fixed_n.low, reading.fixed_n.high
    if low <= expected <= high:
        return None
    return (
        f"The grades so far ({low:.3f} to {high:.3f}, their {reading.fixed_n.level:.0%} fixed-n interval) disagree "
        f"with the score you expect ({expected:g}), which the forecast still leans on: change or clear it on the "
        "Projects page."
    )


def saving_words(reading: Reading) -> str:
    """The saving against uniform sampling in words: both comparisons, labelled, or why they are withheld."""
    s = reading.saving
    if not reading.saving_known:
        return "Withheld until every stratum has 2 grades."
    if reading.regime == FIXED:
        return (
            f"At the budget of {reading.budget:,} grades against uniform random sampling: a uniform sample needs "
            f"about {s.uniform_fixed:,} grades for the same precision (saving {percent(s.fixed_n, signed=True)})."
        )
    at = (
        f"at the stop ({reading.stop_at:,} graded items)"
        if reading.done
        else f"at the forecast stop ({reading.forecast.n:,})"
    )
    likely, f = _likely_saving(reading), reading.forecast
    over = f", {likely} over the forecast's {f.low:,} to {f.high:,} grades" if likely else ""
    return (
        f"Grades {at} against uniform random sampling: {1 - s.fixed_n:.0%} of the {s.uniform_fixed:,} a "
        f"uniform sample needs with the usual fixed-n interval (saving {percent(s.fixed_n, signed=True)}{over}), "
        f"and {1 - s.same_regime:.0%} of the {s.uniform_same:,} it needs stopped by the same rule (saving "
        f"{percent(s.same_regime, signed=True)})."
        + (f" {cost[0].upper()}{cost[1:]}." if (cost := skips_cost_words(reading)) else "")
    )


def _likely_saving(reading: Reading) -> str:
    """ "likely A to B": the expected fixed-n saving over the forecast's 80% range of grades to stop (core.stats.
    forecast.expected_saving), where it is a forecast and the range is not one number; "" otherwise."""
    s, f = reading.saving, reading.forecast
    if reading.done or not np.isfinite(s.fixed_n_low) or f.low >= f.high:
        return ""
    low, high = percent(s.fixed_n_low, signed=True), percent(s.fixed_n_high, signed=True)
    return "" if low == high else f"likely {low} to {high}"


def saving_metric(reading: Reading) -> tuple[str, str]:
    """The saving as a metric's label and value: both comparisons, labelled (one with a budget fixed in advance,
    where they are the same: a uniform sample of the same precision); "withheld" until every stratum has 2
    grades once grading has begun, before any grade the plan's, labelled "Planned" (a prediction from the
    surrogate or the expected score, not a measurement), and until the rule says done "Expected" (at the
    forecast stop, from the grades so far)."""
    s = reading.saving
    if reading.regime == FIXED:
        label, value = "Saving, same precision", percent(s.fixed_n, signed=True)
    else:
        label = "Saving: fixed-n · same rule"
        value = f"{percent(s.fixed_n, signed=True)} · {percent(s.same_regime, signed=True)}"
    if reading.saving_known and (reading.done or reading.regime == FIXED):
        return label, value
    if reading.saving_known:  # at the forecast stop: a forecast from the grades so far, not a count
        return f"Expected {label[0].lower()}{label[1:]}", value
    if reading.graded == 0 and np.isfinite(s.fixed_n):
        return f"Planned {label[0].lower()}{label[1:]}", value
    return label, "withheld"


def saving_note(reading: Reading) -> str | None:
    """What a page writes under the saving's metric (`saving_metric`): why it is withheld ("withheld" alone left a
    manager guessing), the forecast stop an expected saving is read at, or, once done or with a budget fixed in
    advance, uniform sampling's grades each share is of; None before any grade."""
    if not reading.saving_known:
        return "until every stratum has 2 grades" if reading.graded else None
    s = reading.saving
    if reading.regime == FIXED:
        return f"vs {s.uniform_fixed:,} uniform grades"
    if reading.done:  # the two shares alone did not say what they were of (a manager's review)
        cost = skips_cost_words(reading)
        return f"vs {s.uniform_fixed:,} · {s.uniform_same:,} uniform grades" + (f"; {cost}" if cost else "")
    likely = f", fixed-n {words}" if (words := _likely_saving(reading)) else ""  # the first share's, said so
    return f"at the forecast stop ({counted(reading.forecast.n, 'item')}){likely}"  # items: double grading costs more


def skips_cost_words(reading: Reading) -> str:
    """Where skipped items stood at the stop, what they cost: their worst case widened the interval the rule read,
    and the grades from the stop the grades alone had to the one they allowed count against the saving (a
    one-grader project that skipped 19 items showed -77% without a word on why: a manager's review); "" otherwise."""
    if not reading.skipped_at_stop:
        return ""
    items = counted(reading.skipped_at_stop, "skipped item")
    if reading.stop_without_skips is None or reading.stop_at is None:
        return f"{items} at the stop widened its interval by their worst case"
    more = reading.stop_at - reading.stop_without_skips
    return (
        f"{items} cost {counted(more, 'more grade')}: without them the rule had the target at "
        f"{reading.stop_without_skips:,} graded items"
    )


def saving_headline(reading: Reading) -> tuple[str, str]:
    """The saving as a big number and its words (the presenter): against uniform's fixed-n size at the stop
    (or the forecast stop); a design that needs more grades says so, never "-8% saved"."""
    if not reading.saving_known:
        return "—", "saved vs uniform sampling: withheld until every stratum has 2 grades"
    s = reading.saving
    share = s.fixed_n
    words = "grades than uniform sampling"  # the big number says fewer or more: "4%" alone read as a saving
    if not (reading.done or reading.regime == FIXED):  # at the forecast stop: a forecast, said as one, short
        likely = f", {range_}" if (range_ := _likely_saving(reading)) else ""  # as the dashboard gives it
        # under "45% fewer": one phrase, with uniform's two needs (a paragraph of six lines on the presenter, and
        # "(163) (3 grades": a review)
        return _big_share(share), (
            f"{words}, expected at the forecast stop of {reading.forecast.n:,} items{likely} (uniform random "
            f"sampling needs about {s.uniform_fixed:,} with the usual fixed-n interval, {s.uniform_same:,} stopped "
            "by the same rule)"
        )
    # each comparison as a count against uniform's own need ("5 grades" alone read as uniform's need), the second
    # with its share too ("+2%" beside "1% more grades" read as its opposite)
    fixed = f"{_fewer(share, s.uniform_fixed)} the {s.uniform_fixed:,} a uniform sample needs"
    if reading.regime == FIXED:
        return _big_share(share), f"{words} ({fixed} for the same precision)"
    # unsigned: "+2%" beside "1% more grades" read as its opposite; none beside "as many grades as"
    part = f" ({percent(abs(s.same_regime))})" if round(s.uniform_same * s.same_regime) else ""
    same = f"{_fewer(s.same_regime, s.uniform_same)} the {s.uniform_same:,} it needs stopped by the same rule{part}"
    cost = f"; {spent}" if reading.done and (spent := skips_cost_words(reading)) else ""
    return _big_share(share), f"{words} ({fixed} for the target with the usual fixed-n interval; {same}{cost})"


def _big_share(share: float) -> str:
    """The presenter's big number: the share's size and whether fewer or more grades ("4%" above "more grades"
    read as a saving), "<1%" under a whole percent (a saving of 1 grade in 200 read "1%" beside the words "1
    grade fewer than the 200")."""
    size = "<1%" if 0 < abs(share) < 0.01 else percent(abs(share))
    return f"{size} {'fewer' if share >= 0 else 'more'}"


def _fewer(share: float, uniform: float) -> str:
    """'120 grades fewer than', '1 grade more than', 'as many grades as' (a saving of no whole grade: "0 grades
    fewer (0%)" read oddly, a review): a saving ``share`` of ``uniform`` grades, as a count."""
    count = round(uniform * share)
    if count == 0:
        return "as many grades as"
    return f"{counted(abs(count), 'grade')} {'fewer' if count > 0 else 'more'} than"
