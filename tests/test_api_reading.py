"""GET reading's body and schema (core.api.schemas) are derived from core.services.reading.Reading: every field
of the reading, and of its nested dataclasses, is in both, where the client and docs/api.md read it."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, fields, is_dataclass
from typing import Any

import jsonschema
import numpy as np
import pytest

from activegrade.client import INTERVAL_ROLES, _of, reading_of
from activegrade.client import Interval as ClientInterval
from core.api import schemas
from core.exports.report import criterion_rows
from core.services.criteria_reading import read_criteria
from core.services.live import Live
from core.services.reading import Reading, read_project
from core.stats.confseq import anytime_interval
from core.stats.design import prepared_design
from core.stats.estimate import estimate
from core.stats.simulate import labels_of, replay_queue, replication_orders, synthetic_items
from core.stats.skips import skip_bound
from core.stats.validation import Validated
from core.store import json_safe


@pytest.fixture(scope="module")
def read() -> schemas.Read:
    """A reading of 300 grades with 3 skips, its anytime interval computed, past the first planned look."""
    items = synthetic_items(600, signal=1.0, seed=3)
    labels = labels_of(items)
    design = prepared_design(items)
    positions = [int(p) for p in replay_queue(design, labels, replication_orders(labels.size, 1, 1), 300)[0]]
    grades = [float(labels[p]) for p in positions]
    fixed = estimate(design, positions, grades)
    sequence = anytime_interval(design, positions, grades, 300)
    skips = skip_bound(design, positions, grades, np.setdiff1d(np.arange(design.N), positions)[:3])
    settings = {"target_half_width": 0.1, "regime": "looks"}
    graded = dict(zip(positions, grades))
    reading = read_project(design, settings, graded, fixed, sequence, skips=skips)
    primary = Live(graded, fixed, skips, sequence, reading)
    rows = criterion_rows(read_criteria(design, settings, {}, primary, skipped=()))  # the one question's row
    return schemas.Read(reading, fixed, design.N, rows, None, None)


def _json(value: Any) -> Any:
    """A field's value as the body writes it."""
    return json_safe(asdict(value) if is_dataclass(value) else value)


def _body_keys(value: Any) -> Any:
    """The keys of a body, nested (an array's by its first entry; None at a leaf)."""
    if isinstance(value, dict):
        return {k: _body_keys(v) for k, v in value.items()}
    return _body_keys(value[0]) if isinstance(value, list) and value else None


def _schema_keys(schema: dict[str, Any]) -> Any:
    """The properties of a schema, nested as `_body_keys` gives a body's keys."""
    if "properties" in schema:
        return {k: _schema_keys(v) for k, v in schema["properties"].items()}
    return _schema_keys(schema["items"]) if "properties" in schema.get("items", {}) else None


def test_every_field_of_the_reading_is_in_the_body_and_the_schema(read):
    body, schema = schemas.reading_body(read), schemas.READING["properties"]
    assert read.reading.anytime is not None and read.reading.rule is not None and read.reading.skipped == 3
    for f in fields(Reading):
        value = _json(getattr(read.reading, f.name))
        group, key = schemas.reading_place(f.name)
        if group == "intervals":
            assert [i for i in body["intervals"] if i["role"] == key] == [{"role": key, **value}], f.name
            assert key in schema["intervals"]["items"]["properties"]["role"]["enum"], f.name
        elif key is None:  # a nested dataclass: its fields spread into the group of its name
            assert {k: body[group][k] for k in value} == value, f.name
            assert set(value) <= set(schema[group]["properties"]), f.name
        else:
            assert body[group][key] == value, f.name
            assert key in schema[group]["properties"], f.name


def test_the_body_is_what_its_schema_says_and_what_the_client_reads(read):
    body = schemas.reading_body(read)
    jsonschema.Draft202012Validator(schemas.READING).validate(body)
    full = schemas.reading_body(dataclasses.replace(read, validated=Validated(0.4, 0.1, 0.2, 0.6, 0.0, 9, 0.95)))
    assert _body_keys(full) == _schema_keys(schemas.READING)  # no key outside the schema, no key of the schema left out
    assert [_of(ClientInterval, i).role for i in body["intervals"]] == list(INTERVAL_ROLES)
    assert schemas.READING["properties"]["intervals"]["items"]["properties"]["role"]["enum"] == list(INTERVAL_ROLES)
    newer = {**body["intervals"][0], "a_field_added_later": 1}  # a server newer than the client
    assert _of(ClientInterval, newer) == _of(ClientInterval, body["intervals"][0])
    assert body["estimate"]["value"] == pytest.approx(read.estimate.value) and body["counts"]["graded"] == 300
    assert isinstance(body["stopping"]["done"], bool) and body["stopping"]["words"]
    assert {"n", "low", "high", "items_left", "uniform"} <= set(body["forecast"])
    assert {"known", "fixed_n", "same_regime", "uniform_fixed", "uniform_same", "words"} <= set(body["saving"])
    # grade counts are JSON integers wherever they are given (uniform's were 173.0 beside the forecast's 168)
    assert all(type(body["saving"][k]) is int for k in ("uniform_fixed", "uniform_same")), body["saving"]
    assert all(type(body["forecast"][k]) is int for k in ("n", "low", "high", "uniform"))


def test_a_reading_before_any_grade_is_a_body_its_schema_holds():
    """A new project, no grade: no interval to report yet (a 500 before, reading the interval's name)."""
    items = synthetic_items(200, signal=1.0, seed=3)
    design = prepared_design(items)
    settings = {"target_half_width": 0.1, "regime": "looks"}
    none = estimate(design, [], [])
    reading = read_project(design, settings, {}, none)
    rows = criterion_rows(read_criteria(design, settings, {}, Live({}, none, None, None, reading), skipped=()))
    body = schemas.reading_body(schemas.Read(reading, none, design.N, rows, None, None))
    jsonschema.Draft202012Validator(schemas.READING).validate(body)
    assert body["criteria"][0]["interval"] is None and body["estimate"]["reported_when"] == ""
    # the saving is withheld until every stratum has 2 grades, as on the dashboard: no number a client could show
    assert body["saving"]["known"] is False and reading.saving.uniform_fixed > 0
    assert all(body["saving"][name] is None for name in schemas.SAVING_NUMBERS)
    assert body["forecast"]["uniform"] == reading.forecast.uniform  # the plan's uniform size is the forecast's


def test_the_reported_estimate_is_the_stops_where_the_rule_said_done_before_the_grades_given():
    """The estimate to report with the interval 'now': the body's ``reported`` and the criterion row's, at the
    stop the looks made before the grades given (the client's ``Reading.estimate``), beside every grade's."""
    items = synthetic_items(600, signal=1.0, seed=3)
    labels = labels_of(items)
    design = prepared_design(items)
    positions = [int(p) for p in replay_queue(design, labels, replication_orders(labels.size, 1, 1), 300)[0]]
    graded = {p: float(labels[p]) for p in positions}
    fixed = estimate(design, positions, list(graded.values()))
    reading = read_project(design, {"target_half_width": 0.1}, graded, fixed)
    rows = criterion_rows(read_criteria(design, {}, {}, Live(graded, fixed, None, None, reading), skipped=()))
    body = schemas.reading_body(schemas.Read(reading, fixed, design.N, rows, None, None))
    assert reading.done and reading.stop_at is not None and reading.stop_at < 300
    assert body["estimate"]["reported"] == pytest.approx(reading.stop_value)
    assert body["estimate"]["reported"] != pytest.approx(body["estimate"]["value"])
    assert (
        rows[0]["estimate"] == pytest.approx(reading.stop_value) and "at the stop" in body["estimate"]["reported_when"]
    )
    # the client's s.e. goes with its estimate: every grade's s.e. was paired with the stop's estimate
    read = reading_of(body)
    assert (read.estimate, read.se) == (body["estimate"]["reported"], None)
    assert (read.all_grades, read.all_grades_se) == (fixed.value, fixed.se)


def test_a_type_without_a_json_schema_is_refused():
    assert schemas.json_schema(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}
    assert schemas.json_schema(float | None) == {"type": ["number", "null"]}
    with pytest.raises(TypeError, match="SCALARS"):
        schemas.json_schema(complex)
    with pytest.raises(TypeError, match="one type"):
        schemas.json_schema(int | str | None)


def test_the_review_backlog_and_the_corrected_estimate_are_in_the_body(read):
    """The dashboard showed the estimate corrected on the reviewed sample and the items waiting for review; GET
    reading gave neither (an integrator's review). Not yet measurable, its numbers are null, as the schema says."""
    corrected = Validated(0.374, 0.1, 0.179, 0.570, -0.008, 12, 0.95)
    for validated in (corrected, Validated(*[float("nan")] * 5, 3, 0.95), None):
        body = schemas.reading_body(dataclasses.replace(read, waiting=6, validated=validated, settled=(1, 2)))
        jsonschema.Draft202012Validator(schemas.READING).validate(body)
        client = reading_of(body)
        assert client.review["waiting_items"] == 6
        assert client.review["validated"] == (validated and json_safe(asdict(validated)))
        assert (client.review["disagreements_settled"], client.review["disagreements"]) == (1, 2)
    assert reading_of(schemas.reading_body(read)).review == {
        "waiting_items": 0,
        "validated": None,
        "disagreements": 0,
        "disagreements_settled": 0,
    }
