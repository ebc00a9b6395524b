"""An existing score as the design's proxy: validation, strata, predicted grades, the design, CLI and app."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.exports.report import report as build_report
from core.exports.report import report_markdown
from core.inputs.io import Inputs
from core.services.grading import grader_view
from core.services.project import create_project, start_preparation
from core.stats.allocation import design_from_items
from core.stats.estimate import estimate
from core.stats.proxy import PROXY_COLUMN, numeric_columns, predicted_grade, proxy_name, proxy_strata, proxy_values
from core.stats.simulate import simulate
from core.store import Store
from core.surrogate.prepare import prepare_items


def judged_pool(n: int = 400, seed: int = 0, *, flip: float = 0.1) -> pd.DataFrame:
    """Binary labels and a judge's 0/1 verdict that disagrees with them on a `flip` share of items."""
    rng = np.random.default_rng(seed)
    label = (rng.random(n) < 0.3).astype(float)
    judge = np.where(rng.random(n) < flip, 1 - label, label)
    return pd.DataFrame(
        {"id": [f"i{i}" for i in range(n)], "prompt": "p", "response": "r", "label": label, "judge": judge}
    )


def inputs_of(pool: pd.DataFrame) -> Inputs:
    samples = pd.DataFrame({"id": pd.Series(dtype=str), "sample": pd.Series(dtype=str)})
    return Inputs(pool=pool, samples=samples, without_samples=pool["id"].tolist())


def test_missing_proxy_column_names_the_numeric_ones():
    with pytest.raises(InputError, match=r"no column 'jduge'.*use one of its numeric columns: judge"):
        proxy_values(judged_pool(), "jduge", file="pool.jsonl")


def test_non_numeric_proxy_names_the_item():
    pool = judged_pool(5).astype({"judge": object})
    pool.loc[3, "judge"] = "win"
    with pytest.raises(InputError, match=r"row 4.*'win' of item 'i3' is not a number"):
        proxy_values(pool, "judge")


def test_the_label_cannot_be_its_own_proxy():
    with pytest.raises(InputError, match="the label is the grade to estimate"):
        proxy_values(judged_pool(), "label")


def test_blank_proxy_cells_are_missing_values():
    pool = judged_pool(4).astype({"judge": object})
    pool.loc[1, "judge"] = ""
    pool.loc[2, "judge"] = None
    values = proxy_values(pool, "judge")
    assert np.isnan(values[1]) and np.isnan(values[2]) and np.isfinite(values[[0, 3]]).all()


def test_numeric_columns_skip_text_lists_and_the_label():
    pool = judged_pool(3).assign(score=["1.5", "", "2"], samples=[["a"], ["b"], ["c"]])
    assert numeric_columns(pool) == ["judge", "score"]


def test_predicted_grade_keeps_unit_scores_and_ranks_others():
    np.testing.assert_array_equal(predicted_grade(np.array([0.0, 0.5, 1.0])), [0.0, 0.5, 1.0])
    ranked = predicted_grade(np.array([-3.0, 10.0, 2.0, 2.0, np.nan]))
    np.testing.assert_allclose(ranked[:4], [0.125, 0.875, 0.5, 0.5])
    assert np.isnan(ranked[4])


def test_verdict_gets_one_stratum_per_value_and_tiny_ones_merge():
    values = np.array([0.0] * 30 + [0.5] + [1.0] * 20)
    strata = proxy_strata(values, n_strata=5, min_size=10)
    assert np.bincount(strata).tolist() == [30, 21]
    assert strata[30] == 1  # the lone tie joins its smaller neighbour


def test_continuous_proxy_gets_equal_frequency_strata_in_order_and_missing_last():
    values = np.concatenate([np.random.default_rng(0).normal(size=100), [np.nan] * 3])
    strata = proxy_strata(values, n_strata=4, min_size=5)
    assert np.bincount(strata).tolist() == [25, 25, 25, 25, 3]
    assert (strata[100:] == 4).all()
    means = [values[strata == h].mean() for h in range(4)]
    assert means == sorted(means)


def test_prepared_items_carry_the_proxy_and_the_design_uses_it():
    pool = judged_pool()
    items = prepare_items(inputs_of(pool), proxy="judge", n_strata=5)
    assert proxy_name(items) == "judge"
    np.testing.assert_array_equal(items[PROXY_COLUMN], pool["judge"])
    np.testing.assert_array_equal(items["stratum"], pool["judge"].astype(int))
    design = design_from_items(items)  # the app's default re-stratification gives way to the proxy
    np.testing.assert_array_equal(design.stratum, pool["judge"].astype(int))
    assert design.prior_mean[1] > design.prior_mean[0]
    assert design.covariates.shape[1] == 1  # the proxy; agreement and entropy are all NaN here
    surrogate = design_from_items(items, proxy_column="agreement")
    assert surrogate.H == 1  # no samples: one stratum of items without samples


def test_without_a_proxy_nothing_changes():
    items = prepare_items(inputs_of(judged_pool()))
    assert PROXY_COLUMN not in items.columns
    assert proxy_name(items) == "agreement (surrogate)"


def test_a_good_proxy_beats_uniform_and_the_simulator_names_it():
    items = prepare_items(inputs_of(judged_pool(flip=0.05)), proxy="judge")
    result = simulate(items, ["0.1"], reps=300, methods=["uniform", "activegrade"])
    assert result["proxy"] == "judge"
    assert result["methods"]["activegrade"]["0.1"]["mse_ratio"] < 0.6


def test_cli_prepare_and_simulate_with_a_proxy(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    judged_pool(200).to_json(pool, orient="records", lines=True)
    out = tmp_path / "items.csv"
    assert main(["prepare", "--pool", str(pool), "--out", str(out), "--proxy", "judge"]) == 0
    assert "design proxy: judge" in capsys.readouterr().out
    assert PROXY_COLUMN in pd.read_csv(out).columns
    assert main(["simulate", "--pool", str(pool), "--proxy", "judge", "--reps", "20", "--budgets", "0.1"]) == 0
    assert "design proxy: judge" in capsys.readouterr().out
    assert main(["prepare", "--pool", str(pool), "--out", str(out), "--proxy", "prompt"]) == 2
    assert "proxy value 'p' of item 'i0' is not a number" in capsys.readouterr().err


def test_project_with_a_proxy_prepares_hides_it_from_graders_and_reports_it(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    lines = "\n".join(json.dumps(r) for r in judged_pool(60).to_dict(orient="records"))
    upload = ("pool.jsonl", lines.encode())
    with pytest.raises(InputError, match="no column 'score'"):
        create_project(store, "Bad", upload, settings={"proxy": "score"}, start=False)
    assert store.projects() == []
    pid = create_project(store, "Judged", upload, settings={"proxy": "judge"}, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    items = store.load_items(pid)
    design = design_from_items(items, stratify_by=None)  # as the app builds it
    np.testing.assert_array_equal(design.stratum, items["judge"].astype(int))
    item = store.item(pid, 0)
    settings = store.project(pid).settings
    assert "judge" not in json.dumps(grader_view(item, settings))
    assert "proxy" not in grader_view(item, settings)
    assert "proxy" in grader_view(item, settings.with_changes({"show_signals": True}))["signals"]
    info = store.project(pid)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    report = build_report(info, design, estimate(design, [], []), store.input_files(pid), store.grades(pid))
    assert "Design proxy (strata and predicted grades): pool column 'judge'." in report_markdown(report)
