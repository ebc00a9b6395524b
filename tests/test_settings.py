import argparse
import inspect

import pytest

from core.cli.prepare import add_arguments
from core.errors import InputError
from core.scales import LIKERT
from core.settings import ProjectSettings
from core.stats.strata import DEFAULT_STRATIFY_BY
from core.surrogate.prepare import prepare_items
from core.surrogate.targets import prepare_targets


def test_defaults_fill_what_is_not_stored_and_unknown_keys_are_ignored():
    settings = ProjectSettings.from_dict({"seed": 7, "written_by_a_newer_version": 1})
    assert settings.seed == 7
    assert settings.stratify_by == DEFAULT_STRATIFY_BY
    assert settings.grading_scale.kind == "binary"
    assert ProjectSettings.from_dict(settings.to_dict()) == settings


def test_from_dict_keeps_typed_settings_and_reads_a_mapping():
    typed = ProjectSettings(seed=3)
    assert ProjectSettings.from_dict(typed) is typed
    assert ProjectSettings.from_dict({"seed": 3}) == typed
    assert ProjectSettings.from_dict(None) == ProjectSettings()


@pytest.mark.parametrize(
    ("stored", "name"),
    [
        ({"backend": "magic"}, "backend"),
        ({"stratify_by": "vibes"}, "stratify_by"),
        ({"n_strata": 0}, "n_strata"),
        ({"n_strata": True}, "n_strata"),
        ({"seed": -1}, "seed"),
        ({"target_half_width": 0}, "target_half_width"),
        ({"target_half_width": float("nan")}, "target_half_width"),
        ({"method": "magic"}, "method"),
        ({"overlap": 1.5}, "overlap"),
        ({"threshold": 2.0}, "threshold"),
        ({"planned_budget": 0}, "planned_budget"),
        ({"budget_fixed": "yes"}, "budget_fixed"),
        ({"min_view_s": -0.1}, "min_view_s"),
        ({"min_view_s": float("inf")}, "min_view_s"),
        ({"min_view_s": 60}, "min_view_s"),
        ({"min_view_s": "0.3"}, "min_view_s"),
        ({"expected_score": 0}, "expected_score"),
        ({"expected_score": 1.0}, "expected_score"),
        ({"expected_score": "0.8"}, "expected_score"),
        ({"seed": 2**70}, "seed"),  # stored as JSON it comes back a float, and every read of the project failed
        ({"planned_budget": 10**30}, "planned_budget"),
        ({"show_reference": "yes"}, "show_reference"),
        ({"external_images": "x"}, "external_images"),
        ({"guidelines": None}, "guidelines"),
        ({"proxy": 3}, "proxy"),
    ],
)
def test_a_bad_value_is_an_input_error_naming_the_setting(stored, name):
    with pytest.raises(InputError, match=f"setting {name} ="):
        ProjectSettings.from_dict(stored)


def test_the_minimum_viewing_time_defaults_to_0_3_s_and_may_be_0():
    assert ProjectSettings().min_view_s == 0.3
    assert ProjectSettings.from_dict({"min_view_s": 0}).min_view_s == 0


def test_changes_are_validated_and_unknown_settings_refused():
    settings = ProjectSettings().with_changes({"scale": LIKERT.to_settings(), "overlap": 0.2})
    assert settings.grading_scale == LIKERT and settings.overlap == 0.2
    with pytest.raises(InputError, match="unknown setting"):
        settings.with_changes({"sede": 1})
    with pytest.raises(InputError, match="overlap"):
        settings.with_changes({"overlap": -0.1})


def test_the_command_lines_defaults_are_the_project_settings_defaults():
    """`activegrade prepare` (and every command sharing its options) and `prepare_items` default to what a
    project stores by default, read from ProjectSettings rather than written again."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--pool", "pool.jsonl", "--out", "items.csv"])
    defaults = ProjectSettings()
    assert (args.backend, args.format, args.samples_format, args.strata, args.stratify_by) == (
        defaults.backend,
        defaults.input_format,
        defaults.input_format,
        defaults.n_strata,
        defaults.stratify_by,
    )
    assert (args.model, args.threshold, args.proxy) == (defaults.model, defaults.threshold, defaults.proxy)
    for prepare in (prepare_items, prepare_targets):
        assert inspect.signature(prepare).parameters["backend"].default == defaults.backend


def test_the_expected_score_is_unset_by_default_and_kept_when_given():
    assert ProjectSettings().expected_score is None
    assert ProjectSettings.from_dict({"expected_score": 0.02}).expected_score == 0.02


def test_a_comparisons_anytime_n0_is_its_planned_n0():
    """A comparison's anytime intervals are tuned for its planned n0: the one-score forecast the other projects'
    n0 follows reads no comparison (the settings form and the reading both took it from here)."""
    import numpy as np

    from core.stats.allocation import make_design

    design = make_design(np.repeat([0, 1], 200), np.full(400, 0.5))
    compared = ProjectSettings().with_changes({"targets": ["a", "b"]})
    assert compared.anytime_n0(design) == compared.n0(400)
    assert compared.with_changes({"planned_budget": 77}).anytime_n0(design) == 77
