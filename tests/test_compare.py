"""Comparing targets: long-format pools, the difference estimator and design, and the simulator's comparisons."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.inputs.io import load_inputs
from core.inputs.targets import has_targets, split_targets
from core.services.project import check_inputs
from core.services.side_by_side import card_order, grades_for_targets, side_names
from core.stats.allocation import make_design
from core.stats.compare import (
    difference_batch,
    difference_floor,
    pair_key,
    pairs,
    preference,
    resolved,
    simultaneous_level,
)
from core.stats.compare_design import comparison_design, pair_design
from core.stats.simulate import replay_queue, replication_orders
from core.stats.simulate_compare import compare_budget_items, paired_values, replay_comparison, simulate_comparisons
from core.surrogate.prepare import prepare_items
from core.surrogate.targets import prepare_targets
from core.testing.compare_pools import synthetic_comparison


def long_pool(n_items: int = 30, models=("beta", "alpha"), seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        right = rng.integers(0, 10)
        for k, model in enumerate(models):
            answer = str(right if rng.random() < 0.6 - 0.2 * k else right + 1 + k)
            rows.append(
                {
                    "id": f"q{i}",
                    "model": model,
                    "prompt": f"question {i}",
                    "response": f"so {answer}",
                    "answer": answer,
                    "label": float(answer == str(right)),
                }
            )
    return rows


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def samples_for(rows) -> list[dict]:
    ids = sorted({r["id"] for r in rows})
    return [{"id": i, "sample": str(s)} for i in ids for s in (1, 2, 3)]


def test_a_long_pool_splits_by_model_in_one_item_order(tmp_path):
    rows = long_pool()
    inputs = load_inputs(write_jsonl(tmp_path / "pool.jsonl", rows))
    targets = split_targets(inputs.pool)
    assert targets.models == ("alpha", "beta")
    assert targets.ids == [f"q{i}" for i in range(30)]
    for model in targets.models:
        pool = targets.pools[model]
        assert "model" not in pool.columns
        expected = [r["answer"] for r in rows if r["model"] == model]
        assert pool["answer"].tolist() == expected


@pytest.mark.parametrize(
    ("change", "message", "culprit"),
    [
        (
            lambda rows: [r for r in rows if not (r["id"] == "q3" and r["model"] == "alpha")],
            "item 'q3' has no row for model 'alpha'; its first row is for 'beta'",
            lambda r: r["id"] == "q3",
        ),
        (
            lambda rows: [r for r in rows if r["model"] == "beta" or r["id"] == "q0"],
            "model 'alpha' has only one row",
            lambda r: r["model"] == "alpha",
        ),
        (
            lambda rows: [r if r["id"] != "q2" or r["model"] != "beta" else {**r, "prompt": "other"} for r in rows],
            "item 'q2' has a different prompt for model 'beta' than for 'alpha' \\(row",
            lambda r: r["prompt"] == "other",
        ),
        (
            lambda rows: [{**r, "model": ""} if i == 4 else r for i, r in enumerate(rows)],
            "the row names no model",
            lambda r: r["model"] == "",
        ),
    ],
)
def test_a_bad_long_pool_is_a_clear_input_error_naming_the_row(tmp_path, change, message, culprit):
    """Every shape error names the row to fix: a missing model's row and a differing prompt named none (an
    integrator's review)."""
    rows = change(long_pool())
    inputs = load_inputs(write_jsonl(tmp_path / "pool.jsonl", rows))
    with pytest.raises(InputError, match=message) as error:
        split_targets(inputs.pool, "pool.jsonl")
    assert error.value.row == next(i for i, r in enumerate(rows, start=1) if culprit(r))


def test_an_id_repeated_for_one_model_names_the_model(tmp_path):
    rows = long_pool()
    with pytest.raises(InputError, match="id 'q0' for model 'beta' is used more than once, on rows 1, 61"):
        load_inputs(write_jsonl(tmp_path / "pool.jsonl", [*rows, rows[0]]))


def test_a_one_model_pool_with_a_model_column_stays_a_one_model_pool(tmp_path):
    rows = [r for r in long_pool() if r["model"] == "alpha"]
    inputs = load_inputs(write_jsonl(tmp_path / "pool.jsonl", rows))
    assert not has_targets(inputs.pool)
    with pytest.raises(InputError, match="id 'q0' is used more than once"):
        load_inputs(
            write_jsonl(tmp_path / "pool.jsonl", [{k: v for k, v in r.items() if k != "model"} for r in rows * 2])
        )


def test_preparation_gives_each_target_its_signals_and_the_shared_meaning(tmp_path):
    rows = long_pool()
    inputs = load_inputs(
        write_jsonl(tmp_path / "pool.jsonl", rows), write_jsonl(tmp_path / "s.jsonl", samples_for(rows))
    )
    comparison = prepare_targets(inputs)
    answers = {m: [r["answer"] for r in rows if r["model"] == m] for m in ("alpha", "beta")}
    np.testing.assert_array_equal(
        comparison.same_meaning("alpha", "beta"), np.array(answers["alpha"]) == np.array(answers["beta"])
    )
    for model in comparison.models:
        expected = [sum(s == int(a) for s in (1, 2, 3)) / 3 for a in answers[model]]
        np.testing.assert_allclose(comparison.items[model]["agreement"], expected)


def test_the_difference_estimate_is_exact_on_a_census_and_honest_on_agreeing_strata():
    design = make_design(np.repeat([0, 1], 10), np.full(20, 0.5))
    d = np.r_[np.zeros(10), np.tile([1.0, -1.0, 0.0, 1.0, 1.0], 2)]
    census = difference_batch(design, np.arange(20)[None], d[None])
    assert census.value[0] == pytest.approx(d.mean())
    low, high = census.interval()
    assert low[0] == pytest.approx(d.mean()) and high[0] == pytest.approx(d.mean())
    part = difference_batch(design, np.array([[0, 1, 2, 10, 11, 12, 13]]), d[[0, 1, 2, 10, 11, 12, 13]][None])
    low, high = part.interval()
    assert -1 <= low[0] < part.value[0] < high[0] <= 1
    # the stratum of zeros is not certain: its floor is positive and falls like 1/n^2
    three, thirty = (difference_floor(np.array([n]), np.zeros(1), np.zeros(1))[0] for n in (3.0, 30.0))
    assert three > 0 and thirty == pytest.approx(three * (0.5 / 31) * (1 - 0.5 / 31) / ((0.5 / 4) * (1 - 0.5 / 4)))
    # two strata of zeros share one prior: half a pseudo-grade over their 33 grades; a stratum of 1s has its own
    floors = difference_floor(np.array([3.0, 30.0, 5.0]), np.array([0.0, 0.0, 5.0]), np.array([0.0, 0.0, 5.0]))
    q, own = 0.5 / 34, 0.5 / 6
    assert floors == pytest.approx([q * (1 - q), q * (1 - q), own * (1 - own) * 4])
    missing = difference_batch(design, np.array([[0, 1]]), np.zeros((1, 2)))
    assert np.isnan(missing.value[0]) and missing.interval()[0][0] == -1


def test_pairs_levels_preference_and_what_is_resolved():
    assert pairs(("c", "a", "b")) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert pair_key("a", "b") == "a - b"
    assert simultaneous_level(0.95, 3) == pytest.approx(1 - 0.05 / 3)
    np.testing.assert_array_equal(preference([1, 0.5, 0], [0, 0.5, 1]), [1, 0.5, 0])
    assert (resolved(0.01, 0.2), resolved(-0.2, -0.01), resolved(-0.1, 0.1)) == ("A better", "B better", "unresolved")


def test_the_design_spends_grades_where_the_targets_disagree():
    comparison = synthetic_comparison(600, (0.6, 0.2), equal=0.6, seed=1)
    design = comparison_design(comparison)[("m0", "m1")]
    same = comparison.same_meaning("m0", "m1")
    agreeing = np.unique(design.stratum[same])
    assert agreeing.size == 1 and not np.isin(agreeing, design.stratum[~same]).any()
    h = int(agreeing[0])
    assert design.prior_sd[h] < design.prior_sd[np.arange(design.H) != h].min()
    assert design.spread_share is not None and design.spread_share.shape == (design.H,)
    assert pair_design(comparison, "m0", "m1", design.stratum).H == design.H


def test_the_comparison_queue_of_one_pair_is_the_one_target_queue():
    comparison = synthetic_comparison(300, (0.6, 0.2), equal=0.5, seed=5)
    design = comparison_design(comparison)[("m0", "m1")]
    labels = [comparison.items[m]["label"].to_numpy() for m in comparison.models]
    z = (1 + labels[0] - labels[1]) / 2
    orders = replication_orders(300, 0, 5)
    np.testing.assert_array_equal(replay_comparison([design], [z], orders, 60), replay_queue(design, z, orders, 60))


def test_the_comparison_queue_gives_grades_back_to_strata_whose_differences_are_not_quiet():
    """Answers of one meaning graded independently (noise 1): the prior calls their stratum quiet, its grades
    say otherwise, and the queue of three targets moves grades there (a fixed allocation would not)."""
    shares = []
    for noise in (0.0, 1.0):
        comparison = synthetic_comparison(1000, (0.5, 0.3, 0.1), equal=0.6, noise=noise, seed=11)
        designs = list(comparison_design(comparison).values())
        values = paired_values(comparison, "absolute")
        queue = replay_comparison(designs, [(1 + v) / 2 for v in values.values()], replication_orders(1000, 0, 20), 200)
        agreeing = designs[0].stratum[comparison.classes.min(axis=0) == comparison.classes.max(axis=0)]
        assert np.unique(agreeing).size == 1
        shares.append((designs[0].stratum[queue] == agreeing[0]).mean())
    assert shares[1] > shares[0] + 0.1


def test_budgets_count_grades_of_every_target():
    assert compare_budget_items(["0.1", "40"], "absolute", 2, 500) == {"0.1": 50, "40": 20}
    assert compare_budget_items(["0.1"], "side-by-side", 3, 500) == {"0.1": 50}
    assert compare_budget_items(["0.1", "40"], "pairwise", 2, 500) == {"0.1": 100, "40": 40}
    with pytest.raises(InputError, match="more than the 1000 a full comparison takes"):
        compare_budget_items(["1001"], "absolute", 2, 500)


def test_the_simulator_reports_every_pair_method_and_budget():
    comparison = synthetic_comparison(400, (0.6, 0.3, 0.0), equal=0.5, seed=2)
    result = simulate_comparisons(comparison, ["0.1", "30"], reps=20, seed=3)
    assert set(result["comparisons"]) == {"m0 - m1", "m0 - m2", "m1 - m2"}
    row = result["comparisons"]["m0 - m2"]["activegrade"]["0.1"]
    labels = {m: comparison.items[m]["label"].to_numpy() for m in comparison.models}
    assert row["truth"] == pytest.approx(labels["m0"].mean() - labels["m2"].mean())
    assert row["estimand"] == "mean(A) - mean(B)" and row["items"] == 40 and row["grades"] == 120
    for name in ("mse_ratio", "mse_ratio_se", "bias", "coverage", "coverage_anytime", "ci_width"):
        assert np.isfinite(row[name])
    assert result["level_per_pair"] == pytest.approx(1 - 0.05 / 3)
    assert set(result["comparisons_joint"]["uniform_paired"]["30"]) >= {"coverage", "coverage_anytime"}
    own = result["targets"]["m1"]["activegrade"]["0.1"]
    assert own["truth"] == pytest.approx(labels["m1"].mean()) and 0 <= own["coverage"] <= 1


def test_pairwise_mode_estimates_the_win_rate_from_a_preference_column():
    comparison = synthetic_comparison(300, (0.5, 0.2), seed=4)
    first = comparison.items["m0"]
    wins = np.where(np.arange(300) % 3 == 0, 1.0, np.where(np.arange(300) % 3 == 1, 0.5, 0.0))
    comparison.items["m0"] = first.assign(preference=wins)
    result = simulate_comparisons(comparison, ["0.2"], mode="pairwise", reps=20)
    row = result["comparisons"]["m0 - m1"]["activegrade"]["0.2"]
    assert row["estimand"] == "win rate of A (ties 1/2)" and row["truth"] == pytest.approx(wins.mean())
    assert row["items"] == 120 and row["grades"] == 120 and "targets" not in result


def test_cli_adds_comparisons_for_a_pool_with_a_model_column(tmp_path, capsys):
    rows = long_pool(60)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    samples = write_jsonl(tmp_path / "s.jsonl", samples_for(rows))
    out = tmp_path / "result.json"
    args = [
        "simulate",
        "--pool",
        pool,
        "--samples",
        samples,
        "--budgets",
        "0.2",
        "--reps",
        "10",
        "--json",
        str(out),
        "--methods",
        "uniform,activegrade",
        "--compare-mode",
        "side-by-side",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert main(args) == 0
    result = json.loads(out.read_text())
    assert result["target"] == "alpha" and set(result["methods"]) == {"uniform", "activegrade"}
    assert result["compare_mode"] == "side-by-side" and result["grades_per_item"] == 2
    assert set(result["comparisons"]["alpha - beta"]) == {"uniform_paired", "activegrade"}
    assert "alpha - beta" in capsys.readouterr().out
    frame = pd.DataFrame(rows)
    assert result["comparisons"]["alpha - beta"]["activegrade"]["0.2"]["truth"] == pytest.approx(
        frame[frame.model == "alpha"].label.mean() - frame[frame.model == "beta"].label.mean()
    )


def test_the_side_by_side_order_is_random_per_item_fixed_per_card_and_maps_grades_back():
    targets = ("alpha", "beta")
    orders = [card_order(7, p, targets) for p in range(200)]
    assert orders == [card_order(7, p, targets) for p in range(200)]
    left_alpha = sum(order[0] == "alpha" for order in orders)
    assert 70 < left_alpha < 130 and all(sorted(order) == list(targets) for order in orders)
    assert side_names(2) == ("Response 1", "Response 2")
    order = card_order(7, 0, targets)
    assert grades_for_targets(order, [1.0, 0.0]) == {order[0]: 1.0, order[1]: 0.0}
    with pytest.raises(InputError, match="1 grades for a card of 2 responses"):
        grades_for_targets(order, [1.0])
    with pytest.raises(InputError, match="the grade of Response 2 is 2"):
        grades_for_targets(order, [1.0, 2])


def test_a_project_finds_the_targets_and_one_model_preparation_refuses_them(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", long_pool())
    upload = ("pool.jsonl", (tmp_path / "pool.jsonl").read_bytes())
    assert check_inputs(upload, None, {})[0] == ["alpha", "beta"]
    with pytest.raises(InputError, match="compares 2 models; sampling"):
        check_inputs(upload, None, {"sampling": {"model": "x"}})
    with pytest.raises(InputError, match="names 2 models"):
        prepare_items(load_inputs(pool))


def test_the_pools_shape_is_said_before_the_samples_are_matched_against_it():
    """A comparison pool missing a model's row, uploaded with samples for items it no longer has, was said only as
    "samples.jsonl, row 81: id 'gsm8k-0020' is not in the pool (and 5192 more rows)" (an integrator's review)."""
    rows = long_pool()
    samples = samples_for(rows)
    pool = [r for r in rows if not (r["id"] == "q3" and r["model"] == "alpha") and r["id"] != "q7"]
    upload = ("pool.jsonl", "".join(json.dumps(r) + "\n" for r in pool).encode())
    sample_file = ("samples.jsonl", "".join(json.dumps(r) + "\n" for r in samples).encode())
    with pytest.raises(InputError, match="item 'q3' has no row for model 'alpha'") as error:
        check_inputs(upload, sample_file, {})
    assert error.value.file == "pool.jsonl"
    whole = ("pool.jsonl", "".join(json.dumps(r) + "\n" for r in rows if r["id"] != "q7").encode())
    with pytest.raises(InputError, match="'q7' is not in the pool") as error:  # a sound pool: the samples' error
        check_inputs(whole, sample_file, {})
    assert error.value.file == "samples.jsonl"
