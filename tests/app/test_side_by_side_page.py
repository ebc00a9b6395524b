"""The Grade page of a comparison graded side by side (AppTest): 50 cards graded, each side's grade stored on
the target whose response was on that side, the order recorded, the models' names never on the page."""

from __future__ import annotations

from pathlib import Path

from core.inputs.markup import one_line_plain
from core.inputs.targets import response_column
from core.services.project import create_project, start_preparation
from core.services.side_by_side import order_of
from tests.markdown_text import shown
from tests.test_compare import long_pool, write_jsonl
from ui.comparison_panel import CENSUS

GRADE = "app_pages/grade.py"
MODELS = ("zeta-secret-model", "omega-hidden-model")


def _page_text(at) -> str:
    parts = [e.proto.body for e in at.get("html")] + [m.value for m in at.markdown] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts)


def test_fifty_cards_are_stored_side_by_side_on_the_right_targets(open_app, store, tmp_path):
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(60, models=MODELS)))
    pid = create_project(store, "C", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    settings = store.project(pid).settings
    items = store.load_items(pid).set_index("id")
    at = open_app(GRADE, project_id=pid)
    expected = {}
    for n in range(50):
        text = _page_text(at)
        assert not any(model in text for model in MODELS)
        item_id = next(m.value for m in at.markdown if m.value.startswith("**Item**")).removeprefix("**Item** ")
        position = int(items.index.get_loc(item_id))
        order = order_of(settings, position)
        shown = [e.proto.body for e in at.get("html") if 'class="sbs-response"' in e.proto.body]
        assert [f'data-side="{side}"' in body for side, body in enumerate(shown)] == [True, True]
        for side, target in enumerate(order):  # what is on side j is target order[j]'s response
            assert str(items.at[item_id, response_column(target)]) in shown[side]
        labels = ["Correct", "Incorrect"] if n % 2 else ["Incorrect", "Correct"]
        at.radio[0].set_value(labels[0])
        at.radio[1].set_value(labels[1])
        at.button[0].click().run()
        assert not at.exception, at.exception
        expected |= {(position, target): (side, labels[side]) for side, target in enumerate(order)}
    grades = store.target_grades(pid)
    assert len(grades) == 100 and grades.groupby("position").size().eq(2).all()
    stored = {(int(g.position), g.target): (int(g.side), g.label) for g in grades.itertuples()}
    assert stored == expected
    assert store.grades(pid)["grader"].eq("ann").all()

    board = open_app("app_pages/dashboard.py", project_id=pid)
    assert not board.exception, board.exception
    said = " ".join(m.value for m in board.markdown)
    assert one_line_plain("omega-hidden-model - zeta-secret-model: ") in said  # the names as written, escaped
    pair = board.dataframe[1].value.iloc[0]
    assert pair["wins"] + pair["ties"] + pair["losses"] == 50
    graders = board.dataframe[2].value  # the graders' pace, a grade being one response graded
    assert graders[["grader", "grades"]].values.tolist() == [["ann", 100]]

    shown = open_app("app_pages/presenter.py", project_id=pid)  # the screen for a demo: each model's own score
    assert not shown.exception, shown.exception
    screen = " ".join(str(e.proto.body) for e in shown.get("html"))
    assert all(f"{model}: " in screen for model in MODELS) and "50 of 60 items" not in screen
    assert "of 60 items graded for every model" in screen and "forecast stop" not in screen  # no one mixed score


def _item_shown(at) -> str:
    return shown(next(m.value for m in at.markdown if m.value.startswith("**Item**")).removeprefix("**Item** "))


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_back_opens_an_earlier_card_with_its_grades_to_change(open_app, store, tmp_path):
    """A grader who misjudged a card two cards ago goes Back to it, sees the grades given, changes one, and returns
    to the queue's card; the change lands on that item's targets, every other grade as it was."""
    rows = [{**row, "id": f"item-{row['id']}"} for row in long_pool(20, models=MODELS)]  # an id with punctuation
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", rows))
    pid = create_project(store, "C", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    at = open_app(GRADE, project_id=pid)
    assert not any(b.label == "Back to an earlier card" for b in at.button)  # nothing graded yet
    cards = []
    for _ in range(2):
        cards.append(_item_shown(at))
        at.radio[0].set_value("Correct")
        at.radio[1].set_value("Incorrect")
        at.button[0].click().run()
        said = f"saved: Correct, Incorrect, item {cards[-1]}"
        assert shown(at.success[0].value) == said  # beside the next card: named
        # and read out as written: the screen readers' status heard "item arithmetic\\-14" (an accessibility review)
        assert any(f'data-said="{said}.' in h.proto.body for h in at.get("html"))
    queued = _item_shown(at)
    _button(at, "Back to an earlier card").click().run()
    assert _item_shown(at) == cards[1] and [r.value for r in at.radio] == ["Correct", "Incorrect"]
    assert "Skip this item" not in [b.label for b in at.button]  # an earlier card is changed, not skipped
    _button(at, "Back to an earlier card").click().run()
    assert _item_shown(at) == cards[0]
    at.radio[1].set_value("Correct")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert _item_shown(at) == queued  # the change submitted, the queue's card again
    items = store.load_items(pid)
    labels = store.target_grades(pid).assign(item=lambda g: items["id"].iloc[g["position"]].to_numpy())
    by_item = labels.groupby("item")["label"].apply(sorted).to_dict()
    assert by_item == {cards[0]: ["Correct", "Correct"], cards[1]: ["Correct", "Incorrect"]}
    assert len(store.grades(pid)) == 4  # the change replaced the card's grades, it added none
    _button(at, "Back to an earlier card").click().run()
    _button(at, "Return to the queue").click().run()
    assert _item_shown(at) == queued
    _button(at, "Undo my last card or skip").click().run()  # the change taken back: the grades it replaced stand
    assert "the grade you gave before stands" in " ".join(s.value for s in at.success)
    labels = store.target_grades(pid).assign(item=lambda g: items["id"].iloc[g["position"]].to_numpy())
    assert sorted(labels.loc[labels["item"] == cards[0], "label"]) == ["Correct", "Incorrect"]
    assert _item_shown(at) == queued and len(store.grades(pid)) == 4


def test_the_projects_page_accepts_a_pool_of_several_models_and_says_how_many(open_app, store, tmp_path, monkeypatch):
    from tests.app.test_projects_page import _fill_new_project

    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(20, models=MODELS)))
    at = open_app()
    _fill_new_project(at, "Compare", ("pool.jsonl", pool.read_bytes()), None)
    at.run()  # the form reads the upload: a comparison is asked no target, regime or expected score, nor a rubric
    asked = {w.key for w in [*at.number_input, *at.checkbox, *at.radio, *at.selectbox, *at.text_input]}
    assert not asked & {"new_target", "new_regime", "new_expected", "new_rubric"}, asked
    assert any("A comparison of 2 models, graded side by side" in c.value for c in at.caption)
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    project = store.project_by_name("Compare")
    assert project.settings.targets == sorted(MODELS)
    assert any("A comparison of 2 models" in i.value for i in at.info)


def test_a_comparisons_settings_offer_only_what_it_reads(open_app, store, tmp_path):
    """Its Grading settings offered a stopping target, a rule, an expected grade and an n0 from a forecast it does
    not make, and its report listed them: changed, they changed nothing (a manager's review)."""
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(20, models=MODELS)))
    pid = create_project(store, "C", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    at = open_app(project_id=pid)
    labels = [w.label for w in [*at.number_input, *at.radio] if not str(w.key).startswith("new_")]  # not New project
    assert "Planned number of items (n0)" in labels and not any(label.startswith("Stop when") for label in labels)
    assert not any(label.startswith("Mean grade you expect") for label in labels)
    assert next(w for w in at.number_input if w.label.startswith("Planned")).value == store.project(pid).settings.n0(20)
    next(b for b in at.button if b.label == "Save settings").click().run()  # saved untouched: nothing refused
    assert not at.error and store.project(pid).settings.planned_budget is None
    assert not {"target_half_width", "regime", "expected_score"} & set(store.project(pid).settings.shared_dict())


def test_three_responses_with_the_reference_and_the_refusal_beside_the_button(open_app, store, tmp_path):
    """The card shows the reference answer as the one-response card does (show_reference), names the grades its
    button submits, and says why a card was not saved below that button (evaluation lead's review: "Submit both
    grades" under three responses, no reference, the refusal at the top of the page, off the screen)."""
    models = ("m-one", "m-two", "m-three")
    rows = [{**row, "reference": f"worked answer to {row['prompt']}"} for row in long_pool(20, models=models)]
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", rows))
    pid = create_project(store, "C3", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    at = open_app(GRADE, project_id=pid)
    assert [e.label for e in at.expander] == ["Reference answer"]
    assert at.button[0].label == "Submit the 3 grades"
    at.radio[0].set_value("Correct")
    at.button[0].click().run()
    assert [shown(e.value) for e in at.error] == ["Not saved: give every response a grade"]
    assert not store.target_grades(pid).shape[0]
    at.text_area[0].input("response 2 cites no source")
    at.button[1].click().run()  # Flag for review: the note goes with it, the card stays
    from core.store import reviews

    flags = reviews.flags(store, pid)
    assert flags[["grader", "note"]].values.tolist() == [["ann", "response 2 cites no source"]]
    assert "flagged for review" in at.success[0].value
    for radio in at.radio:
        radio.set_value("Correct")
    at.text_area[0].input("all three fine")
    at.button[0].click().run()
    grades = store.target_grades(pid)
    assert len(grades) == 3 and (grades["comment"] == "all three fine").all()
    setup = open_app("app_pages/projects.py", project_id=pid)  # no forecast of one score mixing the models
    assert any("A comparison of 3 models" in i.value for i in setup.info)
    assert not any("grade about" in m.value for m in setup.markdown)
    sim = open_app("app_pages/simulate.py", project_id=pid)
    assert not sim.exception and any("a comparison has no forecast of one score" in c.value for c in sim.caption)


def test_the_models_names_are_shown_as_written_never_as_markdown(open_app, store, tmp_path):
    """A security review named the models ``![t](http://.../tracker.png)`` and ``B [phish](https://...)``: the
    Projects page's comparison line loaded the image and linked the page for every viewer, graders included."""
    models = ("![t](http://127.0.0.1:1/tracker.png)", "B [phish](https://evil.example/login)")
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(20, models=models)))
    pid = create_project(store, "Hostile names", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    at = open_app("app_pages/projects.py", project_id=pid)
    line = next(i.value for i in at.info if "A comparison of 2 models" in i.value)
    assert "![t](" not in line and "[phish](" not in line  # escaped: the text as written, no image, no link
    assert r"\!\[t\]\(http" in line


def test_a_comparison_graded_through_says_why_its_intervals_are_points(open_app, store, tmp_path):
    pool = Path(write_jsonl(tmp_path / "pool.jsonl", long_pool(8, models=MODELS)))
    pid = create_project(store, "C", ("pool.jsonl", pool.read_bytes()), start=False)
    start_preparation(store, pid, wait=True)
    at = open_app(GRADE, project_id=pid)
    for n in range(8):
        at.radio[0].set_value("Correct")
        at.radio[1].set_value("Incorrect" if n % 3 else "Correct")
        at.button[0].click().run()
    board = open_app("app_pages/dashboard.py", project_id=pid)
    models = board.dataframe[0].value
    assert (models["low"] == models["high"]).all()  # the whole pool graded: no sampling error
    assert any(c.value == CENSUS for c in board.caption)
