"""A project's settings: one frozen, validated dataclass, the only place their defaults live.

The database stores them as JSON (``ProjectSettings.to_dict``); the store reads
them once through ``ProjectSettings.from_dict``, which fills the defaults and
refuses a bad value with an InputError naming the setting and the fix, and every
reader (preparation, the queue, the estimator, the pages, the report) reads the
typed object's attributes. A function that also takes a plain dict (from the
CLI or a test) reads it through ``ProjectSettings.from_dict``, which returns
typed settings unchanged.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from core.errors import InputError
from core.inputs.readers import FORMATS
from core.rubric import ONE_QUESTION, PRIMARY, Rubric, rubric_from_settings
from core.scales import DEFAULT_SCALE, Scale, scale_from_settings
from core.stats.allocation import Design
from core.stats.compare import MODES as COMPARE_MODES
from core.stats.design import grading_budget, planned_budget
from core.stats.estimate import METHODS
from core.stats.forecast import tuned_n0
from core.stats.stopping import ANYTIME, DEFAULT_REGIME, FIXED, LOOKS
from core.stats.strata import DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY, STRATIFY_BY
from core.surrogate.semantic import BACKENDS, DEFAULT_BACKEND

MAX_TARGET_HALF_WIDTH = 0.5
"""The widest stopping target: a half-width of 0.5 spans every mean grade in [0, 1]."""

GRADED_COMPARE_MODES = ("side-by-side",)
"""The comparison modes the Grade page can grade (core.stats.compare.MODES are all simulated)."""

MAX_MIN_VIEW_S = 10.0
"""The longest minimum viewing time a project may set: longer would only keep graders waiting."""

CHOICES: dict[str, tuple[str, ...]] = {
    "backend": tuple(BACKENDS),
    "stratify_by": tuple(STRATIFY_BY),
    "method": ("default", *METHODS),
    "regime": (LOOKS, ANYTIME),
    "compare_mode": tuple(COMPARE_MODES),
    "input_format": FORMATS,  # refused by the reader, a bad one named the command line's --format (an integrator's review)
}
"""The values each setting with a closed set of values may take (checked here, listed in the API's schema)."""


@dataclass(frozen=True)
class ProjectSettings:
    """A project's settings, validated on construction (``from_dict`` reads the stored JSON)."""

    backend: str = DEFAULT_BACKEND
    """Semantic equivalence test of the surrogate's answers (core.surrogate.semantic.BACKENDS)."""
    model: str | None = None
    """Model name or path for the embedding or NLI backend; None for the backend's default."""
    threshold: float | None = None
    """Similarity (embedding) or entailment probability (NLI) threshold; None for the backend's default."""
    embedding_server: str | None = None
    """The URL of the OpenAI-compatible server the embedding backend's embeddings come from, one of the servers
    the operator allows (``$ACTIVEGRADE_SAMPLING_SERVERS``, core.config; checked when the project is created and
    when it is prepared, core.jobs.preparation_job.served_embeddings), ``model`` naming the model it serves; None:
    a local model."""
    n_strata: int = DEFAULT_N_STRATA
    """How many strata the pool is cut into, 1 to 50 (core.stats.strata: tied cut points and small strata merge)."""
    stratify_by: str = DEFAULT_STRATIFY_BY
    """The surrogate signal the strata are cut on (core.stats.strata.STRATIFY_BY)."""
    scale: dict[str, Any] = field(default_factory=DEFAULT_SCALE.to_settings)
    """The grading scale as core.scales stores it; ``grading_scale`` gives the Scale."""
    guidelines: str = ""
    """The project's grading guidelines (markdown), on the Grade page."""
    show_reference: bool = True
    """Whether graders see the pool's reference answer, where it has one."""
    show_signals: bool = False
    """Whether graders see the surrogate's signals (strata, entropy, agreement)."""
    seed: int = 0
    """One seed per project: the queue's random draws within strata."""
    target_half_width: float = 0.05
    """The stopping rule's target: the interval's half-width at which grading can stop."""
    method: str = "default"
    """core.stats.estimate method of the report ("default" is core.stats.estimate.DEFAULT_METHOD)."""
    overlap: float = 0.0
    """Share of items graded twice, for inter-grader agreement."""
    audit_share: float = 0.0
    """Share of the pool's items picked at random for a reviewer's audit once graded
    (core.services.review.audit_positions): with the double-graded items, the random validation sample of
    core.stats.validation. 0: the review queue holds disagreements and flags only."""
    sampling: dict[str, Any] | None = None
    """A request to sample the surrogate's answers first (core.jobs.sampling_job.SamplingSettings as a dict)."""
    external_images: bool = False
    """Whether graders' browsers may fetch the pool's http(s) ``image`` URLs (core.inputs.images); data: images always show."""
    proxy: str | None = None
    """A numeric pool column (an existing judge's score, say) that drives the strata instead of agreement."""
    input_format: str = "auto"
    """How the uploads are read (core.inputs.readers)."""
    columns: str = ""
    """Columns picked after reading, as TARGET=SOURCE,... (core.inputs.readers.parse_columns)."""
    expected_score: float | None = None
    """The mean grade the manager expects, from an earlier evaluation, say: the forecast starts from it instead
    of the surrogate's own guess, and the grades take over as they arrive (core.stats.forecast); None: the
    surrogate's."""
    planned_budget: int | None = None
    """The planned number of grades n0 the anytime interval is tuned for; None for the design's default."""
    budget_fixed: bool = False
    """Whether n0 is a budget fixed in advance: the project then stops at n0 and reads the fixed-n interval
    there (the regime ``fixed`` of core.stats.stopping), whatever ``regime`` says."""
    regime: str = DEFAULT_REGIME
    """How grading may stop when no budget is fixed (core.stats.stopping): ``looks``, at planned looks on
    information (the default), or ``anytime``, at any grade with the anytime-valid interval. Projects stored
    before this setting existed keep ``anytime``, the regime they were made with (schema revision 0008)."""
    min_view_s: float = 0.3
    """The minimum viewing time: a grade sooner than this many seconds after the grader's browser painted the
    item is a key held down or pressed twice, not a judgement of it, and is not stored (core.services.grading).
    0 turns the check off (one-word answers a practised grader reads at a glance)."""
    targets: list[str] = field(default_factory=list)
    """The models a comparison project compares, sorted (core.inputs.targets.Targets.models); empty for a
    one-model project. A grade of a comparison names one of them (grades.target)."""
    criteria: list[dict[str, Any]] = field(default_factory=list)
    """A rubric's criteria (core.rubric: name, scale, guidelines, required), asked together on one card; empty
    for a project that asks one question (its ``scale``)."""
    primary_criterion: str = ""
    """The criterion the design, the stopping rule and the forecast read ("" : the first); unused without criteria."""
    allocate_for: str = PRIMARY
    """What the queue allocates for in a rubric project (core.rubric.ALLOCATE_FOR): the primary criterion, or
    all criteria together (core.stats.allocation.compromise_spreads)."""
    card_key: str = ""
    """A comparison's secret (hex, drawn when the project is created: core.services.project): with the seed it
    draws each side-by-side card's order (core.services.side_by_side.card_order), so that a grader, who never
    sees it, cannot work out which model wrote which response from the seed and the code ("" : the seed alone,
    as projects made before it)."""
    compare_mode: str = "side-by-side"
    """How a comparison is graded (core.stats.compare.MODES; the Grade page has ``side-by-side``, GRADED_COMPARE_MODES): ``absolute``, one response at a time;
    ``side-by-side``, every target's response on one card; ``pairwise``, a preference. Unused with one model."""

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            _check(getattr(self, name) in allowed, name, getattr(self, name), f"use one of {', '.join(allowed)}")
        _check(
            self.embedding_server is None or (isinstance(self.embedding_server, str) and self.backend == "embedding"),
            "embedding_server",
            self.embedding_server,
            "embeddings from a server take the embedding backend, or none for a local model",
        )
        _check(
            self.embedding_server is None or bool(self.model),
            "model",
            self.model,
            "give the name of the model the embedding server serves, as it lists it at /v1/models",
        )
        _check(_is_int(self.n_strata) and 1 <= self.n_strata <= 50, "n_strata", self.n_strata, "use 1 to 50 strata")
        _check(
            _is_int(self.seed) and self.seed >= 0, "seed", self.seed, f"use a whole number from 0 to {MAX_JSON_INT:,}"
        )
        _check(
            self.threshold is None or (_is_number(self.threshold) and 0 < self.threshold <= 1),
            "threshold",
            self.threshold,
            "use a number in (0, 1], or none for the backend's default",
        )
        _check(
            _is_number(self.target_half_width) and 0 < self.target_half_width <= MAX_TARGET_HALF_WIDTH,
            "target_half_width",
            self.target_half_width,
            f"use a number in (0, {MAX_TARGET_HALF_WIDTH:g}]",
        )
        _check(_is_number(self.overlap) and 0 <= self.overlap <= 1, "overlap", self.overlap, "use a share from 0 to 1")
        _check(
            _is_number(self.audit_share) and 0 <= self.audit_share <= 1,
            "audit_share",
            self.audit_share,
            "use a share of the items from 0 to 1",
        )
        _check(
            self.planned_budget is None or (_is_int(self.planned_budget) and self.planned_budget >= 1),
            "planned_budget",
            self.planned_budget,
            f"use a whole number of grades from 1 to {MAX_JSON_INT:,}, or none for the design's default",
        )
        _check(
            self.expected_score is None or (_is_number(self.expected_score) and 0 < self.expected_score < 1),
            "expected_score",
            self.expected_score,
            "use the mean grade you expect, a number between 0 and 1, or none to let the surrogate guess",
        )
        for name in ("show_reference", "show_signals", "external_images", "budget_fixed"):
            _check(isinstance(getattr(self, name), bool), name, getattr(self, name), "use true or false")
        for name in ("guidelines", "columns", "primary_criterion"):
            _check(isinstance(getattr(self, name), str), name, getattr(self, name), "use a text")
        for name in ("model", "proxy"):
            value = getattr(self, name)
            _check(value is None or isinstance(value, str), name, value, "use a text, or none")
        _check(
            _is_number(self.min_view_s) and 0 <= self.min_view_s <= MAX_MIN_VIEW_S,
            "min_view_s",
            self.min_view_s,
            f"use a number of seconds from 0 to {MAX_MIN_VIEW_S:g}",
        )
        _check(_are_targets(self.targets), "targets", self.targets, "name two or more distinct models, sorted, or none")
        _check(_is_card_key(self.card_key), "card_key", "(hidden)", "leave it out: the server draws it")
        _check(
            not self.targets or self.compare_mode in GRADED_COMPARE_MODES,
            "compare_mode",
            self.compare_mode,
            f"a comparison project is graded {', '.join(GRADED_COMPARE_MODES)} (the other modes are simulated only, so far)",
        )
        for name, check in (  # InputError when the stored scale or rubric is malformed, naming the setting
            ("scale", lambda: scale_from_settings({"scale": self.scale})),
            ("criteria", lambda: rubric_from_settings(self.criteria, self.primary_criterion, self.allocate_for)),
        ):
            try:
                check()
            except InputError as exc:
                exc.field = exc.field or f"settings.{name}"
                raise
        if self.criteria and self.targets:
            raise InputError(
                f"a rubric of {len(self.criteria)} criteria for a pool whose model column names "
                f"{len(self.targets)} models ({', '.join(self.targets)})",
                fix="a comparison asks one question of each response, so far: leave the criteria out, or upload a "
                "pool of one model",
            )

    @property
    def stopping(self) -> str:
        """The project's stopping regime (core.stats.stopping.REGIMES): ``fixed`` when the budget is fixed in
        advance, else ``regime``. The one place that decides it."""
        return FIXED if self.budget_fixed else self.regime

    def n0(self, n_items: int) -> int:
        """The grades the project plans, n0, for a pool of ``n_items`` (core.stats.design.planned_budget): a budget
        fixed in advance stops there."""
        return planned_budget(self.planned_budget, n_items)

    def anytime_n0(self, design: Design) -> int:
        """The n0 the project's anytime interval is tuned for on ``design`` (core.stats.forecast.tuned_n0): the
        planned budget where set (or fixed), else the forecast made before any grade for the target; a
        comparison's, whose forecast would read one score (ONE_SCORE_SETTINGS), its planned n0 (`n0`)."""
        if self.compares:
            return self.n0(design.N)
        return tuned_n0(
            design,
            float(self.target_half_width),
            self.stopping,
            planned=self.planned_budget,
            expected=self.expected_score,
            levels=self.grading_scale.values,
        )

    def budget(self, n_items: int) -> int | None:
        """The most items the queue hands out: n0 when the budget is fixed in advance, else None
        (core.stats.design.grading_budget)."""
        return grading_budget(self.planned_budget, self.budget_fixed, n_items)

    @property
    def compares(self) -> bool:
        """Whether the project compares several targets (the one place that decides it)."""
        return bool(self.targets)

    @property
    def side_by_side(self) -> bool:
        """Whether graders grade the project's items on the side-by-side card."""
        return self.compares and self.compare_mode == "side-by-side"

    @property
    def rubric(self) -> Rubric | None:
        """The project's rubric (core.rubric), None when it asks one question."""
        return rubric_from_settings(self.criteria, self.primary_criterion, self.allocate_for)

    @property
    def design_criterion(self) -> str:
        """The criterion whose grades the design, the queue's reading, the stopping rule and the forecast read:
        the rubric's primary criterion, ONE_QUESTION ("") without a rubric. The one place that decides it."""
        rubric = self.rubric
        return ONE_QUESTION if rubric is None else rubric.primary

    @property
    def grading_scale(self) -> Scale:
        """The scale of the grades the design reads: the primary criterion's in a rubric project, else ``scale``."""
        rubric = self.rubric
        return scale_from_settings({"scale": self.scale}) if rubric is None else rubric.criterion(rubric.primary).scale

    @classmethod
    def from_dict(cls, stored: SettingsLike | None) -> ProjectSettings:
        """Settings from their stored JSON: missing keys take their defaults, unknown keys (written by a
        newer or older version) are ignored. InputError for a bad value. Settings already typed are returned
        unchanged, so a reader that also serves the CLI and tests may take either (``SettingsLike``)."""
        if isinstance(stored, ProjectSettings):
            return stored
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (stored or {}).items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        """The settings as the database stores them (JSON), every field written."""
        return asdict(self)

    def shared_dict(self) -> dict[str, Any]:
        """`to_dict` without SECRET_SETTINGS, and a comparison's without ONE_SCORE_SETTINGS, which it does not
        read: what a report, which travels, writes of them."""
        left_out = SECRET_SETTINGS + (ONE_SCORE_SETTINGS if self.compares else ())
        return {k: v for k, v in self.to_dict().items() if k not in left_out}

    def with_changes(self, changes: Mapping[str, Any]) -> ProjectSettings:
        """A copy with ``changes`` applied and validated; InputError for an unknown setting or a bad value."""
        known = [f.name for f in fields(self)]
        unknown = sorted(set(changes) - set(known))
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            raise InputError(
                f"unknown setting {', '.join(unknown)}",
                fix=f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(known)}",
                field=f"settings.{unknown[0]}",
            )
        return replace(self, **changes)


MAX_JSON_INT = 2**53 - 1
"""The largest whole number a setting may hold: JSON's interoperable integers are those of IEEE 754 doubles, up to
2^53 - 1 (RFC 7493, I-JSON, section 2.2); a larger one was stored, read back as a float, and refused on every
read of the project (the project list of every user with it)."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_JSON_INT


def _are_targets(value: Any) -> bool:
    names = list(value) if isinstance(value, (list, tuple)) else None
    if names is None or not names:
        return names == []
    return (
        len(names) >= 2
        and all(isinstance(n, str) and n.strip() == n and n for n in names)
        and names == sorted(set(names))
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


ONE_SCORE_SETTINGS = ("target_half_width", "regime", "expected_score")
"""Settings of a stopping rule and a forecast that read one score: a comparison reads none of them (its stopping
rule is a budget fixed in advance, or the manager reading its anytime-valid intervals), so its settings form
offers them not and its report lists them not (a manager's review found them offered, and changing nothing)."""

SECRET_SETTINGS = ("card_key",)
"""Settings no report writes: a comparison's card key would tell a grader who read one which model is on which
side of a card still to grade."""


def _is_card_key(value: Any) -> bool:
    """Whether ``value`` is a card key: 32 hex digits (128 bits, core.services.side_by_side.new_card_key), or ""
    for none (a key such as "0" would be as guessable as none)."""
    return isinstance(value, str) and len(value) in (0, 32) and all(c in "0123456789abcdef" for c in value)


def _check(ok: bool, name: str, value: Any, fix: str) -> None:
    if not ok:
        raise InputError(f"setting {name} = {value!r} is not valid", fix=fix, field=f"settings.{name}")


SettingsLike = ProjectSettings | Mapping[str, Any]
"""What a reader that also serves the CLI and tests takes: typed settings, or their stored JSON (``from_dict``)."""

DEFAULTS = ProjectSettings()
"""Every setting's default, for forms that offer them."""
