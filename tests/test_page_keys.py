"""ui/page_keys.py: both cards read one list of the page's own keyed elements (the side-by-side card's lacked
menus, sliders and dialogs, so its keys acted while a grader moved a slider)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ui.page_keys import OWN_KEYS, PLACEHOLDER, with_own_keys

UI = Path(__file__).resolve().parent.parent / "ui"


@pytest.mark.parametrize("script", ["grading_card.js", "side_by_side_keys.js"])
def test_each_cards_script_is_given_the_one_list(script):
    text = with_own_keys((UI / script).read_text(encoding="utf-8"))
    assert json.dumps(OWN_KEYS) in text and PLACEHOLDER not in text
    assert '[role="slider"]' in OWN_KEYS and '[role="dialog"]' in OWN_KEYS


def test_a_script_without_the_placeholder_is_refused():
    with pytest.raises(ValueError, match=PLACEHOLDER):
        with_own_keys("const CONTROLS = 'a[href]';")
