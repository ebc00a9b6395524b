"""Who is using the app: the sign-in gate, the signed-in user, and what their role lets the pages show.

Three ways in, decided by the deployment:
- the open demo (``ACTIVEGRADE_OPEN_DEMO=1`` only): no sign-in, everyone is an
  admin under the name typed in the sidebar;
- OpenID Connect through Streamlit's ``st.login`` when ``.streamlit/secrets.toml``
  has an ``[auth]`` section: the provider's e-mail must belong to an account;
- otherwise a name and password checked against the accounts table. With no
  account at all, the first visitor creates the first admin account.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from core.errors import InputError
from core.inputs.limits import MAX_NAME_CHARS, MAX_PASSWORD_CHARS
from core.inputs.markup import one_line_plain
from core.services import auth, sessions, team
from core.services.database import ProjectInfo
from ui import api_tokens, session_cookie, state

PENDING_CHANGE = "password_change_for"
"""Session state key of the account that signed in with a too-short password and must choose a new one first."""
TOKEN_KEY = "session_token"
"""Session state key of this browser tab's sign-in token (core.services.sessions); the cookie carries it to new tabs."""
SIGNED_IN_AS = "signed_in_as"
"""Session state key of the account (auth.User) this tab's session last resumed as: when the session ends, the
sign-in page says why (``ended_why``)."""
ENDED = "session_ended"
"""Session state key of why this tab's session ended, shown once above the sign-in form."""
LAST_PRESS = "last_press"
"""Session state key of this tab's last press that stores something (app_pages/grade.py): (what it was, whether
it was saved), said with the reason when the session ends or the grader loses the project (``press_note``)."""

PAGE_ACTIONS = {
    "Projects": auth.VIEW_PROJECTS,
    "Grade": auth.GRADE,
    "Dashboard": auth.VIEW_DASHBOARD,
    "Presenter view": auth.VIEW_DASHBOARD,
    "Export": auth.EXPORT,
    "Simulate": auth.SIMULATE,
    "Team": auth.MANAGE_USERS,
    "Review": auth.REVIEW,
    "Records": auth.BROWSE,
}
"""Page title -> the action a user needs to see the page; a page missing here is shown to nobody."""


def oidc_providers() -> list[str]:
    """Provider names configured under [auth] in secrets (``""`` for the unnamed one); [] when none."""
    try:
        section = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - no or malformed secrets.toml: no OIDC
        return []
    if not section:
        return []
    named = [name for name, value in section.items() if isinstance(value, Mapping)]
    return named or [""]


def user() -> auth.User | None:
    """The signed-in user (the open demo's user when it is on), or None.

    Resolved again on every call from the server-side session (core.services.sessions.resume): a session
    that was signed out, expired, or ended by a password change, disabling or a role change signs
    this tab out at once, and the role is the account's current one.
    """
    if auth.open_demo_enabled():
        try:
            return auth.demo_user(st.session_state.get("grader", "") or st.query_params.get("grader", ""))
        except InputError:  # not a name yet: the sidebar says why, and nothing is stored under it
            return auth.demo_user("")
    token = st.session_state.get(TOKEN_KEY) or session_cookie.from_request()
    current = sessions.resume(state.store(), token)
    if current is None:
        st.session_state.pop(TOKEN_KEY, None)
        previous = st.session_state.pop(SIGNED_IN_AS, None)
        if previous is not None:
            st.session_state[ENDED] = ended_why(previous)
    else:
        st.session_state[TOKEN_KEY] = token
        st.session_state[SIGNED_IN_AS] = current
    return current


def ended_why(previous: auth.User) -> tuple[str, str]:
    """Why the session of ``previous`` (the account as this tab last had it) ended, read from the account now,
    and what they may do next, as two sentences: a disabled account cannot sign in again, a changed role signs
    in to what the new role allows."""
    now = auth.refresh(state.store(), previous)
    if now is None:
        return (
            "Your account was disabled, so you were signed out.",
            "It cannot sign in again until an admin enables it (Team page).",
        )
    if now.role != previous.role:
        return (
            f"Your role changed from {previous.role} to {now.role}, so you were signed out.",
            f"Sign in again to go on with the {now.role} role (an admin can change it on the Team page).",
        )
    return (
        "Your session ended (signed out in another tab, a new password, or too long idle).",
        "Sign in again to go on.",
    )


def record_press(what: str, saved: bool) -> None:
    """Remember this tab's last press that stores something: ``what`` (e.g. "grade (Correct) of item q7", shown
    literally) and whether it was saved."""
    st.session_state[LAST_PRESS] = (what, saved)


def press_note() -> str:
    """What became of this tab's last press, as a sentence to add to a reason ("" when there was none); said once."""
    last = st.session_state.pop(LAST_PRESS, None)
    if last is None:
        return ""
    what, saved = last
    fate = "was saved before the change" if saved else "was not saved"
    return f" Your last {one_line_plain(what)} {fate}."


def _signed_in(found: auth.User) -> None:
    """Start the server-side session of a user who just proved who they are (why an earlier one ended is old news)."""
    st.session_state[TOKEN_KEY] = sessions.start(state.store(), found)
    st.session_state.pop(ENDED, None)


def may(action: str, project_id: int | None = None) -> bool:
    """Whether the current user may perform ``action`` (on ``project_id``)."""
    return auth.may(state.store(), user(), action, project_id)


def require(action: str, project_id: int | None = None) -> auth.User:
    """The user when allowed; otherwise an error saying why, and the page stops."""
    try:
        return auth.require(state.store(), user(), action, project_id)
    except auth.AccessDenied as exc:
        st.error(f"Not allowed: {exc}.{press_note()}")
        st.stop()


def visible(projects: Iterable[ProjectInfo]) -> list[ProjectInfo]:
    """The projects the user may open."""
    ids = auth.visible_projects(state.store(), user())
    return [p for p in projects if ids is None or p.id in ids]


def allowed_pages(pages: list) -> list:
    """The st.Page objects whose action the user's role allows."""
    current = user()
    return [p for p in pages if auth.may(state.store(), current, PAGE_ACTIONS.get(p.title, ""))]


def gate(pages: list) -> auth.User:
    """The signed-in user; when nobody is signed in, show the sign-in page and stop.

    The requested page is resolved first (hidden navigation), so the URL keeps it and, once
    signed in, the user lands on the page and project they asked for.
    """
    if auth.open_demo_enabled():
        try:
            auth.check_open_demo_request(st.context.headers, _peer())
        except auth.AccessDenied as exc:
            st.error(f"Not available: {exc}.")
            st.stop()
    current = user()
    if current is not None:
        if not auth.open_demo_enabled():
            session_cookie.mirror(st.session_state.get(TOKEN_KEY), int(sessions.limits().absolute.total_seconds()))
        return current
    providers = oidc_providers()
    if providers and st.user.is_logged_in:
        try:
            found = auth.sign_in_oidc(state.store(), st.user.to_dict())
        except auth.AccessDenied as exc:
            st.error(f"Signed in with your identity provider, but {exc}.")
            st.button("Sign out", on_click=st.logout, key="oidc_sign_out")
            st.stop()
        _signed_in(found)
        st.rerun()
    st.navigation(pages, position="hidden")
    session_cookie.mirror(None, 0)
    ended = st.session_state.pop(ENDED, None)
    if ended is not None:  # signed out by a change elsewhere: say what happened, to the last press, and what now
        why, then = ended
        st.warning(f"{why}{press_note()} {then}")
    _sign_in_page(providers)
    st.stop()


def _sign_in_page(providers: list[str]) -> None:
    st.title("ActiveGrade")
    store = state.store()
    if team.no_account_yet(store):
        _first_admin()
        return
    if st.session_state.get(PENDING_CHANGE) is not None:
        _new_password(st.session_state[PENDING_CHANGE])
        return
    with st.form("sign_in"):
        st.subheader("Sign in")
        # the browser's password manager fills a saved account (a password field's default, new-password, had it
        # offer to make up a new one)
        name = st.text_input("Name", key="sign_in_name", max_chars=MAX_NAME_CHARS, autocomplete="username")
        password = st.text_input(
            "Password",
            type="password",
            key="sign_in_password",
            max_chars=MAX_PASSWORD_CHARS,
            autocomplete="current-password",
        )
        if st.form_submit_button("Sign in", type="primary"):
            try:
                found = auth.sign_in(store, name, password, address=client_address())
            except auth.SignInThrottled as exc:
                st.error(f"Not now: {exc}.")
                return
            if found is None:
                st.error("Wrong name or password (or the account is disabled).")
            elif found.must_change_password:
                st.session_state[PENDING_CHANGE] = found
                st.rerun()
            else:
                _signed_in(found)
                st.rerun()
    for provider in providers:
        label = f"Sign in with {provider}" if provider else "Sign in with your identity provider"
        st.button(label, on_click=st.login, args=(provider,) if provider else (), key=f"oidc_{provider}")


def _chosen_password(label: str, key: str, repeat_key: str) -> str | None:
    """A password typed twice inside a form: the password, or None (and a message) when the two differ."""
    password = st.text_input(
        label,
        type="password",
        key=key,
        max_chars=MAX_PASSWORD_CHARS,
        help=f"at least {auth.MIN_PASSWORD_LENGTH} characters",
    )
    repeat = st.text_input(f"{label} again", type="password", key=repeat_key)
    if password != repeat:  # a form reruns the page only when submitted: this is said after the press
        st.error("The two passwords differ.")
        return None
    return password


def _new_password(pending: auth.User) -> None:
    """The form of a user who signed in with a password shorter than the minimum: a new one, then signed in."""
    st.warning(
        f"Your password is shorter than {auth.MIN_PASSWORD_LENGTH} characters, which is no longer accepted: "
        "choose a new one to continue."
    )
    with st.form("new_password"):
        password = _chosen_password("New password", "new_password", "new_password_repeat")
        if st.form_submit_button("Save and sign in", type="primary") and password is not None:
            try:
                changed = auth.replace_short_password(state.store(), pending, password)
            except (InputError, auth.AccessDenied) as exc:
                st.error(str(exc))
                return
            st.session_state.pop(PENDING_CHANGE, None)
            _signed_in(changed)
            st.rerun()
    if st.button("Cancel", key="new_password_cancel"):
        st.session_state.pop(PENDING_CHANGE, None)
        st.rerun()


def client_address() -> str | None:
    """The client's IP address (core.services.auth.client_address): the connection's as Streamlit gives it (None
    on localhost), or behind a proxy named in $ACTIVEGRADE_TRUSTED_PROXIES the one its X-Forwarded-For names."""
    return auth.client_address(_peer(), st.context.headers.get("X-Forwarded-For"))


def _peer() -> str | None:
    """The connection's peer address as Streamlit gives it (None on localhost)."""
    address = st.context.ip_address
    return address if isinstance(address, str) else None


def _first_admin() -> None:
    team.setup_code()  # made and logged now, for the operator to read
    st.info(
        "No account exists yet: create the first admin account with the setup code the server wrote to its "
        "log. (To try the app without accounts, start it with ACTIVEGRADE_OPEN_DEMO=1.)"
    )
    with st.form("first_admin"):
        code = st.text_input(
            "Setup code",
            key="first_admin_code",
            max_chars=64,
            help="In the server's log: 'the first-admin form asks for the setup code ...'. Only whoever runs the "
            "server can read it, so nobody else who reaches a new deployment first can make it theirs.",
        )
        name = st.text_input("Admin name", key="first_admin_name", max_chars=MAX_NAME_CHARS)
        password = _chosen_password("Password", "first_admin_password", "first_admin_repeat")
        if st.form_submit_button("Create the admin account", type="primary") and password is not None:
            store = state.store()
            try:
                created = team.create_first_admin(store, name, password, code)
            except InputError as exc:
                st.error(str(exc))
                return
            if created is None:  # someone else was faster
                st.error("An account was created meanwhile; sign in instead.")
                return
            _signed_in(created)
            st.rerun()


def sidebar() -> None:
    """Who is signed in, with a sign-out button; in the open demo, the name to grade under."""
    if auth.open_demo_enabled():
        st.text_input(
            "Your name (grader)",
            value=st.query_params.get("grader", "")[:MAX_NAME_CHARS],
            key="grader",
            placeholder="e.g. ann",
            max_chars=MAX_NAME_CHARS,
        )
        try:
            named = auth.check_grader_name(st.session_state.get("grader", ""))
        except InputError as exc:
            st.error(str(exc))
        else:
            if named:
                st.query_params["grader"] = named
        st.caption("Open demo: no sign-in, everyone may do everything.")
        return
    current = user()
    st.session_state["grader"] = current.name  # what grades record
    st.caption(f"Signed in as **{one_line_plain(current.name)}** ({current.role})")
    with st.expander("Your API tokens"):
        api_tokens.section(current, current.name, "own")
    if st.button("Sign out", key="sign_out"):
        sessions.end(state.store(), st.session_state.pop(TOKEN_KEY, None))
        st.session_state.pop(SIGNED_IN_AS, None)  # signed out by choice: nothing to explain
        if oidc_providers() and st.user.is_logged_in:
            st.logout()
        st.rerun()
