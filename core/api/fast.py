"""The fast grading route: a plain HTML page at /grade-fast?project=ID that grades through the API's own
handlers, for graders on slow links or long sessions (no Streamlit rerun per press).

The page is served by the app's server (ui/web.py adds ``routes``) and acts for the signed-in session of
the HttpOnly sign-in cookie (core.api.http.session_user: the app's own origin only, never a token); its
calls are the API's handlers (core.api.endpoints: next_item, grade, skip, undo), so a press here runs the same
checks and the same grade_actions code as the Grade page and the API. Each grade asks for the next card
in the same round trip (``POST grades?then=next``), and every card comes with the item the queue is
expected to hand out after it (``ahead``: its texts only, core.api.cards.ahead; a grader holds one item at a
time, core.services.reservations, so it is neither reserved nor given a token). On a press the page paints
that item at once, not yet pressable ("pending"), while the press is saved; the server's answer then makes it
the card held (its token) or, when the server handed out another item, replaces it (``data-replaced``
counts those). A press that is not saved brings the pressed card back with the server's reason: no card is
shown as graded before the server said saved. The card shows the texts as plain text; every press names
the item's id and its single-use token, so a grade lands on the item shown or nowhere. As on the Grade
page's card (ui/grading_card.js), no press is dropped without a sign: a grade key pressed while a press is
in flight is refused on screen (the card on screen is not handed out yet), a skip is kept and carried out
once that press is answered, on the card then held if it is the one that was on screen when S was
pressed (else the page says it was not carried out), and so is an undo (U: the grader's last skip or grade,
then the card they hold, the item it brought back); ``#card`` counts them for tests (data-sent,
data-kept, data-refused, data-ahead). The card shows the item's reference answer where the project shows it
to graders (its ``show_reference`` setting), and every answer names the item it was about.

A rubric project's card (core.rubric: the card's ``criteria``) asks every criterion at once, with keys as on
the Grade page (ui/grading_card.js), digits on every scale (a yes/no criterion: 1 and 2): 1..9 answer the criterion in focus with its labels in order and move the
focus to the next unanswered one, ArrowUp and ArrowDown move it, Enter saves the card as one press (``labels``,
criterion -> label, on the card's one token) once every required criterion is answered, else the focus goes to
the first that is not and the page says which. Backspace or Delete clears the focused criterion's answer when it
is optional, so the card leaves it out (a required one keeps its answer, and the page says why); an optional
criterion holding an answer shows a "Clear (Backspace)" button that clears it for a mouse (Tab reaches it, and
Enter on it clears rather than saves). Each criterion's block shows its answer (``data-answer``); a card not
saved comes back with its answers.

In the open demo (no sessions) the page and its calls answer browsers on this machine only, as the open
demo's user named by the page's ``&grader=NAME`` (core.api.http.open_demo_user), and refuse others with 403.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from core.api import endpoints
from core.api.http import ApiError, Endpoint, open_demo_user, session_token, unrouted
from core.services import auth, sessions
from core.store import Store

PAGE_PATH = "/grade-fast"
API_PATH = PAGE_PATH + "/api/projects/{project_id}"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ActiveGrade: fast grading</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
.text { white-space: pre-wrap; border: 1px solid #ddd; border-radius: 6px; padding: .8rem; margin: .4rem 0 1rem; }
button { font-size: 1rem; margin: 0 .4rem .4rem 0; padding: .4rem .9rem; }
#status { min-height: 1.5rem; color: #555; } #notice { color: #8a4b00; font-weight: 600; }
.card[data-state=sending], .card[data-state=pending] #labels { opacity: .6; }
.criterion { border-left: 4px solid transparent; padding: .1rem 0 .1rem .6rem; margin-bottom: .4rem; }
.criterion.focused { border-left-color: #1f6feb; background: #f3f7ff; }
.criterion .name { font-weight: 600; margin: .3rem 0; } .criterion .guidelines { color: #555; margin: 0 0 .4rem; }
button[aria-pressed=true] { background: #1f6feb; color: #fff; border-color: #1f6feb; }
</style></head><body><main>
<h1>Fast grading</h1>
<p id="status" role="status">Loading...</p>
<p id="notice" role="alert" hidden></p>
<div class="card" id="card" data-state="loading" tabindex="-1">
  <p><b>Item</b> <span id="item"></span></p>
  <p><b>Prompt</b></p><div class="text" id="prompt"></div>
  <p><b>Response</b></p><div class="text" id="response"></div>
  <div id="reference-block" hidden><p><b>Reference</b></p><div class="text" id="reference"></div></div>
  <div id="labels"></div><button id="skip" type="button">Skip (S)</button>
  <button id="undo" type="button">Undo my last skip or grade (U)</button>
</div>
<script>
(() => {
  const query = new URLSearchParams(location.search);
  const project = query.get("project"), grader = query.get("grader");  // grader: the open demo's name
  const base = "/grade-fast/api/projects/" + encodeURIComponent(project);
  const $ = (id) => document.getElementById(id);
  const NOTICE_MS = 4000;  // how long a refused or kept press's message stays on screen
  // card: the item held, with its token (null while a press is in flight: no press applies to it any more);
  // shownAt: when the texts on screen were painted; kept: [key, item on screen when it was pressed];
  // labels: the scale's; criteria: a rubric project's (null when it asks one question), with the card's
  // answers so far (criterion -> label) for the item answersFor and the criterion in focus
  let card = null, labels = [], shownAt = 0, busy = false, kept = [], noticeTimer = 0;
  let criteria = null, answers = {}, answersFor = null, focus = 0;
  const BUSY = "still saving the last grade, press again once the card is ready";
  const counts = {sent: 0, kept: 0, refused: 0, ahead: 0, replaced: 0};
  const say = (text) => { $("status").textContent = text; };
  function count(what) { counts[what] += 1; $("card").dataset[what] = String(counts[what]); }
  function notify(text) {
    $("notice").textContent = text; $("notice").hidden = false; clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { $("notice").hidden = true; $("notice").textContent = ""; }, NOTICE_MS);
  }
  function refuse(key, why) { count("refused"); notify(`${key} not taken: ${why}`); }
  // Puts an item's texts on the card (a card, a preview painted ahead, or none) in ``state``; ``at``: when the
  // grader first saw these texts (by default the next animation frame, once they are painted).
  function paint(view, state, at) {
    const held = $("card").contains(document.activeElement); // a button pressed with Enter: replaced below
    $("card").dataset.item = view ? view.item_id : "";
    $("card").dataset.state = state;
    $("item").textContent = view ? view.item_id : "";
    $("prompt").textContent = view ? view.prompt : "";
    $("response").textContent = view ? view.response : "";
    $("reference").textContent = view && view.reference ? view.reference : "";
    $("reference-block").hidden = !(view && view.reference);
    if (!view || view.item_id !== answersFor) { answers = {}; answersFor = view ? view.item_id : null; focus = 0; }
    $("labels").replaceChildren(...(view ? questions() : []));
    if (held && !$("card").contains(document.activeElement)) $("card").focus({preventScroll: true}); // not lost
    showAnswers();
    const mark = (t) => { shownAt = t; $("card").dataset.shownAt = String(t); };
    if (at === undefined) requestAnimationFrame(() => mark(performance.now())); else mark(at);
  }
  // Buttons for a scale's labels, keys 1, 2, ... in order; a click calls ``pick(key, label)``.
  function buttons(choices, pick) {
    return choices.map((l, i) => {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = `${l.label} (${i + 1})`; b.onclick = () => pick(String(i + 1), l.label);
      return b;
    });
  }
  function line(tag, cls, text) {
    const e = document.createElement(tag); e.className = cls; e.textContent = text; return e;
  }
  // What the card asks: the scale's labels, or a rubric's criteria (each with its guidelines and labels) and
  // the button that saves the card.
  function questions() {
    if (!criteria) return buttons(labels, press);
    const blocks = criteria.map((c, index) => {
      const block = document.createElement("div");
      block.className = "criterion"; block.dataset.criterion = c.name;
      block.setAttribute("role", "group"); block.setAttribute("aria-label", c.name);
      const name = line("p", "name", c.name + (c.required ? "" : " (optional)"));
      if (!c.required) name.append(" ", clearButton(c, index));
      block.append(name);
      if (c.guidelines) block.append(line("p", "guidelines", c.guidelines));
      block.append(...buttons(c.labels, (key, label) => choose(key, index, label)));
      return block;
    });
    const save = line("button", "save", "Save the card (Enter)");
    save.type = "button"; save.id = "save"; save.onclick = () => submit("Enter");
    return [...blocks, save];
  }
  // An optional criterion's Clear button, shown while it holds an answer (showAnswers): the mouse's Backspace.
  function clearButton(c, index) {
    const b = line("button", "clear", "Clear (Backspace)");
    b.type = "button"; b.hidden = true; b.setAttribute("aria-label", `Clear the answer to ${c.name}`);
    b.onclick = () => clear("Clear", index);
    return b;
  }
  // A rubric card's answers and the criterion in focus, on screen (data-answer and .focused, for tests too).
  function showAnswers() {
    if (!criteria) return;
    document.querySelectorAll("#labels .criterion").forEach((block, index) => {
      const answer = answers[criteria[index].name] || "";
      block.dataset.answer = answer; block.classList.toggle("focused", index === focus);
      const clearing = block.querySelector("button.clear");
      if (clearing) clearing.hidden = !answer;
      block.querySelectorAll("button:not(.clear)").forEach((b, i) => {
        b.setAttribute("aria-pressed", String(criteria[index].labels[i].label === answer));
      });
    });
  }
  // The first criterion from ``start`` on (wrapping around) with no answer yet; ``fallback`` when all have one.
  function unanswered(start, fallback) {
    for (let step = 0; step < criteria.length; step += 1) {
      const k = (start + step) % criteria.length;
      if (!answers[criteria[k].name]) return k;
    }
    return fallback;
  }
  // Backspace or Delete (the focused criterion) or a Clear button (its criterion, then focused): the answer
  // cleared, so the card leaves it out; a required one cannot be left out (the server refuses the card), so it
  // keeps its answer and the page says so.
  function clear(key, index) {
    if (busy) { refuse(key, BUSY); return; }
    if (!card) { refuse(key, "there is no item on the card"); return; }
    const criterion = criteria[index];
    if (criterion.required) {
      refuse(key, `${criterion.name} is required, so its answer cannot be cleared; press another of its keys to change it`);
      return;
    }
    delete answers[criterion.name]; moveFocus(index);
  }
  function moveFocus(to) { focus = Math.max(0, Math.min(criteria.length - 1, to)); showAnswers(); }
  // Criterion ``index`` answered ``label`` (its key or a click); the focus moves to the next unanswered one.
  function choose(key, index, label) {
    if (busy) { refuse(key, BUSY); return; }
    if (!card) { refuse(key, "there is no item on the card"); return; }
    answers[criteria[index].name] = label;
    focus = unanswered(index + 1, index); showAnswers();
  }
  // Enter: the whole card in one grade press, once every required criterion is answered (else the focus goes
  // to the first that is not, and the page says which).
  function submit(key) {
    const gaps = criteria.filter((c) => c.required && !answers[c.name]).map((c) => c.name);
    if (!busy && card && gaps.length) {
      moveFocus(criteria.findIndex((c) => c.name === gaps[0]));
      refuse(key, `answer ${gaps.join(", ")} first`);
      return;
    }
    press(key, {...answers});
  }
  // A press's grade in words: a label, or a rubric card's answers.
  const words = (grade) => typeof grade === "string" ? grade
    : Object.entries(grade).map(([name, label]) => `${name} ${label}`).join(", ");
  function show(answer) {
    card = answer.item;
    if (card) ({labels, criteria = null} = card);
    paint(card, card ? "ready" : "done");
    if (!card) say(answer.reason || "Nothing left to grade.");
  }
  // The server's card after a press: if it is the item painted ahead, the texts stay and it becomes pressable
  // (seen since they were painted); otherwise it replaces them.
  function take(answer, ahead) {
    if (ahead && answer.item && answer.item.item_id === ahead.item_id) {
      card = answer.item; ({labels, criteria = null} = card); $("card").dataset.state = "ready";
      return;
    }
    if (ahead) count("replaced");
    show(answer);
  }
  function address(path) {
    const url = new URL(base + path, location.href);
    if (grader) url.searchParams.set("grader", grader);
    return url;
  }
  async function call(path, body) {
    const r = await fetch(address(path), body === undefined ? {credentials: "same-origin"} : {
      method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body)});
    return [r, await r.json()];
  }
  async function load() {
    const [r, j] = await call("/next");
    if (!r.ok) { say("Not available: " + j.error.message); return; }
    show(j);
    if (card) say(`Item ${card.item_id} on the card`); // it said "Loading..." on
  }
  // A key or click: sent now; while a press is in flight a grade is refused on screen (the card on screen
  // cannot be graded before the server hands it out) and a command (S, U) is kept, carried out once the press
  // before it is answered (a skip: if the card then held is the one on screen when it was pressed;
  // ui/grading_card.js). ``grade``: a label, a rubric card's answers (criterion -> label), or undefined for a
  // skip or an undo.
  function press(key, grade) {
    if (busy && grade !== undefined) {
      refuse(key, BUSY);
    } else if (busy) {
      kept.push([key, $("card").dataset.item]); count("kept");
      notify(`${key} kept: it is carried out once the last press is answered`);
    } else if (key === "U") undo();
    else send(key, grade);
  }
  // U: the grader's last skip or grade undone (the API's undo), then the card they hold, the item it brought back.
  async function undo() {
    busy = true; count("sent"); $("card").dataset.state = "sending"; say("Undoing...");
    try {
      const [r, j] = await call("/undo", {});
      if (!r.ok) { say("Not undone: " + (j.message || j.error.message)); $("card").dataset.state = card ? "ready" : "done"; return; }
      const [n, a] = await call("/next");
      if (n.ok) show(a); else { paint(null, "done"); say("Not available: " + a.error.message); return; }
      say(j.item_id ? `${j.message} (item ${j.item_id})` : j.message);
    } catch (e) {
      say("Not undone, press again: the server did not answer"); $("card").dataset.state = card ? "ready" : "done";
    } finally { busy = false; }
  }
  // Sends a press on the card held; the item the server is expected to hand out next (``ahead``) is painted at
  // once, not pressable, while the press is saved. Not saved: the pressed card comes back.
  async function send(key, grade) {
    if (!card) { refuse(key, "there is no item on the card"); return; }
    const shown = performance.now() - shownAt;
    if (shown < 1000 * (card.min_view_s || 0)) { refuse(key, "too fast, look at the item first"); return; }
    const pressed = card, pressedAt = shownAt, ahead = card.ahead, pressedAnswers = answers;
    busy = true; card = null; count("sent");
    if (ahead) { count("ahead"); paint(ahead, "pending"); } else $("card").dataset.state = "sending";
    say(grade === undefined ? `Skipping ${pressed.item_id}...` : `Saving ${words(grade)} for ${pressed.item_id}...`);
    const body = {item_id: pressed.item_id, token: pressed.token, shown_ms: shown};
    if (grade !== undefined) body[typeof grade === "string" ? "label" : "labels"] = grade;
    let saved = false;
    // the pressed card back on screen, with its answers, when its press was not saved
    const back = () => { card = pressed; answers = pressedAnswers; answersFor = pressed.item_id; paint(pressed, "ready", pressedAt); };
    try {
      const [r, j] = await call(grade === undefined ? "/skip" : "/grades?then=next", body);
      saved = r.ok;
      if (r.ok) {
        const done = `${j.message || j.status} (item ${pressed.item_id})`;
        say(done);
        if (j.next) take(j.next, ahead);
        else {
          const [n, a] = await call("/next");
          if (n.ok) take(a, ahead); else { paint(null, "done"); say("Not available: " + a.error.message); }
        }
        if (card) say(`${done}. Now item ${card.item_id}`); // which item is on screen, to a screen reader too
      } else {
        say("Not saved: " + (j.message || j.error.message));
        back();
        if (r.status === 409) await load();
      }
    } catch (e) {
      if (saved) { paint(null, "done"); say("Saved, but the next card did not arrive: reload the page"); }
      else { say("Not saved, press again: the server did not answer"); back(); }
    } finally { busy = false; }
    const next = kept.shift();
    if (next === undefined) return;
    if (saved && next[0] === "U") {
      if (kept.length) notify(`${kept.map((k) => k[0]).join(", ")} not carried out: the undo changes the card`);
      kept = []; undo();
    }
    else if (saved && card && next[1] === card.item_id) send(next[0]);
    else {
      const why = saved ? "the card changed before it was carried out" : "the press before it was not saved";
      notify(`${[next, ...kept].map((k) => k[0]).join(", ")} not carried out: ${why}`); kept = [];
    }
  }
  $("skip").onclick = () => press("S");
  $("undo").onclick = () => press("U");
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;  // a key held down is not a second press
    if (e.key === "s" || e.key === "S") { press("S"); return; }
    if (e.key === "u" || e.key === "U") { press("U"); return; }
    const n = Number(e.key);
    if (criteria) { rubricKey(e, n); return; }
    if (n >= 1 && n <= labels.length) press(e.key, labels[n - 1].label);
  });
  // A rubric card's keys, as on the Grade page: 1..9 answer the criterion in focus with its labels in order
  // and move on, ArrowUp/ArrowDown move between criteria, Enter saves the card (a button other than the
  // card's own, or a Clear button, keeps its Enter), Backspace and Delete clear an optional criterion's answer.
  function rubricKey(e, n) {
    const step = {ArrowDown: 1, ArrowUp: -1}[e.key];
    if (step) { e.preventDefault(); moveFocus(focus + step); return; }
    if (e.key === "Enter") {
      const button = e.target instanceof HTMLButtonElement;
      if (button && (!e.target.closest("#labels") || e.target.matches(".clear"))) return;
      e.preventDefault(); submit("Enter"); return;
    }
    if (e.key === "Backspace" || e.key === "Delete") { e.preventDefault(); clear(e.key, focus); return; }
    if (!(n >= 1 && n <= 9)) return;
    const focused = criteria[focus];
    if (n <= focused.labels.length) choose(e.key, focus, focused.labels[n - 1].label);
    else refuse(e.key, `not an answer to ${focused.name} (1 to ${focused.labels.length})`);
  }
  load();
})();
</script></main></body></html>
"""


COMPARES = (
    "This project compares models: grade it on the Grade page, whose side-by-side card shows every model's response "
    "to the item. This page shows one response a card."
)


def _compares(store: Store, user: auth.User, project: str) -> bool:
    """Whether the page's ``project`` is a comparison ``user`` may see (the page's own calls answer for any other
    value, as for a project that does not exist: a security review learnt of a comparison it was not assigned)."""
    try:
        project_id = int(project)
        visible = auth.visible_projects(store, user)
        return (visible is None or project_id in visible) and store.project(project_id).settings.compares
    except (KeyError, ValueError):
        return False


def routes(store: Callable[[], Store]) -> list[Route]:
    """The page and its four calls (the API's handlers, on the sign-in cookie: core.api.http.session_token)."""

    async def page(request: Request) -> Response:
        if auth.open_demo_enabled():  # no sessions: this machine's clients only, as the open demo's user
            try:
                user = await run_in_threadpool(open_demo_user, store(), request)
            except ApiError as exc:
                return PlainTextResponse(f"Not available: {exc.message}.", exc.status)
        elif (user := await run_in_threadpool(sessions.resume, store(), session_token(request))) is None:
            return RedirectResponse("/", 303)  # sign in on the app first
        if await run_in_threadpool(_compares, store(), user, request.query_params.get("project", "")):
            return PlainTextResponse(COMPARES, 409)
        return HTMLResponse(PAGE)

    calls = (  # the cards carry the item expected after them (``ahead``), painted while a press is saved
        ("GET", "/next", functools.partial(endpoints.next_item, ahead=True), None),
        ("POST", "/grades", functools.partial(endpoints.grade, ahead=True), "json"),
        ("POST", "/skip", endpoints.skip, "json"),
        ("POST", "/undo", endpoints.undo, "json"),
    )
    declared = [
        Route(API_PATH + path, Endpoint(handler, body, store, cookie=True), methods=[method])
        for method, path, handler, body in calls
    ]
    hint = "the page calls next, grades, skip and undo"
    return [Route(PAGE_PATH, page, methods=["GET"]), *declared, *unrouted(PAGE_PATH + "/api", declared, hint)]
