"""Exports anyone can check: the grades export carries the design, the estimate is recomputed from it with
a few lines of pandas (the report's formula, not core/), and downloads keep their bytes across reruns."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select, update

from core.exports.project_export import report_bytes, report_data
from core.exports.report import (
    RECOMPUTE_SCRIPT,
    ChainCheck,
    estimate_line,
    grader_rows,
    grades_csv,
    grades_table,
    report,
    report_markdown,
    settings_table,
)
from core.exports.report_html import report_html
from core.scales import BINARY
from core.services.reading import WIDENED
from core.services.reservations import submit
from core.services.tracking import current_estimate
from core.settings import ProjectSettings
from core.stats.allocation import design_from_items, make_design
from core.stats.estimate import estimate
from core.stats.skips import skip_bound
from core.stats.validation import Validated
from core.store import accounts, audit_chain
from core.store.models import AuditEvent
from tests.markdown_text import shown


def _grade(store, project_id: int) -> None:
    """Every item of the pool graded by ann except a few; some double-graded by bob, some disagreeing."""
    items = store.load_items(project_id)
    for position in range(0, 30):
        label = "Correct" if items.loc[position, "label"] == 1 else "Incorrect"
        submit(store, project_id, position, BINARY, label, "ann", seconds=3.0)
    for position in range(0, 8):
        submit(store, project_id, position, BINARY, "Correct" if position % 2 else "Incorrect", "bob", seconds=4.0)
    store.add_skip(project_id, 35, "ann")


def _report(store, project_id: int) -> tuple[dict, pd.DataFrame]:
    items = store.load_items(project_id)
    design = design_from_items(items, stratify_by=None)
    graded = store.graded_positions(project_id)
    grades = store.grades(project_id)
    skips = skip_bound(design, list(graded), graded.values(), store.skipped_positions(project_id))
    project = store.project(project_id)
    data = report(
        project,
        design,
        current_estimate(design, graded),
        {"pool": ("p.jsonl", b"x")},
        grades,
        skips,
        skip_steps=store.skip_steps(project_id),
    )
    return data, grades_table(grades, items, design)


def test_estimate_and_variance_recomputed_from_the_grades_export_alone(store, project_id):
    _grade(store, project_id)
    data, table = _report(store, project_id)
    g = pd.read_csv(StringIO(grades_csv(table).decode()))
    # the report's formula, step by step
    y = g.groupby("position").agg(
        y=("grade", "mean"),
        h=("stratum", "first"),
        N=("stratum_size", "first"),
        W=("weight", "first"),
        pi=("inclusion_probability", "first"),
    )
    s = y.groupby("h").agg(
        n=("y", "size"),
        m=("y", "mean"),
        v=("y", "var"),
        t=("y", "sum"),
        N=("N", "first"),
        W=("W", "first"),
        spread=("y", lambda v: v.max() - v.min()),
    )
    equal = s.spread < 1e-9
    agree = s[equal].groupby("m")[["t", "n"]].transform("sum").reindex(s.index)  # strata equal on one grade
    p = (agree.t + 0.5) / (agree.n + 1)
    whole = (y.y.sum() + 0.5) / (len(y) + 1)
    shown = (s.n > 1) & ~equal  # the grades' share of the Bernoulli variance, where the grades differ (step 5)
    share = ((s.n - 1) * s.v)[shown].sum() + whole * (1 - whole)
    share = min(1.0, share / ((s.n * s.m * (1 - s.m))[shown].sum() + whole * (1 - whole)))
    s2 = np.where(equal, share * p * (1 - p), s.v)
    mu = (s.W * s.m).sum()
    variance = (s.W**2 * (1 - s.n / s.N) * s2 / s.n).sum()
    assert np.isclose(mu, data["estimate"]["value"]) and np.isclose(mu, data["recompute"]["value"])
    assert np.isclose(variance, data["estimate"]["se"] ** 2) and np.isclose(variance, data["recompute"]["variance"])
    assert np.isclose((y.y / y.pi).sum() / s.N.sum(), mu)  # the Horvitz-Thompson form with the export's pi
    assert np.isclose(s.W.sum(), 1.0) and data["estimate"]["grades_given"] == 38 and data["estimate"]["grades"] == 30
    # the file the script reads, named where it is given (a new user's download was demo-grades.csv)
    assert 'pd.read_csv("grades.csv")' in data["recompute"]["script"]
    assert "as `grades.csv` beside the script" in report_markdown(data) and "grades.csv" in report_html(data)


def _script_variance(tmp_path, monkeypatch, capsys, design, positions, grades) -> float:
    """V that RECOMPUTE_SCRIPT prints from a grades export of ``grades`` at ``positions`` (strata of 500)."""
    rows = pd.DataFrame(
        {
            "stratum": design.stratum[positions],
            "position": positions,
            "grade": grades,
            "final_grade": grades,
            "stratum_size": 500,
        }
    )
    rows.assign(weight=0.25).to_csv(tmp_path / "grades.csv", index=False)
    monkeypatch.chdir(tmp_path)
    exec(RECOMPUTE_SCRIPT, {})
    return float(capsys.readouterr().out.split()[1])


STRATA = np.repeat([0, 1, 2, 3], 500)
TAKEN = np.concatenate([np.arange(6), np.arange(500, 509), np.arange(1000, 1004), np.arange(1500, 1510)])


@pytest.mark.parametrize(
    "grades",
    [
        # two strata of 0s, one of 1s and one mixed: strata of one common grade share one Jeffreys prior
        np.concatenate([np.zeros(15), np.ones(4), np.tile([0.0, 1.0], 5)]),
        # Likert grades the F test reads as one stratum: one pooled spread, and the bounded variance's rho
        # with Jeffreys' pseudo-grade (the script had left both out: 0.00292 against 0.00264)
        np.array(
            [0.0, 0.25, 0, 0, 0.5, 0, 0, 0, 0.25, 0, 0, 1, 0, 0, 0.75, 0, 0.25, 0, 0, 0, 0.5, 0, 0, 0.25, 0, 0, 0, 0, 0]
        ),
    ],
)
def test_the_recompute_script_gives_the_estimators_own_variance(tmp_path, monkeypatch, capsys, grades):
    design = make_design(STRATA, np.full(2000, 0.5))
    variance = _script_variance(tmp_path, monkeypatch, capsys, design, TAKEN, grades)
    assert variance == pytest.approx(estimate(design, TAKEN, grades).se ** 2, rel=1e-9)


def test_report_has_method_graders_agreement_skips_stopping_settings_and_hashes(store, project_id):
    _grade(store, project_id)
    data, _ = _report(store, project_id)
    assert data["graders"]["agreement"]["items_graded_twice"] == 8
    assert {r["grader"] for r in data["graders"]["by_grader"]} == {"ann", "bob"}
    assert data["skips"]["skipped"] == 1 and data["stopping_rule"]["target_half_width"] == 0.05
    assert isinstance(data["stopping_rule"]["met"], bool)
    e = data["estimate"]  # the interval to quote, decided once: the stopping rule's, not the fixed-n one
    assert e["reported"] == e["stopping_interval"] and e["reported"]["ci_low"] != e["ci_low"]
    assert e["anytime"]["interval"].endswith(WIDENED)  # the skip's worst case in it, as the dashboard shows it
    store.update_settings(project_id, {"budget_fixed": True, "planned_budget": 20})  # the fixed-n one, then
    fixed = _report(store, project_id)[0]["estimate"]
    assert fixed["stopping_interval"] is None and (fixed["reported"]["ci_low"], fixed["reported"]["level"]) == (
        fixed["ci_low"],
        fixed["level"],
    )
    store.update_settings(project_id, {"budget_fixed": False})
    text = report_markdown(data)
    for heading in ("## Method", "## Graders", "## Skips", "## Recompute", "## Settings", "Stopping:"):
        assert heading in text
    assert "| setting | value |" in text and "| seed | 0 |" in text
    hostile = report_markdown({**data, "project": "=evil<script>alert(1)</script>"})  # shown literally
    assert "# ActiveGrade report: \\=evil\\<script\\>" in hostile and "<script>" not in hostile
    assert data["inputs"]["pool"]["sha256"] in text
    page = report_html(data)
    assert page.count("<svg") == 2 and "Krippendorff" in page and "<script" not in page
    assert "Recompute" in page and "<table" in page


def test_the_report_gives_one_saving_the_dashboards_words(store, project_id):
    """One saving, the reading's (core.services.reading.saving_words): both comparisons, labelled; not a second
    one at the same number of grades beside it, which contradicted it (issue 27)."""
    _grade(store, project_id)
    data, _ = _report(store, project_id)
    saving = data["stopping_rule"]["saving"]
    assert saving is not None and "fixed-n interval" in saving["words"] and "same rule" in saving["words"]
    for text in (report_markdown(data), report_html(data)):
        assert "Design effect" not in text and "at the same number of graded items" not in text
        assert saving["words"] in html.unescape(text)


def test_report_bytes_do_not_change_on_a_rerun_and_date_from_the_last_grade(store, project_id):
    _grade(store, project_id)
    first, _ = _report(store, project_id)
    again, _ = _report(store, project_id)
    assert json.dumps(first) == json.dumps(again) and report_html(first) == report_html(again)
    last = pd.to_datetime(store.grades(project_id)["created_at"], utc=True).max()
    assert pd.Timestamp(first["generated_at"]) == last
    submit(store, project_id, 31, BINARY, "Correct", "ann")
    assert _report(store, project_id)[0]["generated_at"] != first["generated_at"]
    # people read the time to the minute, in UTC; the JSON keeps it whole
    words = f"As of {last:%Y-%m-%d %H:%M} UTC (the last grade's or review's time)"
    assert words in report_markdown(first) and words in html.unescape(report_html(first))


def test_a_review_moves_the_reports_time(store, project_id):
    """A review changes the figures: the report's time stayed at the last grade's, and two reports of one time
    showed different numbers (an integrator's review)."""
    from core.store import reviews

    _grade(store, project_id)
    design = design_from_items(store.load_items(project_id), stratify_by=None)
    before = report_data(store, store.project(project_id), design)
    reviews.add_review(store, project_id, 0, value=1.0, label="Correct", reviewer="rita")
    after = report_data(store, store.project(project_id), design)
    made = pd.to_datetime(reviews.reviews(store, project_id)["created_at"], utc=True).max()
    assert pd.Timestamp(after["generated_at"]) == made > pd.Timestamp(before["generated_at"])


def test_the_reports_prose_has_no_markdown_marks_and_no_parentheses_in_parentheses(store, project_id):
    """The interval's name is prose ('look 1 of 2, a repeated confidence interval at ...'), so the sentence that
    puts it in parentheses nests none; the fixed-n interval's name carries no *emphasis* marks into the HTML."""
    _grade(store, project_id)
    data, _ = _report(store, project_id)
    line = estimate_line(data)
    depth = deepest = 0
    for char in line:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    assert deepest == 1 and "*" not in re.sub(r"<[^>]+>", "", report_html(data).split("<pre")[0])


def test_a_stop_at_a_look_is_named_once_in_the_estimates_sentence(store, project_id):
    """It said "interval at the stop (look 2 of 2) [...] (look 2 of 2, a repeated confidence interval ...)"."""
    store.update_settings(project_id, {"target_half_width": 0.2})  # the 40-item pool stops at a look early
    items = store.load_items(project_id)
    for position in range(40):
        submit(
            store,
            project_id,
            position,
            BINARY,
            "Correct" if items.loc[position, "label"] == 1 else "Incorrect",
            "ann",
            seconds=3.0,
        )
    data, _ = _report(store, project_id)
    assert data["activegrade_version"] not in ("", "unreleased")  # the package's (an integrator's review)
    line = estimate_line(data)
    assert data["estimate"]["stopping_interval"]["value_when"] and line.count("look 2 of 2") == 1, line
    assert "interval at the stop [" in line
    # quoted at the looks' joint level, as the Dashboard quotes it; the look's own level is in its name
    assert "95% interval at the stop [" in line and "at 95.2% at this look, 95% over the looks together)" in line
    # the recompute reads every grade of the export, which the quoted stop's estimate does not: it says so
    stop = data["stopping_rule"]["stop_at"]
    assert (
        f"from the first {stop:,} grades in the order they were given; this reads all 40" in data["recompute"]["note"]
    )


def test_export_page_offers_the_html_report_and_keeps_it_across_reruns(open_app, store, project_id):
    _grade(store, project_id)
    at = open_app("app_pages/export.py", project_id=project_id)
    keys = {b.key for b in at.get("download_button")}
    assert keys == {"dl_csv", "dl_jsonl", "dl_parquet", "dl_report_json", "dl_report_md", "dl_report_html"}
    shown = [m.value for m in at.markdown if "Recompute" in m.value]
    assert shown and "inclusion probability" in at.caption[0].value
    links = {b.key: b.proto.url for b in at.get("download_button")}
    at.run()
    assert [m.value for m in at.markdown if "Recompute" in m.value] == shown
    assert {b.key: b.proto.url for b in at.get("download_button")} == links  # same bytes, same link
    submit(store, project_id, 32, BINARY, "Correct", "ann")
    at.run()
    changed = {b.key: b.proto.url for b in at.get("download_button")}
    assert all(changed[key] != links[key] for key in links)  # new content, new link


def test_the_reports_script_prints_the_reports_estimate(store, project_id, tmp_path, monkeypatch, capsys):
    _grade(store, project_id)
    data, table = _report(store, project_id)
    (tmp_path / "grades.csv").write_bytes(grades_csv(table))
    monkeypatch.chdir(tmp_path)
    exec(data["recompute"]["script"], {})
    mu, variance, se = (float(v) for v in capsys.readouterr().out.split())
    assert np.isclose(mu, data["estimate"]["value"]) and np.isclose(variance, data["recompute"]["variance"])
    assert np.isclose(se, data["estimate"]["se"])


def test_the_grades_export_reproduces_the_estimate_after_a_review(store, project_id, tmp_path, monkeypatch, capsys):
    """A reviewer's final grade enters the estimate, so the export carries it: without it the report's own
    script printed 0.624 for an estimate of 0.584 (evaluation lead's review)."""
    from core.exports.project_export import ProjectFiles
    from core.services import auth, review

    _grade(store, project_id)  # items 0-7 graded by ann and bob, disagreeing on half
    for position in (0, 2, 5):
        assert review.settle(store, auth.OPERATOR, project_id, position, "Correct").status == "reviewed"
    files = ProjectFiles.of(store, store.project(project_id))
    data = files.require_report()
    table = files.table
    settled = table[table["position"].isin([0, 2, 5])]
    assert settled["reviewed"].all() and (settled["final_grade"] == 1.0).all()
    assert not table.loc[~table["position"].isin([0, 2, 5]), "reviewed"].any()
    (tmp_path / "grades.csv").write_bytes(grades_csv(table))
    monkeypatch.chdir(tmp_path)
    exec(data["recompute"]["script"], {})
    mu, variance, _ = (float(v) for v in capsys.readouterr().out.split())
    assert np.isclose(mu, data["estimate"]["value"]) and np.isclose(variance, data["recompute"]["variance"])
    unreviewed = table.groupby("position")["grade"].mean()
    assert not np.isclose(unreviewed.mean(), table.groupby("position")["final_grade"].first().mean())


def test_the_report_reads_the_stopping_rules_interval_first_and_names_what_its_recipe_recomputes(store, project_id):
    """With anytime stopping the report's interval is the one valid whenever grading stops (the dashboard's),
    the fixed-n one after it; with the difference estimator the recipe says it recomputes the stratified
    estimate; unknown values read "–", never "None", and working time is a duration."""
    _grade(store, project_id)
    items = store.load_items(project_id)
    design = design_from_items(items, stratify_by=None)
    graded = store.graded_positions(project_id)
    result = current_estimate(design, graded, "difference")
    data = report(store.project(project_id), design, result, {"pool": ("p.jsonl", b"x")}, store.grades(project_id))
    e, anytime = data["estimate"], data["estimate"]["anytime"]
    line = estimate_line(data)
    assert f"valid whenever you stop [{anytime['ci_low']:.4f}, {anytime['ci_high']:.4f}]" in line
    assert line.index("valid whenever") < line.index("fixed-n interval [") and "30 graded items of 40" in line
    assert anytime["ci_high"] - anytime["ci_low"] > e["ci_high"] - e["ci_low"]  # the anytime interval is wider
    text = report_markdown(data)
    assert "the difference estimator" in data["method"] and "Result (stratified): mu = " in text
    assert "adjusts the stratified estimate" in text and "None" not in text
    assert "| working time |" in text.replace("| grader | grades | working time", "| working time |")


def _strings(value: object) -> list[str]:
    """Every string inside a report's JSON data."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_every_report_formats_prose_names_methods_and_docs_not_modules(store, project_id):
    """JSON, Markdown (the Export page's preview) and HTML: words for people, a docs page where one explains
    more, never a code module ("core.stats.confseq"); only the recompute script is code, and stays so. With the
    difference estimator, review, a validated estimate and a broken audit chain, every optional sentence shows."""
    _grade(store, project_id)
    items = store.load_items(project_id)
    design = design_from_items(items, stratify_by=None)
    result = current_estimate(design, store.graded_positions(project_id), "difference")
    validated = Validated(0.7, 0.05, 0.6, 0.8, 0.01, 12, 0.95)
    data = report(
        store.project(project_id),
        design,
        result,
        {"pool": ("p.jsonl", b"x")},
        store.grades(project_id),
        reviewed={0: 1.0},
        validated=validated,
        chain=ChainCheck(broken_at=3),
    )
    script = data["recompute"]["script"]
    markdown = report_markdown(data)
    html = report_html(data)
    assert script in markdown and html.count("<pre>") == 2
    prose = {
        "json": " ".join(s for s in _strings(data) if s != script),
        "md": markdown.replace(script, ""),
        "html": html.replace(html[html.rindex("<pre>") : html.rindex("</pre>")], ""),
    }
    for fmt, text in prose.items():
        assert re.search(r"\bcore\.\w", text) is None, (fmt, re.findall(r".{40}core\.[\w.]+", text))
        assert "confidence sequence (docs/method.md" in text and "docs/review.md" in text and "Sarndal" in text, fmt
    assert all("hash chain is broken at event 3" in prose[fmt] for fmt in ("md", "html"))


def test_the_html_reports_chart_has_ticks(store, project_id):
    _grade(store, project_id)
    page = report_html(_report(store, project_id)[0])
    assert page.count('class="tick x"') >= 3 and ">grades</text>" in page and ">mean grade</text>" in page
    # the y axis's tick labels ("0.25", right-aligned, about 7 px a character at 11 px) clear its title, which is
    # turned on its side (about 12 px across, centred on its x)
    label_end = float(re.search(r'<text x="([\d.]+)"[^>]*text-anchor="end">0\.25<', page).group(1))
    title_x = float(re.search(r'<text x="([\d.]+)"[^>]*rotate\(-90[^>]*>mean grade<', page).group(1))
    assert label_end - 4 * 7 > title_x + 6


def test_the_graders_table_rounds_pace_for_people(store, project_id):
    """Grades per hour whole, median seconds to a tenth, in the Markdown and HTML tables (not '354.051')."""
    _grade(store, project_id)
    data, _ = _report(store, project_id)
    rows = grader_rows(data["graders"]["by_grader"])  # the pace depends on when the grades were stored
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", pace) for pace in rows["grades per hour"])
    assert rows["median seconds"].tolist() == ["3.0", "4.0"]
    pace = rows["grades per hour"].iloc[0]
    assert f"| ann | 30 | < 1 min | {pace} | 3.0 |" in shown(
        report_markdown(data)
    ) and f"<td>{pace}</td>" in report_html(data)


def test_the_report_says_whether_the_audit_trails_hash_chain_holds(store, project_id):
    """The report (JSON, Markdown, HTML) checks the sealed audit trail: intact, then broken at the event changed
    afterwards; the rest of the report, and its bytes on a rerun, stay the same."""
    _grade(store, project_id)
    for seed in range(3):
        accounts.record_event(store, "ann", "settings_changed", project_id=project_id, detail={"seed": seed})
    assert audit_chain.seal(store, datetime.now(UTC) + timedelta(hours=1)) >= 3
    project, design = store.project(project_id), design_from_items(store.load_items(project_id), stratify_by=None)
    intact = report_data(store, project, design)
    assert intact["audit_chain"] == {"intact": True, "first_broken_event": None}
    assert report_bytes(intact, "json") == report_bytes(report_data(store, project, design), "json")
    for text in (report_markdown(intact), report_html(intact)):
        assert "Audit trail" in text and "hash chain holds" in text and "broken" not in text
    with store.session() as s, s.begin():
        first = s.scalars(select(AuditEvent.id).order_by(AuditEvent.id)).first()
        s.execute(update(AuditEvent).where(AuditEvent.id == first).values(actor="mallory"))
    broken = report_data(store, project, design)
    assert broken["audit_chain"] == {"intact": False, "first_broken_event": first}
    for text in (report_markdown(broken), report_html(broken)):
        assert f"hash chain is broken at event {first}" in text and "hash chain holds" not in text
    assert {k: v for k, v in broken.items() if k != "audit_chain"} == {
        k: v for k, v in intact.items() if k != "audit_chain"
    }


def test_a_skip_before_every_stratum_has_a_grade_reads_in_every_report_format(store, project_id):
    submit(store, project_id, 0, BINARY, "Correct", "ann", seconds=3.0)  # one stratum graded: no estimate yet
    store.add_skip(project_id, 35, "ann")
    data, _ = _report(store, project_id)
    assert data["skips"]["skipped"] == 1 and data["skips"]["estimate_if_all_skipped_were_0"] is None
    words = "1 item skipped and not graded. Their worst-case range is known once every stratum has a grade."
    assert words in report_markdown(data) and words in report_html(data)
    submit(store, project_id, 35, BINARY, "Incorrect", "bob", seconds=3.0)  # graded since, by another grader
    data, _ = _report(store, project_id)
    assert data["skips"]["skipped"] == 0 and data["skips"]["ever_skipped"] == 1
    words = "1 item skipped and graded since; none stays skipped."  # not "No item was skipped" (manager's review)
    assert words in report_markdown(data) and words in report_html(data)


def test_the_settings_table_leaves_out_the_scale_a_rubric_project_does_not_use():
    one_question = ProjectSettings().to_dict()
    rubric = ProjectSettings.from_dict({**one_question, "criteria": [{"name": "correct", "scale": {"kind": "likert"}}]})
    assert "scale" in settings_table(one_question, 7)["setting"].tolist()
    names = settings_table(rubric.to_dict(), 7)["setting"].tolist()
    assert "scale" not in names and "criteria" in names
    assert rubric.to_dict()["scale"]  # the report's JSON keeps every setting


def test_the_settings_table_says_how_many_strata_the_design_used_where_it_is_not_the_number_asked():
    settings = ProjectSettings().to_dict()
    value = settings_table(settings, 7, strata_used=3).set_index("setting").loc["n_strata", "value"]
    assert value.startswith(f"{settings['n_strata']} asked, 3 used") and "min_stratum_size" in value
    same = settings_table(settings, 7, strata_used=settings["n_strata"]).set_index("setting").loc["n_strata", "value"]
    assert same == str(settings["n_strata"])
    assert settings["planned_budget"] is None  # left to the forecast: said in words, not "null"
    assert settings_table(settings, 7).set_index("setting").loc["planned_budget", "value"] == "not set"
