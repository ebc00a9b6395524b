"""core.services.navigation: which project a page opens, and opening one counting as its last use."""

from __future__ import annotations

import pytest

from core.services import auth, navigation
from core.store import Store


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'navigation.db'}")


def projects(store: Store, count: int) -> list[int]:
    return [store.create_project(f"P{k}", {"seed": 1}, {"pool": ("pool.jsonl", b"{}\n")}) for k in range(count)]


def test_the_last_project_opened_is_the_default(store):
    ids = projects(store, 3)
    vic = auth.User(name="vic", role=auth.VIEWER, id=7)
    assert navigation.default_project(store, vic, ids) is None  # nothing used yet: she chooses
    assert navigation.default_project(store, vic, ids[:1]) == ids[0]  # her only one
    navigation.opened(store, vic, ids[1])
    assert navigation.default_project(store, vic, ids) == ids[1]
    assert navigation.default_project(store, auth.User(name="root", role=auth.ADMIN, id=8), ids) is None


def test_open_demo_visitors_share_the_last_project_opened(store):
    ids = projects(store, 2)
    navigation.opened(store, auth.demo_user("ann"), ids[1])
    assert navigation.default_project(store, auth.demo_user(""), ids) == ids[1]  # a new tab: no name typed yet


def test_an_address_asks_for_a_project_the_user_may_open_or_is_refused(store):
    ids = projects(store, 2)
    gina = auth.User(name="gina", role=auth.GRADER, id=9)
    assert navigation.open_project(store, gina, str(ids[1]), ids[1:]) == navigation.Opening(ids[1])
    assert navigation.open_project(store, gina, str(ids[0]), ids[1:]) == navigation.Opening(ids[1], refused=str(ids[0]))
    assert navigation.open_project(store, gina, "abc", ids[1:]) == navigation.Opening(ids[1], refused="abc")
    assert navigation.open_project(store, gina, None, []) == navigation.Opening(None, unassigned=True)
    root = auth.User(name="root", role=auth.ADMIN, id=1)
    assert navigation.open_project(store, root, None, []) == navigation.Opening(None)  # she creates one
