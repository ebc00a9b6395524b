"""The shared frame: the database connection, the selected project and the grader's name.

The selected project and grader live in the URL's query parameters
(``?project=3&grader=ann``) as well as the session, so a reload, a
bookmark or a second browser opens the same place.
"""

from __future__ import annotations

import logging

import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain
from core.services import auth, database
from core.services.database import ProjectInfo, Store, database_url, describe_failure
from core.services.navigation import Opening

logger = logging.getLogger(__name__)
UNASSIGNED = "no_project_assigned"
"""Session state key: whether the user may open no project and only an admin can assign one (``open_project``)."""


def _configured_url() -> str | None:
    """[connections.activegrade] url from Streamlit secrets, if any ($ACTIVEGRADE_DB_URL otherwise)."""
    try:
        return st.secrets["connections"]["activegrade"]["url"]
    except Exception:  # noqa: BLE001 - no such entry, no secrets file, or a malformed one: not configured
        return None


@st.cache_resource(show_spinner=False)
def _open_store(url: str) -> Store:
    return database.open_store(url)


_served: dict[str, Store] = {}


def served_store() -> Store:
    """The app's Store outside a page run (the HTTP API's requests, ui/web.py): the same one, no page to stop.
    Kept by URL once opened: Streamlit's cache hashed its argument on every request (about 8% of the server's
    time under 100 graders, benchmarks/concurrent_graders.py)."""
    url = database_url(_configured_url())
    found = _served.get(url)
    return found if found is not None else _served.setdefault(url, _open_store(url))


def store() -> Store:
    """The app's Store (one per process and URL); stops the page with an error if it cannot open."""
    url = database_url(_configured_url())
    try:
        return _open_store(url)
    except Exception as exc:  # noqa: BLE001 - a bad URL, an unreachable server, permissions, ...
        reason = describe_failure(url, exc)  # passwords redacted
        logger.error("cannot open the database: %s", reason)
        # the reason is the operator's, in the log: a page anyone may open showed the server's host, port and
        # database name (an operator's review)
        st.error(
            "Cannot open the database, so there is nothing to show. The server's log says why; its operator checks "
            "$ACTIVEGRADE_DB_URL and that the database server is running (docs/configuration.md)."
        )
        st.stop()


def ensure_worker() -> None:
    """Wake the app's own worker, or start one when jobs wait (core.jobs.background; off with $ACTIVEGRADE_APP_WORKER=0)."""
    database.ensure_worker(store())


def keep_worker_warm() -> None:
    """At the server's start (ui/web.py): the app's own worker, warm before the first job. A database or a
    configuration that fails here is left to the first page, which says what is wrong (with the URL's
    passwords redacted, which the error's own text may not be); a page run that queues a job starts one."""
    try:
        database.keep_worker_warm(served_store())
    except Exception as exc:  # noqa: BLE001 - the server starts anyway; the page reports the cause
        logger.error("the app's worker did not start with the server (%s); the first page says why", type(exc).__name__)


def open_project(opening: Opening) -> None:
    """Show the frame's choice of project (app.py), and remember whether the user has none to choose from,
    for require_ready_project's guidance."""
    select_project(opening.project_id)
    st.session_state[UNASSIGNED] = opening.unassigned


def select_project(project_id: int | None) -> None:
    """Make ``project_id`` the current project for this session and in the URL."""
    st.session_state["project_id"] = project_id
    if project_id is None:
        st.query_params.pop("project", None)
    else:
        st.query_params["project"] = str(project_id)


def asked_project() -> str | None:
    """The project this run is asked for, as written: the session's (chosen in this tab), else the URL's
    ``?project=`` (a new tab), else None."""
    project_id = st.session_state.get("project_id")
    return str(project_id) if project_id is not None else st.query_params.get("project")


def current_project() -> ProjectInfo | None:
    """The selected project (from the session, else the URL), or None."""
    asked = asked_project()
    try:
        return None if asked is None else store().project(int(asked))
    except ValueError:
        return None
    except KeyError:
        select_project(None)
        return None


def heading(title: str, project: ProjectInfo) -> None:
    """The page's title and, under it, the project shown: an address may have asked for another one."""
    st.title(title)
    st.caption(f"Project **{one_line_plain(project.name)}**")


def grader() -> str:
    """The grader's name: the signed-in account's, or in the open demo the one typed in the sidebar once it is a
    name (core.services.auth.check_grader_name; empty until then)."""
    name = st.session_state.get("grader", "")
    if not auth.open_demo_enabled():
        return name.strip()
    try:
        return auth.check_grader_name(name)
    except InputError:
        return ""


def link_query(project_id: int | None) -> dict[str, str] | None:
    """What every page link's address carries: the project shown, and in the open demo the name typed as grader
    (a tab has its own session, so a link opened in a new tab would otherwise ask for the name again)."""
    query = {} if project_id is None else {"project": str(project_id)}
    if auth.open_demo_enabled() and grader():
        query["grader"] = grader()
    return query or None


def require_ready_project() -> ProjectInfo:
    """The current project if it is prepared; otherwise explain why and stop the page."""
    project = current_project()
    if project is None and st.session_state.get(UNASSIGNED):
        st.info("No project is assigned to you yet: ask an admin to assign you (**Team** page).")
        st.stop()
    if project is None:
        st.info("Choose a project in the sidebar, or on the **Projects** page, first.")
        st.page_link("app_pages/projects.py", label="Go to Projects", icon=":material/folder_open:")
        st.stop()
    if project.status != "ready":
        st.info(
            f"Project {one_line_plain(project.name)} is not ready yet ({project.status}); see the **Projects** page."
        )
        st.page_link("app_pages/projects.py", label="Go to Projects", icon=":material/folder_open:")
        st.stop()
    return project
