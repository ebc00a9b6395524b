"""core.services.team and core.services.project_actions: the rules of accounts, membership and project actions,
each with its audit event, the same for the Team page and ``python -m core users``."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.services import account_writes, audit, auth, project_actions, team
from core.services.outcome import Refused
from core.store import Store, accounts

PASSWORD = "correct horse battery"


@pytest.fixture
def store(tmp_path):
    return Store.open(f"sqlite:///{tmp_path / 't.db'}")


@pytest.fixture
def root(store):
    return account_writes.create_account(store, "root", auth.ADMIN, password=PASSWORD)


def _actions(store) -> list[tuple[str, str]]:
    return [tuple(row) for row in audit.trail(store)[["actor", "action"]].values.tolist()]


def test_creating_and_changing_an_account_is_audited(store, root):
    assert team.create_account(store, root, "Bob", auth.GRADER, password=PASSWORD).status == "created"
    team.change_account(store, root, "bob", role=auth.VIEWER, password="another long password")
    bob = accounts.user_by_name(store, "bob")
    assert bob.role == auth.VIEWER and auth.sign_in(store, "bob", "another long password") is not None
    trail = audit.trail(store)
    changed = trail[trail["action"] == audit.ACCOUNT_CHANGED]["detail"].tolist()
    assert changed == [{"name": "bob", "role": auth.VIEWER, "active": True, "password_changed": True}]
    assert (root.name, audit.ACCOUNT_CREATED) in _actions(store)


def test_an_admin_cannot_demote_or_disable_themselves(store, root):
    account_writes.create_account(store, "second", auth.ADMIN, password=PASSWORD)
    with pytest.raises(Refused, match="your own account"):
        team.change_account(store, root, "root", role=auth.GRADER)
    with pytest.raises(Refused, match="your own account"):
        team.change_account(store, root, "root", active=False)
    assert accounts.user_by_name(store, "root").role == auth.ADMIN
    team.change_account(store, root, "second", active=False)  # another admin may be disabled
    assert not accounts.user_by_name(store, "second").active


def test_the_last_active_admin_is_kept(store, root):
    with pytest.raises(Refused, match="last active admin"):
        team.change_account(store, auth.OPERATOR, "root", role=auth.VIEWER)  # the command line too
    with pytest.raises(Refused, match="last active admin"):
        team.change_account(store, auth.OPERATOR, "root", active=False)
    team.create_account(store, auth.OPERATOR, "other", auth.ADMIN, password=PASSWORD)
    team.change_account(store, auth.OPERATOR, "root", role=auth.VIEWER)  # now there is another one
    assert accounts.user_by_name(store, "root").role == auth.VIEWER
    assert ("cli", audit.ACCOUNT_CHANGED) in _actions(store)


def test_only_someone_who_manages_users_may(store, root):
    grader = team.create_account(store, root, "gus", auth.GRADER, password=PASSWORD)
    assert grader.status == "created"
    gus = auth.sign_in(store, "gus", PASSWORD)
    with pytest.raises(Refused, match="may not manage accounts, roles and assignments"):
        team.create_account(store, gus, "eve", auth.ADMIN, password=PASSWORD)
    with pytest.raises(Refused, match="signed out"):
        team.unlock(store, None, "gus")
    demo_cli = auth.demo_user("cli")  # the open demo's anonymous admin, whatever name it types, is not the operator
    with pytest.raises(Refused):
        team.create_account(store, demo_cli, "eve", auth.ADMIN, password=PASSWORD)
    team.change_account(store, root, "root", password="a new long password")  # a password change ends sessions
    with pytest.raises(Refused):  # root as signed in before is still allowed: the account is active and admin
        team.change_account(store, auth.User("ghost", auth.ADMIN, id=999), "gus", role=auth.VIEWER)
    assert accounts.user_by_name(store, "eve") is None


def test_membership_changes_are_audited_and_admins_are_never_assigned(store, root):
    pid = store.create_project("P", {}, {"pool": ("pool.jsonl", b"{}\n")})
    for name in ("ann", "bob"):
        team.create_account(store, root, name, auth.GRADER, password=PASSWORD)
    assert team.assignable(store) == ["ann", "bob"]
    team.set_members(store, root, pid, ["ann", "bob"])
    assert {u.name for u in accounts.members(store, pid)} == {"ann", "bob"}
    assert team.assign(store, root, pid, "ann").status == "unchanged"
    team.set_members(store, root, pid, ["bob"])
    assert [u.name for u in accounts.members(store, pid)] == ["bob"]
    trail = audit.trail(store, pid)
    assert trail["action"].tolist() == [audit.MEMBER_ADDED, audit.MEMBER_ADDED, audit.MEMBER_REMOVED]
    assert trail["detail"].tolist() == [{"name": "ann"}, {"name": "bob"}, {"name": "ann"}]
    with pytest.raises(Refused, match="admin"):
        team.assign(store, root, pid, "root")
    with pytest.raises(InputError, match="no account named"):
        team.assign(store, root, pid, "nobody")


def test_unlock_is_audited(store, root):
    team.create_account(store, root, "ann", auth.GRADER, password=PASSWORD)
    for _ in range(auth.ACCOUNT_FREE_FAILURES + 1):
        accounts.add_failure(store, "ann", auth.ACCOUNT)
    with pytest.raises(auth.SignInThrottled):
        auth.sign_in(store, "ann", PASSWORD)
    assert team.unlock(store, root, "ann").message == "ann may sign in again"
    assert auth.sign_in(store, "ann", PASSWORD) is not None
    assert (root.name, audit.ACCOUNT_UNLOCKED) in _actions(store)


def test_admins_list_the_throttled_accounts_until_unlocked(store, root):
    team.create_account(store, root, "ann", auth.GRADER, password=PASSWORD)
    team.create_account(store, root, "gus", auth.GRADER, password=PASSWORD)
    for _ in range(auth.FREE_FAILURES - 1):
        assert auth.sign_in(store, "ann", "wrong password", address="203.0.113.5") is None
    assert team.throttled(store, root) == []  # the free failures hold nothing back
    assert auth.sign_in(store, "ann", "wrong password", address="203.0.113.5") is None
    [held] = team.throttled(store, root)
    assert (held.name, held.address, held.failures) == ("ann", "203.0.113.5", auth.FREE_FAILURES)
    assert held.since < held.until <= held.since + auth.MAX_BACK_OFF
    with pytest.raises(auth.SignInThrottled):  # the list names what sign_in itself enforces
        auth.sign_in(store, "ann", PASSWORD, address="203.0.113.5")
    with pytest.raises(Refused, match="may not manage accounts, roles and assignments"):
        team.throttled(store, auth.sign_in(store, "gus", PASSWORD))
    with pytest.raises(Refused, match="signed out"):
        team.throttled(store, None)
    team.unlock(store, root, "ann")
    assert team.throttled(store, root) == []


def test_settings_changes_record_only_what_changed(store, root):
    pid = store.create_project("P", {}, {"pool": ("pool.jsonl", b"{}\n")})
    assert project_actions.change_settings(store, root, pid, {"overlap": 0.0}).status == "unchanged"
    outcome = project_actions.change_settings(store, root, pid, {"overlap": 0.2, "guidelines": "Be fair."})
    assert outcome.status == "changed" and store.project(pid).settings.overlap == 0.2
    trail = audit.trail(store, pid)
    assert trail["action"].tolist() == [audit.SETTINGS_CHANGED]
    assert trail["detail"].tolist() == [{"overlap": 0.2, "guidelines": "Be fair."}]
    with pytest.raises(InputError, match="markdown image"):
        project_actions.change_settings(store, root, pid, {"guidelines": "![x](http://evil/x.png)"})
    with pytest.raises(InputError, match="overlap"):
        project_actions.change_settings(store, root, pid, {"overlap": 2.0})
    viewer = team.create_account(store, root, "vic", auth.VIEWER, password=PASSWORD)
    assert viewer.status == "created"
    with pytest.raises(Refused, match="may not change a project.s settings"):
        project_actions.change_settings(store, auth.sign_in(store, "vic", PASSWORD), pid, {"overlap": 0.1})


def test_a_fixed_budget_below_the_design_s_first_grades_is_refused_and_the_budget_is_chosen_before_grading(store, root):
    import pandas as pd

    from core.scales import BINARY
    from core.services import reservations

    pid = store.create_project("P", {}, {"pool": ("pool.jsonl", b"{}\n")})
    strata = [0] * 5 + [1] * 5 + [2]  # three strata, the last of one item: 2 + 2 + 1 first grades
    store.save_items(pid, pd.DataFrame({"id": [f"i{k}" for k in range(11)], "stratum": strata}))
    assert store.stratum_sizes(pid) == [5, 5, 1]
    with pytest.raises(InputError, match=r"n0 = 4 grades is below the 5 the design gives its 3 strata"):
        project_actions.change_settings(store, root, pid, {"budget_fixed": True, "planned_budget": 4})
    assert project_actions.change_settings(store, root, pid, {"budget_fixed": True, "planned_budget": 5}).status
    assert project_actions.change_settings(store, root, pid, {"budget_fixed": False}).status == "changed"
    reservations.record_grade(store, pid, 0, BINARY, "Correct", "ann")
    # fixing the budget after a grade would change the stopping regime (looks -> fixed) past its freeze
    for change, name in [({"budget_fixed": True}, "budget_fixed"), ({"planned_budget": 8}, "planned_budget")]:
        with pytest.raises(InputError, match="has 1 grade, so") as refused:
            project_actions.change_settings(store, root, pid, change)
        assert refused.value.field == f"settings.{name}"
    settings = store.project(pid).settings
    assert (settings.budget_fixed, settings.planned_budget, settings.stopping) == (False, 5, "looks")
    assert project_actions.change_settings(store, root, pid, {"guidelines": "Be fair."}).status == "changed"


def test_deleting_a_project_is_audited_with_its_name(store, root):
    pid = store.create_project("Gone", {}, {"pool": ("pool.jsonl", b"{}\n")})
    assert project_actions.delete(store, root, pid).status == "deleted"
    assert not store.has_project(pid)
    assert audit.trail(store, pid)["detail"].tolist() == [{"name": "Gone"}]
    with pytest.raises(Refused, match="deleted"):
        project_actions.delete(store, root, pid)


def test_a_download_is_audited_only_for_someone_who_may_export(store, root):
    audit.exported(store, root, "grades (CSV)", None, auth.EXPORT)
    assert audit.trail(store)["detail"].tolist()[-1] == {"what": "grades (CSV)"}
    grader = team.create_account(store, root, "gil", auth.GRADER, password=PASSWORD)
    assert grader.status == "created"
    with pytest.raises(Refused, match="may not export"):
        audit.exported(store, auth.sign_in(store, "gil", PASSWORD), "grades (CSV)", None, auth.EXPORT)


def test_the_stopping_regime_is_chosen_before_grading(store, root):
    """A regime picked after seeing the grades (the one that says done soonest) would not hold its level."""
    import pandas as pd

    from core.scales import BINARY
    from core.services import reservations

    pid = store.create_project("P", {}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, pd.DataFrame({"id": [f"i{k}" for k in range(6)], "stratum": [0] * 6}))
    assert project_actions.change_settings(store, root, pid, {"regime": "anytime"}).status == "changed"
    reservations.record_grade(store, pid, 0, BINARY, "Correct", "ann")
    with pytest.raises(InputError, match="has 1 grade, so its stopping regime cannot change"):
        project_actions.change_settings(store, root, pid, {"regime": "looks"})
    assert store.project(pid).settings.regime == "anytime"
    seed = store.project(pid).settings.seed  # nor its queue's seed: drawn again, the next items would be chosen
    with pytest.raises(InputError, match="its queue's seed cannot change") as refused:
        project_actions.change_settings(store, root, pid, {"seed": seed + 1})
    assert refused.value.field == "settings.seed" and store.project(pid).settings.seed == seed
    assert project_actions.change_settings(store, root, pid, {"regime": "anytime", "overlap": 0.1}).status == "changed"


def test_a_target_changed_after_the_first_grade_keeps_the_n0_the_anytime_interval_was_tuned_for(store, root):
    """n0 follows the target and the expected score until the first grade; re-tuned after it, the anytime interval
    moved on the same grades with every target tried (a manager's review), so a change then pins n0 where it was."""
    from pathlib import Path

    from core.scales import BINARY
    from core.services import reservations
    from core.services.project import create_project, start_preparation
    from core.stats.design import prepared_design

    data = Path(__file__).parent / "data" / "app"
    files = [(name, (data / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Tuned", *files, {"regime": "anytime", "min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    design = prepared_design(store.load_items(pid), "anytime")
    project_actions.change_settings(store, root, pid, {"target_half_width": 0.04})  # before a grade: n0 follows
    assert store.project(pid).settings.planned_budget is None
    tuned = store.project(pid).settings.anytime_n0(design)
    for position in range(6):
        reservations.record_grade(store, pid, position, BINARY, "Correct" if position % 3 else "Incorrect", "ann")
    outcome = project_actions.change_settings(store, root, pid, {"target_half_width": 0.02})
    assert f"n0 stays {tuned}" in outcome.message
    assert audit.trail(store, pid).iloc[-1]["detail"]["planned_budget"] == tuned  # the change's event says so
    project_actions.change_settings(store, root, pid, {"expected_score": 0.9})
    settings = store.project(pid).settings
    assert settings.planned_budget == tuned and settings.anytime_n0(design) == tuned


def test_under_the_looks_a_target_may_tighten_after_the_first_grade_but_not_widen(store, root):
    """A wider target re-reads the looks already passed, and one of them may then say done: sweeping the target
    after the grades picked the stop and the interval to report (a security review). Tightening goes on."""
    from pathlib import Path

    from core.scales import BINARY
    from core.services import reservations
    from core.services.project import create_project, start_preparation

    data = Path(__file__).parent / "data" / "app"
    files = [(name, (data / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Looks", *files, {"regime": "looks", "target_half_width": 0.1}, start=False)
    start_preparation(store, pid, wait=True)
    assert project_actions.change_settings(store, root, pid, {"target_half_width": 0.2}).status == "changed"
    reservations.record_grade(store, pid, 0, BINARY, "Correct", "ann")
    with pytest.raises(InputError, match="has 1 grade, so its target cannot widen") as refused:
        project_actions.change_settings(store, root, pid, {"target_half_width": 0.3})
    assert refused.value.field == "settings.target_half_width" and store.project(pid).settings.target_half_width == 0.2
    assert project_actions.change_settings(store, root, pid, {"target_half_width": 0.1}).status == "changed"
