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
