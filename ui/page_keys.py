"""The page's own keyed elements, one list for the card's keys in ui/grading_card.js and ui/side_by_side_keys.js."""

from __future__ import annotations

import json

OWN_KEYS = ", ".join(
    (
        "a[href]",
        "button",
        "input",
        "select",
        "textarea",
        "summary",
        "[contenteditable]",
        *(
            f'[role="{role}"]'
            for role in (
                "button",
                "link",
                "grid",
                "gridcell",
                "tab",
                "menuitem",
                "option",
                "combobox",
                "listbox",
                "slider",
                "dialog",
            )
        ),
    )
)
"""Elements of the page that take keys of their own: with the focus on one outside the card, a key is not the
card's (the grader typing in a comment box or moving through a table); a blank part of the page or the body
leaves it the card's. The two cards kept two lists, and the side-by-side one lacked menus, sliders and dialogs."""

PLACEHOLDER = "AG_OWN_KEYS"
"""Where a script names the list (`with_own_keys`)."""


def with_own_keys(script: str) -> str:
    """``script`` with PLACEHOLDER replaced by OWN_KEYS as a JavaScript string; ValueError where it has none."""
    if PLACEHOLDER not in script:
        raise ValueError(f"the script names no {PLACEHOLDER}")
    return script.replace(PLACEHOLDER, json.dumps(OWN_KEYS))
