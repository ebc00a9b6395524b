"""Every criterion of a project read once: its estimate and intervals from its own grades, for the dashboard,
the presenter view, the report and the exports, which render it.

The design criterion (core.settings.ProjectSettings.design_criterion: the rubric's primary, the only one of
a one-question project) is the one the stopping rule and the forecast read, and its row is the project's
reading (core.services.live.Live) itself: the same estimate, and the interval the reading reports now.

Every other criterion is read with the same estimator and the same intervals, on its own grades
(Store.graded_positions of that criterion): the fixed-n interval (Korn-Graubard, core.stats.estimate), and
where the project does not stop at a budget fixed in advance, the anytime-valid confidence sequence
(core.stats.confseq, tuned for the planned budget n0) as the interval to report, since grading stops when the
primary criterion's rule says so, a time no fixed-n interval of another criterion allows for; each widened by
the skipped items' worst case as the primary's is (core.services.reading.widened). No rule stops on another
criterion, so none has looks or a forecast.

The estimator and the intervals read a criterion's scale from its own grades (core.stats.estimate: the df
rule of 0/1 grades), never from the settings; the forecast, the one part of the reading that reads the scale
from the settings (``ProjectSettings.grading_scale.values``), reads the primary criterion's, whose reading
it is.

An optional criterion is answered on some cards only: its estimand is the mean grade over the items a grader
answered it for, the others treated as missing at random within their stratum (as the estimator treats
every ungraded item), and its row says how many of the graded items have it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import pandas as pd

from core.rubric import ONE_QUESTION, PRIMARY, Criterion, Rubric
from core.scales import Scale
from core.services.live import Anytime, Live, agreement_of, anytime_now, live_reading
from core.services.progress import counted, level_percent
from core.services.reading import (
    WHENEVER,
    Interval,
    interval_when,
    intervals,
    reported_from,
    skip_widening,
    widened,
)
from core.services.tracking import current_estimate
from core.settings import ProjectSettings, SettingsLike
from core.stats.allocation import Design
from core.stats.estimate import Estimate
from core.stats.rater_agreement import Agreement, agreement, summary
from core.stats.skips import skip_bound
from core.stats.stopping import FIXED
from core.store import Store


@dataclass(frozen=True)
class CriterionReading:
    """One criterion read: its ``estimate`` (``estimate.n``: the items with a grade of it), the ``fixed_n``
    interval, the ``anytime`` one (None where the budget is fixed in advance, or before a grade), ``now``: the
    interval to report (None before a grade) and ``when`` it holds; ``primary``: the stopping rule and the
    forecast read it; ``cards``: items graded (of the primary criterion, which every card answers);
    the primary's ``estimate`` is the one its reported value comes from (core.services.reading.reported_from:
    at the stop the looks made before the grades given now, the stop's, with its own standard error, grades
    and fixed-n interval, and no anytime interval of other grades beside it)."""

    criterion: Criterion
    primary: bool
    estimate: Estimate
    fixed_n: Interval
    anytime: Interval | None
    now: Interval | None
    when: str
    cards: int

    @property
    def value(self) -> float:
        """The estimate to report."""
        return self.estimate.value

    @property
    def name(self) -> str:
        return self.criterion.name

    @property
    def known(self) -> bool:
        """Whether there is an estimate yet (every stratum has a grade of this criterion), and so intervals."""
        return not self.estimate.missing and self.estimate.value is not None

    @property
    def graded(self) -> int:
        """Items with a grade of this criterion (the estimate's n)."""
        return self.estimate.n

    @property
    def answered(self) -> str:
        """How many graded items have a grade of it, in words ('12 of 40 graded items')."""
        return f"{self.graded:,} of {counted(self.cards, 'graded item')}"

    @property
    def value_words(self) -> str:
        """The estimate for a page: 3 decimals, or why there is none yet."""
        return f"{self.estimate.value:.3f}" if self.known else "no estimate yet"

    @property
    def interval_words(self) -> str:
        """The interval to report for a page, its level and when it holds; or what it waits for."""
        if not self.known:
            return f"waiting for a grade of it in every stratum ({len(self.estimate.missing)} without)"
        return f"{level_percent(self.now.level)} interval {self.now.low:.3f} – {self.now.high:.3f}, {self.when}"

    @property
    def estimand(self) -> str:
        """What the estimate estimates, in words (module docstring)."""
        on = f" on criterion {self.name!r}" if self.name else ""  # a one-question project's has no name
        what = f"the pool's mean grade{on} ({self.criterion.scale.kind} scale, on [0, 1])"
        if self.criterion.required:
            return what
        return (
            f"{what} over the items a grader answered it for (optional: {self.answered} have it; the others "
            "are treated as missing at random within their stratum)"
        )


def read_criteria(
    design: Design,
    settings: SettingsLike,
    graded: Mapping[str, Mapping[int, float]],
    primary: Live,
    skipped: Collection[int],
    anytime: Anytime | None = None,
) -> tuple[CriterionReading, ...]:
    """Each criterion of the project's rubric (in its order; the one question of a project without one)
    read from ``graded`` (criterion -> position -> final grade, in grading order), the design criterion's row
    being ``primary``'s reading; ``skipped``: the items skipped and not graded; ``anytime``: the caller's cached
    anytime interval of a set of grades (core.services.live.anytime_now)."""
    typed = ProjectSettings.from_dict(settings)
    regime = typed.stopping
    cards = primary.estimate.n
    rows = []
    for criterion in _criteria(typed):
        if criterion.name == typed.design_criterion:
            reading = primary.reading
            reported = reported_from(design, reading, primary.graded, primary.estimate)
            if reported is primary.estimate:
                fixed_n, sequence = reading.fixed_n, None if regime == FIXED else reading.anytime
            else:  # read at the stop: its estimate, standard error, grades and fixed-n interval together
                fixed_n, sequence = intervals(reported, None)
            rows.append(
                CriterionReading(
                    criterion, True, reported, fixed_n, sequence, reading.now, interval_when(reading), cards
                )
            )
            continue
        own = dict(graded.get(criterion.name, {}))
        estimate = current_estimate(design, own, primary.estimate.method)
        fixed_n, sequence = intervals(estimate, anytime_now(design, typed, own, anytime) if regime != FIXED else None)
        widen = skip_widening(estimate, skip_bound(design, own, own.values(), skipped))
        now = widened(fixed_n if sequence is None else sequence, widen)
        when = interval_when(primary.reading) if regime == FIXED else WHENEVER
        rows.append(CriterionReading(criterion, False, estimate, fixed_n, widened(sequence, widen), now, when, cards))
    return tuple(rows)


def criteria_now(
    store: Store,
    project_id: int,
    design: Design,
    settings: SettingsLike,
    method: str,
    *,
    anytime: Anytime | None = None,
    primary: Live | None = None,
) -> tuple[CriterionReading, ...]:
    """`read_criteria` of the project's grades now, every criterion's from the store; ``primary``: the design
    criterion's reading where the caller has it (core.services.live.live_reading's, else read here with the
    ``method`` estimator)."""
    typed = ProjectSettings.from_dict(settings)
    primary = primary if primary is not None else live_reading(store, project_id, design, typed, method, anytime)
    graded = {
        c.name: store.graded_positions(project_id, criterion=c.name)
        for c in _criteria(typed)
        if c.name != typed.design_criterion
    }
    return read_criteria(design, typed, graded, primary, store.skipped_positions(project_id), anytime)


def _criteria(settings: ProjectSettings) -> tuple[Criterion, ...]:
    """The rubric's criteria; a project without one asks one question, on its scale."""
    rubric = settings.rubric
    return (Criterion(ONE_QUESTION, settings.grading_scale),) if rubric is None else rubric.criteria


def mean_grade_words(settings: SettingsLike) -> str:
    """What the headline estimate is of, for the pages and the report: 'mean grade', and in a rubric project
    the criterion it reads ("mean grade of criterion 'correct'")."""
    rubric = ProjectSettings.from_dict(settings).rubric
    return "mean grade" if rubric is None else f"mean grade of criterion {rubric.primary!r}"


def headline_scale(settings: SettingsLike) -> Scale:
    """The scale of what the headline estimate is of: the project's, or its rubric's primary criterion's."""
    project = ProjectSettings.from_dict(settings)
    rubric = project.rubric
    return project.grading_scale if rubric is None else rubric.criterion(rubric.primary).scale


def scale_words(settings: SettingsLike, value: float) -> str:
    """What the headline estimate ``value`` reads as on the scale of the criterion it is of, for the pages: ". On
    [0, 1], 1 = 0, ..., 5 = 1: 1.44 on the 1-5 scale" (core.scales.Scale.value_words, on_labels); "" for
    correct/incorrect grades, whose mean is the share correct (a manager reading 0.110 on a Likert project could
    not tell what it meant on the scale graded)."""
    scale = headline_scale(settings)
    words = scale.value_words()
    if words is None or value != value:
        return ""
    on = scale.on_labels(value)
    return f". {words[0].upper()}{words[1:]}" + (f": {on}" if on else "")


def design_criterion_words(settings: SettingsLike) -> str | None:
    """Which criterion the stopping rule and the forecast read, and what the queue allocates for, in one line
    for the pages and the report; None for a one-question project."""
    rubric = ProjectSettings.from_dict(settings).rubric
    if rubric is None:
        return None
    allocates = (
        "the queue allocates for it alone"
        if rubric.allocate_for == PRIMARY
        else "the queue allocates for every criterion together"
    )
    return f"Stopping rule and forecast: criterion {rubric.primary!r} (the primary); {allocates}."


def criteria_agreement(rubric: Rubric, grades: pd.DataFrame) -> dict[str, Agreement]:
    """Each criterion's agreement between graders over its items graded twice, at its scale's level
    (core.stats.rater_agreement.agreement), in the rubric's order; ``grades``: a rubric's (Store.rubric_grades)."""
    return {c.name: agreement(grades[grades["criterion"] == c.name], c.scale.level) for c in rubric.criteria}


def agreement_words(store: Store, project_id: int, grades: pd.DataFrame, settings: SettingsLike) -> str:
    """Agreement for a page (core.stats.rater_agreement.summary): one line of the project's ``grades``
    (Store.grades, which the Dashboard reads for the graders' pace too), or in a rubric project one line per
    criterion in the rubric's order, from `criteria_agreement` as the report, the Review and the Team pages
    read it: every criterion's agreement, not the primary criterion's alone."""
    rubric = ProjectSettings.from_dict(settings).rubric
    if rubric is None:
        return summary(agreement_of(grades, settings))
    agreed = criteria_agreement(rubric, store.rubric_grades(project_id))
    return "\n".join(
        f"{name}{' (primary)' if name == rubric.primary else ''}: {summary(a)}" for name, a in agreed.items()
    )
