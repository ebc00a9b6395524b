"""A captured grading press replayed after the grader lost access, in a real Chromium.

The grading card's press travels as one websocket message (a Streamlit
``BackMsg`` that reruns the card's fragment with the press as its trigger).
The test lets the grader's browser send it but keeps it from the server
(Playwright's ``route_web_socket``), then replays that very message:

- once while the grader may grade: a grade is stored (the replay itself works,
  so the refusals below can fail);
- after an admin unassigned the grader, after an admin disabled them, and after
  they signed out, on the page's own websocket;
- after sign-out on a new websocket that names the old Streamlit session (a
  reconnect that resumes its state, with the old session cookie), and on a new
  websocket that opens a fresh session.

None of these may store a grade; the signed-out replays are answered with the
sign-in form, never the card.
"""

from __future__ import annotations

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from core.api.http import SESSION_COOKIE
from core.services import account_writes, auth
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from core.testing.appserver import ITEM_SHOWN, MIN_VIEW_S, PAGE_LINK, TIMEOUT_MS

from .conftest import DATA_APP, PASSWORD, sign_in

pytestmark = pytest.mark.e2e

CARD = "activegrade_grading_card"
SIGN_IN_FORM = "sign_in_password"  # the key of the sign-in form's password field
CARD_STATE = "() => document.querySelector('.ag-card')?.dataset.agState ?? null"


def is_press(frame: bytes) -> bool:
    """Whether a page-to-server frame is a grading card press (a rerun whose widget states carry it)."""
    msg = BackMsg()
    msg.ParseFromString(frame)
    if msg.WhichOneof("type") != "rerun_script":
        return False
    return any('"token"' in w.json_trigger_value for w in msg.rerun_script.widget_states.widgets)


class Tap:
    """The page's websocket to the app, routed through the test: every press is held back (not sent)
    and kept; ``replay`` sends a kept frame to the server as if the page had sent it."""

    def __init__(self, page) -> None:
        self.presses: list[bytes] = []
        self.session_id: str | None = None
        self.runs = 0  # script runs the server has finished for the page
        self._server = None
        page.route_web_socket("**/_stcore/stream", self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        self._server = server
        ws.on_message(lambda m: self.presses.append(m) if is_press(m) else server.send(m))
        server.on_message(lambda m: (self._from_server(m), ws.send(m)))

    def _from_server(self, frame: bytes) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(frame)
        if msg.WhichOneof("type") == "new_session":
            self.session_id = msg.new_session.initialize.session_id
        self.runs += msg.WhichOneof("type") == "script_finished"

    def replay(self, page, frame: bytes) -> None:
        """Send ``frame`` to the server and wait until the run it starts has finished (the press's
        callback runs before the script, so whatever it stores is committed by then)."""
        runs = self.runs
        self._server.send(frame)
        wait_until(page, lambda: self.runs > runs)


def wait_until(page, condition) -> None:
    """Wait for ``condition()`` while Playwright delivers the routed websocket's messages (it runs the
    route's handlers only inside its own calls, so the wait is a sequence of short ones)."""
    waited_ms = 0
    while not condition():
        assert waited_ms < TIMEOUT_MS, "timed out"
        page.wait_for_timeout(50)
        waited_ms += 50


def capture_press(page, tap: Tap, key: str = "y") -> bytes:
    """Press ``key`` on the card once the item has been on screen long enough; the press, held back."""
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    page.wait_for_timeout(MIN_VIEW_S * 1000)
    before = len(tap.presses)
    page.keyboard.press(key)
    page.wait_for_function(f"() => ({CARD_STATE})() === 'sending'", timeout=TIMEOUT_MS)
    wait_until(page, lambda: len(tap.presses) > before)
    assert len(tap.presses) == before + 1
    return tap.presses[-1]


def sign_in_form_shown(page) -> None:
    """Wait for the sign-in form (while Streamlit swaps pages, the old form may still be on screen too)."""
    page.get_by_role("textbox", name="Password", exact=True).first.wait_for(timeout=TIMEOUT_MS)


def grades_of(store: Store, pid: int, name: str) -> int:
    grades = store.grades(pid)
    return int((grades["grader"] == name).sum())


RAW_REPLAY = """async ([sessionId, frame]) => {
  const xsrf = document.cookie.split('; ').find((c) => c.startsWith('_streamlit_xsrf='))?.split('=')[1] ?? '';
  const url = location.origin.replace(/^http/, 'ws') + '/_stcore/stream';
  window.agSocket?.close();
  const ws = new WebSocket(url, sessionId ? ['streamlit', xsrf || 'none', sessionId] : ['streamlit', xsrf || 'none']);
  ws.binaryType = 'arraybuffer';
  window.agSocket = ws;
  const replies = [];
  window.agReplies = replies;
  ws.onmessage = (e) => replies.push(Array.from(new Uint8Array(e.data)));
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  ws.send(new Uint8Array(frame));
}"""


def as_full_rerun(frame: bytes) -> bytes:
    """The press as a rerun of the whole page (the fragment's id removed), widget states unchanged."""
    msg = BackMsg()
    msg.ParseFromString(frame)
    msg.rerun_script.ClearField("fragment_id")
    return msg.SerializeToString()


def raw_replay(page, frame: bytes, session_id: str | None) -> tuple[set[str], str]:
    """Open a websocket of our own from ``page`` (on the app's origin, with its cookies), naming
    ``session_id`` (None: a fresh session), and send ``frame``; once the answer shows the sign-in form
    or the grading card: (the Streamlit sessions that answered, what they drew)."""
    page.evaluate(RAW_REPLAY, [session_id, list(frame)])
    sessions: set[str] = set()
    drawn = ""

    def answered() -> bool:
        nonlocal drawn
        messages = []
        for raw in page.evaluate("() => window.agReplies"):
            msg = ForwardMsg()
            msg.ParseFromString(bytes(raw))
            messages.append(msg)
        kinds = [m.WhichOneof("type") for m in messages]
        if "new_session" not in kinds:  # what a resumed session flushes first is the end of a run from before
            return False
        since = messages[kinds.index("new_session") :]  # runs started by the replay
        sessions.update(m.new_session.initialize.session_id for m in since if m.WhichOneof("type") == "new_session")
        drawn = "\n".join(str(m.delta) for m in since if m.WhichOneof("type") == "delta")
        finished = any(m.WhichOneof("type") == "script_finished" for m in since)
        return finished and (SIGN_IN_FORM in drawn or CARD in drawn)

    wait_until(page, answered)
    return sessions, drawn


def test_a_replayed_press_stores_nothing_once_access_is_gone(browser, server):
    store = Store.open(server.db_url)
    files = [(name, (DATA_APP / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Replay", *files, start=False)
    start_preparation(store, pid, wait=True)
    account_writes.create_account(store, "adam", auth.ADMIN, password=PASSWORD)
    grader = account_writes.create_account(store, "gwen", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    tap = Tap(page)
    sign_in(page, f"{server.url}/?project={pid}", "gwen")
    page.locator(PAGE_LINK).filter(has_text="Grade").click()

    # the replay works: the held-back press, replayed while gwen may grade, stores her grade
    control = capture_press(page, tap)
    tap.replay(page, control)
    page.wait_for_function(f"() => ({CARD_STATE})() === 'saved'", timeout=TIMEOUT_MS)
    assert grades_of(store, pid, "gwen") == 1
    press = capture_press(page, tap)  # the next item's press, held back for the replays below

    # unassigned by an admin: the replay is refused
    accounts.unassign(store, pid, grader.id)
    tap.replay(page, press)
    assert grades_of(store, pid, "gwen") == 1
    # the card's fragment checks the assignment too: the reason instead of the card, no further item
    page.get_by_text("Not allowed: gwen is not assigned").wait_for(timeout=TIMEOUT_MS)
    assert page.locator(".ag-card").count() == 0
    accounts.assign(store, pid, grader.id)
    page.locator(PAGE_LINK).filter(has_text="Grade").click()  # the same item, same token
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)

    # disabled by an admin: refused, and the page goes to the sign-in form
    accounts.set_active(store, "gwen", False)
    tap.replay(page, press)
    sign_in_form_shown(page)
    assert grades_of(store, pid, "gwen") == 1
    accounts.set_active(store, "gwen", True)

    # signed in again in the same tab (the same Streamlit session, the press's token still unused)
    page.get_by_role("textbox", name="Name", exact=True).fill("gwen")
    page.get_by_role("textbox", name="Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in as gwen").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    cookie = next(c for c in context.cookies() if c["name"] == SESSION_COOKIE)
    old_session = tap.session_id

    # signed out: refused on the page's websocket
    page.get_by_role("button", name="Sign out").click()
    sign_in_form_shown(page)
    tap.replay(page, press)
    sign_in_form_shown(page)
    assert page.locator(".ag-card").count() == 0
    assert grades_of(store, pid, "gwen") == 1

    # signed out, from a new websocket with the old cookie: resuming the old Streamlit session, and a fresh one
    page.close()
    context.add_cookies([cookie])
    attacker = context.new_page()
    attacker.goto(f"{server.url}/_stcore/health")  # the app's origin, no app of its own
    # the old session resumed (its showing tokens with it): the press as sent
    answered, drawn = raw_replay(attacker, press, old_session)
    assert answered == {old_session}
    assert SIGN_IN_FORM in drawn and CARD not in drawn
    assert grades_of(store, pid, "gwen") == 1
    # a fresh session ignores a fragment it never drew; so the press is replayed as a whole-page rerun
    answered, drawn = raw_replay(attacker, as_full_rerun(press), None)
    assert old_session not in answered
    assert SIGN_IN_FORM in drawn and CARD not in drawn
    assert grades_of(store, pid, "gwen") == 1
    context.close()
