"""Review and adjudication: the queue a reviewer works, the final grade they set, and the validation sample.

An item comes to review for three reasons (``QueueEntry.reasons``): its grades disagree, a grader
flagged it from the grading card (core.services.grade_actions.flag), or it is graded and in the
project's random audit share (``audit_positions``, ``ProjectSettings.audit_share``). A reviewer (or an
admin) sees the item, every grade with its grader and comment, and the flags, and sets the final grade
(``settle``): stored in ``reviews`` with its audit event, never over a grade of the reviewer's own.
Every action takes the acting user and checks the role, the assignment and the project each time
(core.services.outcome.permitted).

The final grade of an item is decided in one place, core.stats.rater_agreement.final_grades (the
reviewed grade, else the mean grader's grade), which core.store.Store.graded_positions applies: the
estimate, the queue and every export read final grades from there. The random items checked, the
double-graded share with its disagreements settled and the audited share once reviewed, are the
validation sample of core.stats.validation (``validation_finals``, ``validated``).

In a rubric project (core.rubric) an item comes to review once, whichever criteria its grades disagree on;
the reviewer sees every criterion's grades by each grader and sets the final grade of the criteria they
choose in one submit (``settle_rubric``): at least the disagreeing ones to take it off the queue. Each
criterion's final grades are its own (core.store.Store.reviewed_grades), and so are its estimate, its
validation sample and its agreement (``agreement_by_criterion``).

A comparison's item is settled the same way, response by response (``settle_responses``): each target's
response has its own grades and its own final grade (reviews keyed by target), and the reviewer sees the
responses as the graders did, side by side in the item's card order, the models' names hidden
(``ReviewItem.order``). The parts of an item are named by core.store.reviews.part: criteria or targets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.scales import Scale
from core.services import auth, grading
from core.services.criteria_reading import criteria_agreement
from core.services.outcome import Outcome, Refused, permitted
from core.services.progress import waiting_for_review
from core.services.reservations import double_graded, drawn_positions
from core.services.side_by_side import order_of, side_names
from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.stats.rater_agreement import Agreement, part_keys
from core.stats.validation import Validated, validated_estimate
from core.store import Store, reviews

AUDIT_SEED_OFFSET = 7_919
"""Keeps the audit draw independent of the queue's order and of the double-graded share for one seed."""
DISAGREEMENT, FLAGGED, AUDIT = "disagreement", "flagged", "audit"
REASONS = (FLAGGED, DISAGREEMENT, AUDIT)
"""Why an item is in the review queue, in the order the queue serves them."""


def audit_positions(n_items: int, share: float, seed: int) -> frozenset[int]:
    """The pool's items picked for a reviewer's audit once graded: round(share * n_items) at random."""
    return drawn_positions(n_items, share, seed + AUDIT_SEED_OFFSET)


def audited(store: Store, project_id: int) -> frozenset[int]:
    """The project's audit share, from its settings (``audit_share``, ``seed``)."""
    settings = store.project(project_id).settings
    return audit_positions(store.item_count(project_id), settings.audit_share, settings.seed)


@dataclass(frozen=True)
class QueueEntry:
    position: int
    reasons: tuple[str, ...]


def queue(store: Store, actor: auth.User | None, project_id: int) -> list[QueueEntry]:
    """The items waiting for review, each once: flagged first, then disagreements, then the audit share, each
    oldest first. A flagged item waits until a reviewer sets any final grade of it; a disagreement until every
    criterion its grades disagree on has its final grade; an audited item until every criterion graded on it
    has one (a one-question project has one criterion, so any final grade settles its item)."""
    permitted(store, actor, auth.REVIEW, project_id)
    return waiting(store, project_id)


def waiting_words(store: Store, project_id: int) -> str:
    """How many items wait for a reviewer's final grade, in words ("" when none): the dashboards say it, so that
    a stop is not read as the last word while flagged items or disagreements wait (a manager's review)."""
    words = waiting_for_review(len(waiting(store, project_id)))
    return f"{words} (Review page)." if words else ""


def waiting(store: Store, project_id: int) -> list[QueueEntry]:
    """`queue` without the permission check, for what is read on the actor's behalf already (the report). A
    flagged item comes once it has a grade: a flag then a skip, or an undo of the grade, left an item the
    reviewer could not settle ("the item has no grade yet"), counted as waiting, the figures provisional (a
    grader's and manager's review)."""
    graded = store.graded_positions(project_id)
    settled = _with_part(reviews.reviews(store, project_id))
    reviewed = set(zip(settled["position"].astype(int), settled["part"]))
    grades = _grades_by_part(store, project_id, store.project(project_id).settings)
    answered = {int(p): set(parts) for p, parts in grades.groupby("position")["part"]}

    def waits(position: int, parts: Iterable[str]) -> bool:
        return any((position, part) not in reviewed for part in parts)

    sources = {
        # a flagged item waits once graded: a reviewer settles grades (a flag then a skip waited, unsettleable)
        FLAGGED: [int(p) for p in dict.fromkeys(reviews.flags(store, project_id)["position"]) if int(p) in answered],
        DISAGREEMENT: [p for p, parts in reviews.disagreements(store, project_id).items() if waits(p, parts)],
        AUDIT: [p for p in graded if p in audited(store, project_id) and waits(p, answered[p])],
    }
    touched = {p for p, _ in reviewed}
    reasons: dict[int, list[str]] = {}
    for reason in REASONS:
        for position in sources[reason]:
            if reason != FLAGGED or position not in touched:
                reasons.setdefault(position, []).append(reason)
    return [QueueEntry(p, tuple(r)) for p, r in reasons.items()]


@dataclass(frozen=True)
class ReviewItem:
    """What a reviewer sees of one item: the item, its active grades (grader, label, comment, time, and
    ``part``: core.store.reviews.part, the criterion in a rubric project, the target in a comparison), the
    flags, its active reviews (one per part settled, with its ``part`` too), the parts its grades disagree on now, and in a
    comparison ``order``: the targets in the item's card order (core.services.side_by_side.card_order), the
    order its responses were graded in, side by side."""

    position: int
    item: dict[str, Any]
    grades: pd.DataFrame
    flags: pd.DataFrame
    reviews: pd.DataFrame
    disagree: tuple[str, ...]
    order: tuple[str, ...] = ()

    @property
    def review(self) -> dict[str, Any] | None:
        """The latest active review as a dict (a one-question item's final grade), or None."""
        return None if self.reviews.empty else self.reviews.iloc[-1].to_dict()

    def by_grader(self, parts: Sequence[str], names: Sequence[str] | None = None) -> pd.DataFrame:
        """A rubric's or a comparison's item as one row per grader: their label of each of ``parts`` (criteria in
        the rubric's order, or targets in ``order``; "" where unanswered), headed ``names`` (default the parts:
        a comparison's reviewer sees "Response 1", ..., not the models' names), and the card's comment."""
        names = list(parts if names is None else names)
        rows = [
            {
                "grader": grader,
                **{name: dict(zip(card["part"], card["label"])).get(p, "") for p, name in zip(parts, names)},
                "comment": card["comment"].iloc[-1],
            }
            for grader, card in self.grades.groupby("grader", sort=False)
        ]
        return pd.DataFrame(rows, columns=["grader", *names, "comment"])


def item(store: Store, actor: auth.User | None, project_id: int, position: int) -> ReviewItem:
    """The item at ``position`` as a reviewer sees it (Refused without the review permission)."""
    return items(store, actor, project_id, [position])[0]


def items(store: Store, actor: auth.User | None, project_id: int, positions: Sequence[int]) -> list[ReviewItem]:
    """The items at ``positions`` as a reviewer sees them, their grades, flags, reviews and disagreements read
    once for all (GET review's page read the project's grades once an item); Refused without the review
    permission, or for a position with no item."""
    permitted(store, actor, auth.REVIEW, project_id)
    wanted = [int(p) for p in positions]
    settings = store.project(project_id).settings
    grades = _grades_by_part(store, project_id, settings)
    grades = grades[grades["position"].isin(wanted)]
    flags = reviews.flags(store, project_id, wanted)
    settled = _with_part(reviews.reviews(store, project_id, wanted))
    disagree = reviews.disagreements(store, project_id, wanted)

    def of(frame: pd.DataFrame, position: int) -> pd.DataFrame:
        return frame[frame["position"] == position].reset_index(drop=True)

    shown = []
    for position in wanted:
        try:
            texts = store.item(project_id, position)
        except KeyError:
            raise Refused("no such item") from None
        shown.append(
            ReviewItem(
                position=position,
                item=texts,
                grades=of(grades, position),
                flags=of(flags, position),
                reviews=of(settled, position),
                disagree=tuple(disagree.get(position, ())),
                order=order_of(settings, position) if settings.compares else (),
            )
        )
    return shown


def _grades_by_part(store: Store, project_id: int, settings: ProjectSettings) -> pd.DataFrame:
    """The project's active grades with ``part`` (`_with_part`)."""
    return _with_part(store.target_grades(project_id) if settings.compares else store.rubric_grades(project_id))


def _with_part(frame: pd.DataFrame) -> pd.DataFrame:
    """Grades or reviews with ``part``, the part of the item each is of (core.store.reviews.part): a comparison's
    target, a rubric's criterion, "" for a one-question project's."""
    return frame.assign(part=[reviews.part(t, c) for t, c in part_keys(frame).itertuples(index=False)])


def settle(
    store: Store, actor: auth.User | None, project_id: int, position: int, label: str | None, *, note: str = ""
) -> Outcome:
    """Set the item's final grade to ``label`` (a grade of the project's scale), with the reviewer's note.

    Refused unless the actor may review the project, the project is ready, the item has a grade, and none
    of its grades is the reviewer's own (nobody settles a disagreement they are part of); refused in a rubric
    project too, whose final grades ``settle_rubric`` sets. A second review of the item replaces the first,
    which stays in the table, retracted; both are audited.
    """
    reviewer, settings = _settling(store, actor, project_id)
    if settings.rubric is not None:
        raise Refused("this project grades a rubric: set each criterion's final grade (settle_rubric)")
    if settings.compares:
        raise Refused("this project compares models: set each response's final grade (settle_responses)")
    if label is None:
        raise Refused("no final grade chosen: choose one of the scale's grades, then set it")
    grading.check_label(settings.grading_scale, label)
    value = settings.grading_scale.value_of(label)
    grades = store.grades(project_id)
    _may_settle(reviewer, set(grades.loc[grades["position"] == position, "grader"]))
    note = grading.check_comment(note)
    if _stands(store, project_id, position, [("", "", value, label)], reviewer, note):
        return Outcome("unchanged", f"final grade already: {label}", position)
    reviews.add_review(store, project_id, position, value=value, label=label, reviewer=reviewer.name, note=note)
    return Outcome("reviewed", f"final grade: {label}", position)


def settle_rubric(
    store: Store,
    actor: auth.User | None,
    project_id: int,
    position: int,
    labels: Mapping[str, str | None],
    *,
    note: str = "",
) -> Outcome:
    """Set a rubric item's final grades, ``labels`` criterion -> label (a criterion left out, or None or "",
    keeps what it has), in one transaction with the reviewer's note, each audited.

    Refused as ``settle`` is, and for a project without a rubric, no final grade given, an unknown criterion,
    a label not on its criterion's scale, or a criterion nobody graded on this item."""
    reviewer, settings = _settling(store, actor, project_id)
    rubric = settings.rubric
    if rubric is None:
        raise Refused("this project asks one question: set its final grade with one label (settle)")
    parts = {c.name: (c.scale, "", c.name) for c in rubric.criteria}
    return _settle_parts(store, reviewer, settings, project_id, position, labels, parts, "criterion", note)


def settle_responses(
    store: Store,
    actor: auth.User | None,
    project_id: int,
    position: int,
    labels: Mapping[str, str | None],
    *,
    note: str = "",
) -> Outcome:
    """Set a comparison item's final grades, ``labels`` target -> label (a target left out, or None or "",
    keeps what it has), in one transaction with the reviewer's note, each audited; refused as
    ``settle_rubric`` is, for a project that compares no models, an unknown target or a response nobody
    graded on this item."""
    reviewer, settings = _settling(store, actor, project_id)
    if not settings.compares:
        raise Refused("this project grades one model: set its final grade with one label (settle)")
    order = order_of(settings, position)
    parts = {target: (settings.grading_scale, target, "") for target in order}
    shown = dict(zip(order, side_names(len(order))))  # the reviewer reads sides, as graders did: no model's name
    return _settle_parts(store, reviewer, settings, project_id, position, labels, parts, "response", note, shown)


def _settle_parts(
    store: Store,
    reviewer: auth.User,
    settings: ProjectSettings,
    project_id: int,
    position: int,
    labels: Mapping[str, str | None],
    parts: Mapping[str, tuple[Scale, str, str]],
    noun: str,
    note: str,
    shown: Mapping[str, str] | None = None,
) -> Outcome:
    """``settle_rubric``'s and ``settle_responses``' one rule: ``parts`` names each part of the item (a
    criterion, a target) with its scale and its review key (target, criterion), ``noun`` what a part is, and
    ``shown`` the name the reviewer knows it by (default its own) in what the outcome or a refusal says."""
    chosen = {name: label for name, label in labels.items() if label}
    shown = shown or {}
    unknown = sorted(set(chosen) - set(parts))
    if unknown:
        raise Refused(f"{unknown[0]!r} is not a {noun} of this project", field=f"labels.{unknown[0]}")
    if not chosen:
        raise Refused(f"no final grade chosen: choose the grade of at least one {noun}", field="labels")
    grades = _grades_by_part(store, project_id, settings)
    mine = grades[grades["position"] == position]
    _may_settle(reviewer, set(mine["grader"]))
    finals = []
    for name, (scale, target, criterion) in parts.items():
        label = chosen.get(name)
        if label is None:
            continue
        called = shown.get(name, name)  # as the reviewer knows the part, and names it in the request
        if name not in set(mine["part"]):
            raise Refused(f"{noun} {called!r} has no grade of this item to settle", field=f"labels.{called}")
        try:
            finals.append((target, criterion, scale.value_of(label), label))
        except KeyError:
            raise Refused(f"{label!r} is not a grade of {noun} {called!r}", field=f"labels.{called}") from None
    note = grading.check_comment(note)
    said = ", ".join(f"{shown.get(reviews.part(t, c), reviews.part(t, c))} {label}" for t, c, _, label in finals)
    if _stands(store, project_id, position, finals, reviewer, note):
        return Outcome("unchanged", f"final grades already: {said}", position)
    reviews.add_reviews(store, project_id, position, finals, reviewer=reviewer.name, note=note)
    return Outcome("reviewed", f"final grades: {said}", position)


def _stands(
    store: Store,
    project_id: int,
    position: int,
    finals: Sequence[tuple[str, str, float, str]],
    reviewer: auth.User,
    note: str,
) -> bool:
    """Whether each of ``finals`` (target, criterion, value, label) is the item's active review already, by this
    reviewer with this note: set again, it would retract and rewrite each, an audit event apiece, for nothing
    (a reviewer's review saw three rows for one final grade set three times)."""
    active = reviews.reviews(store, project_id, [position])
    standing = {(r.target, r.criterion, r.label, r.reviewer, r.note) for r in active.itertuples()}
    return all((t, c, label, reviewer.name, note) in standing for t, c, _, label in finals)


def _settling(store: Store, actor: auth.User | None, project_id: int) -> tuple[auth.User, ProjectSettings]:
    """The reviewer and the project's settings; Refused unless the actor may review it and it is ready."""
    reviewer = permitted(store, actor, auth.REVIEW, project_id)
    try:
        project = store.project(project_id)
    except KeyError:
        raise Refused("the project was deleted") from None
    if project.status != "ready":
        raise Refused(f"the project is not ready ({project.status})")
    return reviewer, project.settings


def _may_settle(reviewer: auth.User, graders: set[str]) -> None:
    """Refused when the item has no grade, or the reviewer is one of its graders."""
    if not graders:
        raise Refused("the item has no grade yet; it comes to review once graded")
    if reviewer.name in graders:
        raise Refused("you graded this item yourself; another reviewer settles it")


@dataclass(frozen=True)
class CriterionAgreement:
    """One criterion's agreement over its double-graded items (at its scale's level), the items whose grades
    of it differ, and how many of those a reviewer has settled."""

    criterion: str
    agreement: Agreement
    disagreements: int
    settled: int


def agreement_by_criterion(store: Store, actor: auth.User | None, project_id: int) -> list[CriterionAgreement]:
    """Each criterion's agreement and disagreements in a rubric project, the primary criterion first, then the
    rubric's order; [] for a one-question project (its agreement is core.services.live.agreement_of's)."""
    permitted(store, actor, auth.REVIEW, project_id)
    rubric = store.project(project_id).settings.rubric
    if rubric is None:
        return []
    grades = store.rubric_grades(project_id)
    disagreeing = reviews.disagreements(store, project_id)
    settled = reviews.reviews(store, project_id)
    agreed = criteria_agreement(rubric, grades)
    order = [rubric.primary, *(name for name in rubric.names if name != rubric.primary)]
    result = []
    for name in order:
        differ = {p for p, criteria in disagreeing.items() if name in criteria}
        reviewed = set(settled.loc[settled["criterion"] == name, "position"])
        result.append(CriterionAgreement(name, agreed[name], len(differ), len(differ & reviewed)))
    return result


def validation_finals(store: Store, project_id: int, criterion: str | None = None) -> dict[int, float]:
    """The validation sample's final grades of one criterion (position -> grade; the design's criterion by
    default, core.store.Store.criterion_of): the double-graded share's items graded twice (their
    disagreements settled by review where a reviewer has, else their mean grade: the estimand's rule) and the
    audit share's items once reviewed. Both are random draws of the pool, independent of the grades, so the
    items not yet checked leave the rest a random sample."""
    criterion = store.criterion_of(project_id, criterion)
    finals = store.graded_positions(project_id, criterion)
    counts = store.grades(project_id, criterion=criterion)["position"].value_counts()
    twice = {int(p) for p, k in counts.items() if k >= 2} & double_graded(store, project_id)
    settled = set(store.reviewed_grades(project_id, criterion)) & audited(store, project_id)
    return {p: finals[p] for p in finals if p in twice or p in settled}


def disagreements_settled(store: Store, project_id: int, criterion: str | None = None) -> tuple[int, int]:
    """(settled, disagreements): of the double-graded share's items whose grades disagree, those a reviewer has
    settled. The correction reads the others as the graders' mean (`validation_finals`), so it measures graders'
    errors only as far as the disagreements are settled: the dashboard says how far (it said "with
    disagreements reviewed" where none was)."""
    criterion = store.criterion_of(project_id, criterion)
    twice = sorted(double_graded(store, project_id))
    found = reviews.disagreements(store, project_id, twice)
    disagree = {p for p, parts in found.items() if reviews.part("", criterion) in parts}
    return len(disagree & set(store.reviewed_grades(project_id, criterion))), len(disagree)


def validates(settings: ProjectSettings) -> bool:
    """Whether the project has a random reviewed sample to correct its estimate on: a share of items graded
    twice or audited (`validated` reads it)."""
    return bool(settings.overlap or settings.audit_share)


def validated(store: Store, project_id: int, design: Design, criterion: str | None = None) -> Validated:
    """The project's estimate of one criterion (the design's by default) corrected on its validation sample
    (core.stats.validation)."""
    criterion = store.criterion_of(project_id, criterion)
    return validated_estimate(
        design, store.first_grades(project_id, criterion), validation_finals(store, project_id, criterion)
    )
