"""Team (admins): accounts and roles, who grades the current project, double grading and agreement, the audit trail."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain
from core.services import audit, auth, project_actions, review, team
from core.services.database import ProjectInfo
from core.services.live import agreement_of
from core.services.outcome import Refused
from ui import access, api_tokens, signin, state

admin = signin.require(auth.MANAGE_USERS)
store = state.store()
st.title("Team")


def accounts_section() -> None:
    st.header("Accounts")
    everyone = team.everyone(store)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "name": u.name,
                    "e-mail": u.email or "",
                    "role": u.role,
                    "active": u.active,
                    "sign-in": ("password" if u.password_hash else "") + (" + OIDC" if u.email else ""),
                }
                for u in everyone
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    left, right = st.columns(2)
    if st.session_state.pop(ACCOUNT_MADE, False):  # cleared once made: a refused one keeps what was typed
        for key in ("new_account_name", "new_account_password", "new_account_email"):
            st.session_state.pop(key, None)
    with left, st.form("new_account"):
        st.markdown("**New account**")
        name = st.text_input("Name", key="new_account_name")
        role = st.selectbox("Role", auth.ROLES, index=1, key="new_account_role")
        password = st.text_input(
            "Password (blank: sign-in by e-mail through OIDC only)", type="password", key="new_account_password"
        )
        email = st.text_input("E-mail for OIDC sign-in (optional)", key="new_account_email")
        if st.form_submit_button("Create account"):
            try:
                outcome = team.create_account(store, admin, name, role, password=password or None, email=email or None)
            except (InputError, Refused) as exc:
                st.error(str(exc))
            else:
                st.toast(outcome.message.capitalize())
                st.session_state[ACCOUNT_MADE] = True
                st.rerun()
    with right:
        st.markdown("**Change an account**")
        # outside the form, so that choosing an account reruns and the fields below show its stored values
        # (inside it, they kept the previous account's: saving a password also saved that account's role)
        who = st.selectbox("Account", [u.name for u in everyone], key="change_account_name")
        change_account(next((u for u in everyone if u.name == who), None))
    throttled_section()


def throttled_section() -> None:
    """The sign-ins held back now after failed tries, beside the Unlock sign-in button above."""
    held = team.throttled(store, admin)
    if not held:
        st.caption("No sign-in is held back after failed tries.")
        return
    st.markdown("**Sign-ins held back** (choose the account under *Change an account* to unlock it)")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "name": t.name,
                    "from": "every address" if t.address == auth.ACCOUNT else t.address,
                    "failures": t.failures,
                    "since": t.since,
                    "until": t.until,
                }
                for t in held
            ]
        ),
        hide_index=True,
        width="stretch",
    )


def change_account(current: team.UserInfo | None) -> None:
    """The form that changes one account's role, active flag and password (fields keyed by the account)."""
    if current is None:
        return
    # keyed by the stored role and flag too: after a save the fields are new ones showing what was saved (keyed by
    # the account alone, they kept the values from before it, and a password saved next disabled the account
    # again without a word: an operator's review)
    stored = f"{current.id}_{current.role}_{int(current.active)}"
    with st.form(f"change_account_{stored}", clear_on_submit=True):
        role = st.selectbox(
            "Role", auth.ROLES, index=auth.ROLES.index(current.role), key=f"change_account_role_{stored}"
        )
        active = st.checkbox("Active (may sign in)", value=current.active, key=f"change_account_active_{stored}")
        password = st.text_input("New password (blank: keep)", type="password", key=f"change_account_password_{stored}")
        if st.form_submit_button("Save account"):
            try:
                outcome = team.change_account(
                    store, admin, current.name, role=role, active=active, password=password or None
                )
            except (InputError, Refused) as exc:
                st.error(str(exc))
                return
            st.toast(outcome.message.capitalize())
            st.rerun()
    st.button(
        "Unlock sign-in",
        key=f"unlock_{current.id}",
        on_click=unlock,
        args=(current.name,),
        help="End the wait imposed after failed sign-ins for this account, from every address.",
    )


def unlock(name: str) -> None:
    """Callback: clear the account's failed sign-ins (the service rechecks that the admin still may)."""
    try:
        st.toast(team.unlock(store, signin.user(), name).message)
    except (InputError, Refused) as exc:
        st.toast(f"Not allowed: {exc}.")


def project_section() -> None:
    project = state.current_project()
    if project is None:
        st.info("Choose a project in the sidebar to assign graders and set double grading.")
        return
    st.header(f"Project {one_line_plain(project.name)}")
    choices = team.assignable(store)
    assigned = {u.name for u in team.members(store, project.id)}
    with st.form(f"members_{project.id}"):
        chosen = st.multiselect(
            "Graders, reviewers and viewers assigned to this project (admins see every project)",
            choices,
            default=[n for n in choices if n in assigned],
            key=f"members_choice_{project.id}",
        )
        overlap = st.slider(
            "Share of items graded by two graders (agreement)",
            0.0,
            0.5,
            step=0.05,
            value=float(project.settings.overlap),
            key=f"overlap_{project.id}",
        )
        audit_share = st.slider(
            "Share of items a reviewer audits once graded (with the double-graded share, the random sample "
            "that corrects the estimate for graders' errors)",
            0.0,
            0.5,
            step=0.05,
            value=float(project.settings.audit_share),
            key=f"audit_share_{project.id}",
        )
        if st.form_submit_button("Save"):
            try:
                team.set_members(store, admin, project.id, chosen)
                project_actions.change_settings(
                    store, admin, project.id, {"overlap": overlap, "audit_share": audit_share}
                )
            except (InputError, Refused) as exc:
                st.error(str(exc))
                return
            st.toast("Saved")
            st.rerun()
    by_criterion = review.agreement_by_criterion(store, admin, project.id)
    if by_criterion:
        criterion_agreement(by_criterion, project.settings.design_criterion)
    else:
        one_question_agreement(project)
    st.caption(
        "An item graded by several graders enters the estimate with its final grade: a reviewer's where one "
        "settled it (the Review page), else the mean of its grades."
    )


def shown(value: float, form: str) -> str:
    """A statistic as a page shows it: ``form`` applied, "–" where it is undefined (NaN)."""
    return "–" if math.isnan(value) else format(value, form)


def one_question_agreement(project: ProjectInfo) -> None:
    """The agreement of a one-question project's double-graded items, as metrics."""
    level = project.settings.grading_scale.level
    result = agreement_of(store.grades(project.id), project.settings)
    cols = st.columns(4)
    cols[0].metric("Items graded twice", result.items)
    cols[1].metric("Same grade", shown(result.observed, ".0%"))
    cols[2].metric(
        "Cohen's kappa",
        shown(result.kappa, ".2f"),
        help="first vs second grade of each double-graded item"
        + (" (linearly weighted)" if level != "nominal" else ""),
    )
    cols[3].metric(
        "Krippendorff's alpha", shown(result.alpha, ".2f"), help=f"all grades of the double-graded items, {level} level"
    )


def criterion_agreement(rows: list[review.CriterionAgreement], primary: str) -> None:
    """A rubric project's agreement, one row per criterion (the primary first), with its disagreements."""
    st.markdown("**Agreement per criterion**")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "criterion": r.criterion + (" (primary)" if r.criterion == primary else ""),
                    "items graded twice": r.agreement.items,
                    "same grade": shown(r.agreement.observed, ".0%"),
                    "Cohen's kappa": shown(r.agreement.kappa, ".2f"),
                    "Krippendorff's alpha": shown(r.agreement.alpha, ".2f"),
                    "level": r.agreement.level,
                    "disagreements": r.disagreements,
                    "settled": r.settled,
                }
                for r in rows
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "Each criterion's double-graded items at its scale's level of measurement (Cohen's kappa: first vs "
        "second grade, weighted for ordered scales). Disagreements: items whose grades of the criterion differ; "
        "settled: those a reviewer set its final grade of."
    )


def tokens_section() -> None:
    st.header("API tokens", help="Personal tokens for the HTTP API (docs/api.md); each acts as its account.")
    who = st.selectbox("Account", [u.name for u in team.everyone(store) if u.active], key="tokens_account")
    if who:
        api_tokens.section(admin, who, "team")


ACCOUNT_MADE = "new_account_made"
"""Set once an account is made, so the next run empties the New account form (cleared on every submit, a refused
password emptied every field: a manager's review)."""

SHOWN_EVENTS = 300
"""The latest audit events the page shows (the CSV holds every one)."""


def audit_section() -> None:
    st.header("Audit trail")
    project = state.current_project()
    scope = st.radio(
        "Events", ["all projects", "this project"], horizontal=True, key="audit_scope", disabled=project is None
    )
    scoped = project.id if project is not None and scope == "this project" else None
    st.caption(
        f"{audit.trail_size(store, scoped):,} events: sign-ins, changed grades, undos, skips, settings, uploads, "
        f"preparations, accounts, exports; the last {SHOWN_EVENTS} below, every one in the CSV. Every grade also "
        "records its grader and time."
    )
    st.dataframe(audit.trail(store, scoped, last=SHOWN_EVENTS), hide_index=True, width="stretch")
    st.download_button(
        "Audit trail (CSV)",
        lambda: audit.trail_csv(audit.trail(store, scoped)),  # built when clicked, not on every render
        "activegrade-audit.csv",
        "text/csv",
        key="dl_audit",
        **access.audited_download("audit trail", None, auth.VIEW_AUDIT),
    )


accounts_section()
st.divider()
project_section()
st.divider()
tokens_section()
st.divider()
audit_section()
