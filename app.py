"""ActiveGrade's Streamlit app: the router and the frame every page shares.

Run with ``streamlit run serve.py`` (serve.py serves this script with the HttpOnly sign-in cookie and the
security headers; ``streamlit run app.py`` runs it without them). On a first run with an empty database it
opens the demo project (data/demo/) so there is something to grade at once.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core import logs
from core.config import config
from core.errors import InputError
from core.inputs.limits import MAX_NAME_CHARS
from core.inputs.markup import one_line_plain
from core.services import auth, navigation, project_actions
from core.services.database import ProjectInfo
from ui import signin, state

# a local icon: a ":material/...:" page icon makes every browser fetch it from fonts.gstatic.com (issue 14)
st.set_page_config(page_title="ActiveGrade", page_icon=str(Path(__file__).parent / "ui" / "favicon.svg"), layout="wide")
try:
    config()  # every ACTIVEGRADE_* variable checked before anything reads one
    logs.configure()
except InputError as bad:
    st.error(str(bad))
    st.stop()

FRAME_STYLE = """<style>
[data-testid="stMetric"] :is(div,p,span){white-space:normal;overflow:visible;text-overflow:clip}
@media (max-width:1279px){[data-testid="stMetricValue"]{font-size:1.6rem}}
[data-testid="stSidebar"] a:focus-visible{outline:2px solid currentColor;outline-offset:2px}
[data-testid="stMarkdownContainer"] :is(pre,pre code){white-space:pre-wrap!important;overflow-wrap:anywhere}
</style>"""
"""Every page's style: a metric's label, value and note wrap instead of ending in "..." where a column is narrow
("Planned saving: fixed-n · same rule" in a quarter of a 1280-px window, "0.04..." for an interval at 900 px), and
a narrow window's values are set smaller (tests/e2e/test_manager_screenshots.py); the sidebar's page links show
where the keyboard's focus is (they showed none: grader's review); a code block in rendered Markdown (the report's
recompute script on the Export page) wraps its lines, where it scrolled sideways in a region the keyboard could not
reach (axe's scrollable-region-focusable: a grader's review)."""
OPENED = "opened_project"
"""Session state key of the project this browser tab last recorded as opened (``note_opened``)."""
PAGES = [
    # served at /; its url_path only reserves a pathname (Streamlit's rule), one nobody types: ALIASES take the
    # names people do
    st.Page("app_pages/projects.py", title="Projects", icon=":material/folder_open:", default=True, url_path="start"),
    st.Page("app_pages/grade.py", title="Grade", icon=":material/rate_review:"),
    st.Page("app_pages/dashboard.py", title="Dashboard", icon=":material/monitoring:"),
    st.Page("app_pages/presenter.py", title="Presenter view", icon=":material/co_present:"),
    st.Page("app_pages/export.py", title="Export", icon=":material/download:"),
    st.Page("app_pages/simulate.py", title="Simulate", icon=":material/science:"),
    st.Page("app_pages/team.py", title="Team", icon=":material/group:"),
    st.Page("app_pages/review.py", title="Review", icon=":material/gavel:"),
    st.Page("app_pages/records.py", title="Records", icon=":material/table_rows:"),
]


def first_run() -> None:
    """With no project at all, open the demo (once per session; a missing demo is reported on Projects)."""
    if st.session_state.get("first_run_done"):
        return
    st.session_state["first_run_done"] = True
    store = state.store()
    if state.current_project() is None and not store.projects():
        try:
            state.select_project(project_actions.open_demo(store, signin.user()))
        except InputError as exc:
            st.session_state["demo_error"] = str(exc)


def page_links(pages: list[st.Page], query: dict[str, str] | None) -> None:
    """The menu, drawn here instead of by st.navigation so that every link's address names the project shown:
    a link opened in a new tab (middle click, "Open link in new tab") opens this project, not the last used."""
    with st.container(key="page-links"):
        for page in pages:
            st.page_link(page, query_params=query)


def sidebar(pages: list[st.Page]) -> None:
    project = state.current_project()
    with st.sidebar:
        page_links(pages, state.link_query(None if project is None else project.id))
        st.markdown("### ActiveGrade")
        projects = signin.visible(state.store().projects())
        if projects:
            ids = [p.id for p in projects]
            names = {p.id: p.name for p in projects}
            index = ids.index(project.id) if project is not None else None
            chosen = st.selectbox("Project", ids, index=index, format_func=names.get, placeholder="Choose a project")
            if chosen is not None and (project is None or chosen != project.id):
                state.select_project(chosen)
                st.rerun()
        signin.sidebar()


def open_demo_banner() -> None:
    """In the open demo: refuse a database with accounts (anyone would be its admin), else say loudly what this is."""
    if not auth.open_demo_enabled():
        return
    try:
        auth.check_open_demo(state.store())
    except InputError as exc:
        st.error(str(exc))
        st.stop()
    with st.container(key="open-demo-banner"):
        st.markdown(
            ":orange-background[:material/lock_open: **Open demo**: there is no sign-in, and everyone who can "
            "open this address is an admin of every project here. Use it to try ActiveGrade, not for real grading.]"
        )


def choose_project(user: auth.User) -> None:
    """Every page's URL names its project (?project=ID): keep the one asked for across page switches; with
    none asked for open the only one the user may, else their last used; and with one that does not exist or
    is not theirs, say so before showing that fallback."""
    store = state.store()
    visible = [p.id for p in signin.visible(store.projects())]
    opening = navigation.open_project(store, user, state.asked_project(), visible)
    state.open_project(opening)
    if opening.refused is not None:
        say_refused(opening.refused, None if opening.project_id is None else store.project(opening.project_id))
    note_opened(user, opening.project_id)


def say_refused(asked: str, shown: ProjectInfo | None) -> None:
    """Tell the user the address's project (``asked``, as written) cannot be opened, and which one is shown."""
    instead = "" if shown is None else f"; showing {one_line_plain(shown.name)}"
    st.warning(f"Project {one_line_plain(asked[:MAX_NAME_CHARS])} does not exist or is not yours{instead}.")


def note_opened(user: auth.User, project_id: int | None) -> None:
    """Opening a project counts as using it, so a bare address in a new tab opens it again: recorded once per
    browser tab and project, not at every rerun (a grade is one)."""
    if project_id is None or st.session_state.get(OPENED) == project_id:
        return
    navigation.opened(state.store(), user, project_id)
    st.session_state[OPENED] = project_id


def to_projects() -> None:
    """Open the Projects page, keeping the address's query (``?project=``)."""
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())


ALIASES = [st.Page(to_projects, title="Projects", url_path=name, visibility="hidden") for name in ("projects", "home")]
"""/projects and /home, the names a user guesses for the Projects page, which Streamlit serves at / only: each
switches to it."""


def refused(page: st.Page) -> st.Page:
    """A page the user's role may not open, as its URL shows it to them: hidden from the menu, and saying
    so instead of Streamlit's "Page not found"."""

    def say() -> None:
        st.title(page.title)
        if auth.open_demo_enabled():  # everyone is an anonymous admin: no accounts to manage
            st.warning(f"The open demo has no **{page.title}** page: accounts need sign-in.")
        else:
            st.warning(
                f"Your account ({signin.user().role}) may not open **{page.title}**. "
                "An admin can change your role on the Team page."
            )
        st.page_link(PAGES[0], label="Go to Projects", icon=":material/folder_open:")

    return st.Page(say, title=page.title, icon=page.icon, url_path=page.url_path, visibility="hidden")


st.sidebar.html(FRAME_STYLE)  # in the sidebar: an element of the page's own would shift it by a gap
open_demo_banner()
choose_project(signin.gate([*PAGES, *ALIASES]))  # the sign-in page, and stop, for anyone not signed in
if signin.may(auth.CREATE_PROJECT):
    first_run()
allowed = signin.allowed_pages(PAGES)
current_page = st.navigation(allowed + [refused(p) for p in PAGES if p not in allowed] + ALIASES, position="hidden")
sidebar(allowed)
state.ensure_worker()  # rings the app's own worker (a job the last run queued starts now), or starts one when jobs wait
current_page.run()
