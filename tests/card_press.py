"""Pressing the grading card in Streamlit's AppTest, which cannot run the card's JavaScript: the
trigger the browser would send (ui/grading_card.js) is added to the widget states of one run."""

from __future__ import annotations

import json
from itertools import count

from streamlit.components.v2.bidi_component.main import _make_trigger_id

_seq = count(1)


def _card_element(at):
    return next((e for e in at.get("bidi_component") if e.proto.component_name == "activegrade_grading_card"), None)


def card_data(at) -> dict | None:
    """The payload the grading card was sent on the last run (None when the card is not on the page)."""
    element = _card_element(at)
    return None if element is None else json.loads(element.proto.json)


def shown(at) -> dict:
    return card_data(at)["card"]


def press(at, action: str, *, card: dict | None = None, label: str | None = None, shown_ms: int = 5000, **extra):
    """Run the app as the browser does after a press on ``card`` (default: the card on screen); the
    server's answer (None when the page no longer shows the card)."""
    card = shown(at) if card is None else card
    base = _card_element(at).proto.id
    payload = {
        "seq": next(_seq),
        "action": action,
        "label": label,
        "token": card["token"],
        "position": card["position"],
        "item_id": card["item_id"],
        "shown_ms": shown_ms,
        "comment": "",
        **extra,
    }
    tree = at._tree
    plain = tree.get_widget_states

    def with_press():
        states = plain()
        state = states.widgets.add()
        state.id = _make_trigger_id(base, "events")
        state.json_trigger_value = json.dumps([{"event": "action", "value": payload}])
        return states

    tree.get_widget_states = with_press
    at.run()
    assert not at.exception, at.exception
    data = card_data(at)
    return None if data is None else data["ack"]
