"""Access at the core: every action under each role, assigned or not, and signed out.

The expected table is written here from the issue's words, independently of
core.services.auth.PERMISSIONS: admin creates projects, uploads, changes settings,
exports (and manages the team); a grader grades the projects assigned to
them (blind to the running estimate); a viewer sees dashboards and browses records; a reviewer
settles the review queue and browses records (issue 31), blind to the estimate too.
"""

from __future__ import annotations

import itertools

import pytest

from core.services import account_writes, auth
from core.store import Store, accounts

PASSWORD = "a long enough password"

# action -> (admin, grader, viewer, reviewer), for a project the grader/viewer/reviewer is assigned to
EXPECTED = {
    auth.VIEW_PROJECTS: (True, True, True, True),
    auth.CREATE_PROJECT: (True, False, False, False),
    auth.PREPARE_PROJECT: (True, False, False, False),
    auth.CHANGE_SETTINGS: (True, False, False, False),
    auth.DELETE_PROJECT: (True, False, False, False),
    auth.GRADE: (True, True, False, False),
    auth.VIEW_DASHBOARD: (True, False, True, False),  # graders grade blind to the running estimate
    auth.EXPORT: (True, False, False, False),
    auth.SIMULATE: (True, False, False, False),
    auth.MANAGE_USERS: (True, False, False, False),
    auth.VIEW_AUDIT: (True, False, False, False),
    auth.REVIEW: (True, False, False, True),
    auth.BROWSE: (True, False, True, True),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('access') / 'access.db'}")
    mine = store.create_project("mine", {}, {"pool": ("pool.jsonl", b"{}\n")})
    other = store.create_project("other", {}, {"pool": ("pool.jsonl", b"{}\n")})
    users = {role: account_writes.create_account(store, role, role, password=PASSWORD) for role in auth.ROLES}
    for role in (auth.GRADER, auth.VIEWER, auth.REVIEWER):
        accounts.assign(store, mine, users[role].id)
    signed_in = {role: auth.sign_in(store, role, PASSWORD) for role in auth.ROLES}  # as the app gets them
    assert signed_in == users
    return store, mine, other, signed_in


def test_every_action_is_in_the_expected_table():
    assert set(EXPECTED) == set(auth.ACTIONS)


@pytest.mark.parametrize(("action", "role"), list(itertools.product(auth.ACTIONS, auth.ROLES)))
def test_each_role_may_do_exactly_what_the_issue_allows(world, action, role):
    store, mine, other, users = world
    user = users[role]
    expected = EXPECTED[action][auth.ROLES.index(role)]
    assert auth.may(store, user, action) is expected
    assert auth.may(store, user, action, mine) is expected
    # a project nobody assigned them to: only admins reach it
    assert auth.may(store, user, action, other) is (expected and role == auth.ADMIN)
    if not expected:
        with pytest.raises(auth.AccessDenied, match=f"the {role} role may not"):
            auth.require(store, user, action, mine)
    elif role != auth.ADMIN:
        with pytest.raises(auth.AccessDenied, match="not assigned to project"):
            auth.require(store, user, action, other)


@pytest.mark.parametrize("action", auth.ACTIONS)
def test_signed_out_may_do_nothing(world, action):
    store, mine, _, _ = world
    assert not auth.may(store, None, action) and not auth.may(store, None, action, mine)
    with pytest.raises(auth.AccessDenied, match="sign in"):
        auth.require(store, None, action, mine)


def test_visible_projects_follow_assignment(world):
    store, mine, _, users = world
    assert auth.visible_projects(store, users[auth.ADMIN]) is None  # all
    assert auth.visible_projects(store, users[auth.GRADER]) == {mine}
    assert auth.visible_projects(store, None) == set()
    accounts.unassign(store, mine, users[auth.VIEWER].id)
    assert not auth.may(store, users[auth.VIEWER], auth.VIEW_DASHBOARD, mine)
    accounts.assign(store, mine, users[auth.VIEWER].id)


def test_a_disabled_account_cannot_sign_in(world):
    store, *_ = world
    accounts.set_active(store, auth.GRADER, False)
    try:
        assert auth.sign_in(store, auth.GRADER, PASSWORD) is None
    finally:
        accounts.set_active(store, auth.GRADER, True)
