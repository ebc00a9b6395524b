// The grading card (ui/grading_card.py): it owns the item on screen and every key of the grade page.
//
// - The card is built whole from one payload and swapped in with one DOM call: the id, prompt,
//   reference, image and response on screen always belong to one item.
// - A press sends the shown item's position, id and showing token, with the time since the
//   browser painted the card; the card says "sending" at once until the server's answer
//   (data.ack with the press's seq) arrives: "saved" with the next card, or "Not saved, press
//   again" on the same card.
// - No press is dropped without a sign. While a press is in flight, a grade key or S is refused on
//   screen (it would grade or skip a card not yet seen: a kept S was refused on the next card as "too
//   fast", after the card had said it was kept); a command (B, U, Q) is kept and carried out
//   in order once the answer came (or, after an answer "not saved", refused on screen). A press
//   that does nothing where it is (U with no grade, Q outside a review, a grade too soon after the
//   item appeared) says so too. The host element counts them for tests: data-ag-sent (presses
//   sent, queued ones included), data-ag-queued, data-ag-refused.
// - Keys never reach a text field: C opens the comment box, Esc returns to the card, Enter in
//   the sidebar's name field returns to the card, ? shows every key (a dialog that takes the focus).
// - The card's keys act where the focus is on the card or on no control (the body, a blank part of the page):
//   pressed on a link, a button or a table elsewhere on the page they are that element's (a grader in the list
//   of their items graded the card by typing there; WCAG 2.1.4), and Esc brings the focus back to the card. After a
//   press is answered the new card takes the focus, and a status region outside the card says what was saved
//   and which item is on screen (a region swapped in with its text already set is not read out).
// - A rubric card (data.criteria, core/rubric.py) asks every criterion at once: one criterion has the
//   keys' focus (the real focus: its group, or a button in it); its scale key answers it and moves on to the
//   next unanswered one, the arrows move between criteria, Tab and Shift+Tab go through the buttons as on any
//   page (the criterion of the button reached is the one in focus), and Enter sends the whole card as one
//   "grade" press with
//   labels {criterion: label}, once every required criterion is answered (else it says which is not).
//   Backspace or Delete clears the focused criterion's answer if it is optional, so the card leaves it out
//   (a changed card then withdraws it); a required one keeps its answer, and the card says why. An optional
//   criterion holding an answer shows a Clear button that does the same for a mouse; a plain button, so a screen
//   reader reaches it and Enter or Space on it clears (rather than saves the card), its chip naming the key.

const INSTANCES = new WeakMap();
const ANSWER_TIMEOUT_MS = 15000;
const NOTICE_MS = 4000; // how long a refused or kept press's message stays on screen
const COMMANDS = { S: "skip", B: "back", U: "undo", Q: "queue", F: "flag" };
const NAME_FIELD = 'input[aria-label^="Your name"]';
const CLEAR_KEYS = ["Backspace", "Delete"]; // a rubric card: the focused optional criterion's answer cleared
// Elements of the page that take keys of their own (ui/page_keys.py fills the list in): with the focus on one outside
// the card, the card's keys are not the grader's (a blank part of the page clicked, or the body, leaves them the
// card's). (Streamlit's main area takes the focus of a click on it, tabindex 0: a container, whose keys the card's are.)
const OWN_KEYS = AG_OWN_KEYS;
const BUSY = "the last press is not answered yet, and the next item is not on screen; press again once it is";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "html") node.innerHTML = value; // server-rendered, inert (core/inputs/markup.py)
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function isTextField(target) {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

function keyList(data) {
  const keys = data.criteria
    ? data.criteria
        .map((c) => [c.choices.map((ch) => ch.key).join(" "), `${c.name}: ${c.choices.map((ch) => ch.label).join(", ")}`])
        .concat([
          ["↑ ↓", "move between criteria (Tab goes through the buttons)"],
          ["Enter", "save the card (every required criterion answered)"],
        ])
        .concat(data.criteria.some((c) => !c.required) ? [["Backspace Delete", "clear the focused criterion's answer (optional criteria only; or its Clear button)"]] : [])
    : data.choices.map((c) => [c.key, c.label]);
  return keys.concat([
    [data.criteria ? "PageDown PageUp Space Home End" : "↓ ↑ PageDown PageUp Space Home End", "scroll a long response"],
    ["Shift+↓ Shift+↑ Shift+PageDown Shift+PageUp", "scroll a long prompt"],
    ["S", "skip the item"],
    ["B", "back to my previous grade"],
    ["U", "undo my last skip or grade"],
    ["Q", "back to the queue (when reviewing)"],
    ["F", "flag the item for a reviewer (the comment box's text goes with it)"],
    ["C", "comment (Esc returns to the card)"],
    ["Esc", "back to the card, from anywhere on the page (the keys act only there)"],
    ["?", "show or hide this list"],
  ]);
}

// A button showing its label and its key's chip (a Likert label is its own key: "4 [4]"); a click does ``onClick``.
function keyButton(label, key, attrs, onClick) {
  const node = el("button", { type: "button", class: "ag-button", "aria-keyshortcuts": key, ...attrs }, el("span", { text: label }), el("kbd", { text: key }));
  node.addEventListener("click", onClick);
  return node;
}

function button(inst, label, key, action, extra = {}, fields = {}) {
  return keyButton(label, key, { "data-ag-action": action, ...extra }, () => press(inst, key, action, fields));
}

// A rubric card's questions: every criterion with its guidelines and choices, then the button that saves the card.
function criteriaPart(inst, data) {
  const part = el("div", { class: "ag-criteria" });
  data.criteria.forEach((criterion, index) => {
    const title = el("div", { class: "ag-label" }, el("span", { text: criterion.name }), criterion.required ? null : el("span", { class: "ag-optional", title: "Backspace or Delete clears its answer", text: " (optional)" }));
    if (!criterion.required) title.append(clearButton(inst, criterion, index));
    const block = el("div", { class: "ag-criterion", role: "group", tabindex: "-1", "aria-label": criterion.name, "data-ag-criterion": criterion.name }, title);
    if (criterion.guidelines_html) block.append(el("div", { class: "ag-guidelines", html: criterion.guidelines_html }));
    const choices = el("div", { class: "ag-choices" });
    for (const choice of criterion.choices) {
      choices.append(keyButton(choice.label, choice.key, { "data-ag-label": choice.label }, () => choose(inst, choice.key, index, choice.label)));
    }
    block.append(choices);
    part.append(block);
  });
  part.append(keyButton("Save the card", "Enter", { class: "ag-button ag-submit", "data-ag-action": "grade" }, () => submitCard(inst, "Enter")));
  return part;
}

// An optional criterion's Clear button, shown while it holds an answer (paintRubric): the mouse's Backspace.
function clearButton(inst, criterion, index) {
  const attrs = { class: "ag-button ag-clear", "aria-label": `Clear the answer to ${criterion.name}`, "data-ag-clear": criterion.name, hidden: true };
  return keyButton("Clear", "Backspace", attrs, () => {
    clearAnswer(inst, "Clear", index); // the button is hidden now: the focus goes to its criterion (moveFocus)
  });
}

function reviewWords(data) {
  const card = data.card;
  if (!data.criteria) return `Reviewing your earlier grade: ${card.previous_label || "none"}. Press a grade to change it, C to comment, Q to go back to the queue.`;
  const answers = data.criteria.filter((c) => card.previous_labels && card.previous_labels[c.name]).map((c) => `${c.name} ${card.previous_labels[c.name]}`);
  return `Reviewing your earlier card: ${answers.join(", ") || "none"}. Change any answer and press Enter to save it, C to comment, Q to go back to the queue.`;
}

function buildCard(inst, data) {
  const card = data.card;
  const root = el("div", {
    class: "ag-card",
    tabindex: "-1",
    role: "region",
    "aria-label": card ? `Item ${card.item_id}` : "Grading card",
    "data-ag-state": "ready",
    "data-ag-token": card ? card.token : "",
    "data-ag-item": card ? card.item_id : "",
  });
  const head = el(
    "div",
    { class: "ag-head" },
    el("span", { class: "ag-id", "data-testid": "ag-item-id", text: card ? `Item ${card.item_id}` : "" }),
    el("span", { class: "ag-progress", text: data.progress }),
    el("span", { class: "ag-status" }), // read out by the persistent status region (announce), not from here
  );
  root.append(head);
  if (!card) {
    root.append(el("div", { class: `ag-empty ag-${data.empty.kind}`, text: data.empty.text }));
    const back = button(inst, "Back to my previous grade", "B", "back", data.can_back ? {} : { disabled: true });
    const undo = button(inst, "Undo my last skip or grade", "U", "undo", data.can_undo ? {} : { disabled: true });
    root.append(el("div", { class: "ag-actions" }, back, undo));
    return root;
  }
  if (card.reviewing) {
    root.append(
      el("div", { class: "ag-banner", text: reviewWords(data) }),
    );
  }
  const main = el("div", { class: "ag-main" });
  main.append(heading("Prompt"), el("div", { class: "ag-text ag-prompt", role: "region", tabindex: "0", "aria-label": "Prompt", html: card.prompt_html }));
  if (card.image) main.append(el("img", { class: "ag-image", src: card.image, alt: "the item's image", referrerpolicy: "no-referrer" }));
  else if (card.image_note) main.append(el("div", { class: "ag-note", text: card.image_note }));
  if (card.reference_html !== null) {
    main.append(
      el("details", { class: "ag-reference", open: true }, el("summary", { text: "Reference answer" }), el("div", { class: "ag-text", html: card.reference_html })),
    );
  }
  main.append(
    heading("Response to grade"),
    el("div", { class: "ag-text ag-response", role: "region", tabindex: "0", "aria-label": "Response to grade", html: card.response_html }),
  );
  if (card.signals) main.append(el("div", { class: "ag-note", text: `Surrogate signals: ${card.signals}` }));

  const side = el("div", { class: "ag-side" }, heading(data.criteria ? "Your grades" : "Your grade"));
  if (data.criteria) side.append(criteriaPart(inst, data));
  else {
    for (const choice of data.choices) {
      const b = button(inst, choice.label, choice.key, "grade", { "data-ag-label": choice.label }, { label: choice.label });
      if (card.previous_label === choice.label) b.classList.add("ag-chosen");
      side.append(b);
    }
  }
  const box = el("textarea", { class: "ag-comment-text", rows: "3", "aria-label": "Comment", placeholder: "optional", maxlength: data.max_comment_chars ? String(data.max_comment_chars) : null });
  box.value = card.previous_comment || "";
  const comment = el("details", { class: "ag-comment" }, el("summary", {}, el("span", { text: "Comment " }), el("kbd", { text: "C" })), box);
  if (card.reviewing) {
    const save = el("button", { type: "button", class: "ag-button ag-small", "data-ag-action": "comment", text: "Save comment (Ctrl+Enter)" });
    save.addEventListener("click", () => press(inst, "Ctrl+Enter", "comment"));
    comment.append(save);
  }
  side.append(comment);
  side.append(button(inst, "Skip", "S", "skip", card.reviewing ? { disabled: true } : {}));
  side.append(button(inst, "Flag for review", "F", "flag"));
  side.append(button(inst, "Back to my previous grade", "B", "back", data.can_back ? {} : { disabled: true }));
  side.append(button(inst, "Undo my last skip or grade", "U", "undo", data.can_undo ? {} : { disabled: true }));
  if (card.reviewing) side.append(button(inst, "Back to the queue", "Q", "queue"));
  const help = el("button", { type: "button", class: "ag-link ag-help-button", "aria-haspopup": "dialog", "aria-expanded": "false", "aria-keyshortcuts": "?", text: "All keys (?)" });
  help.addEventListener("click", () => toggleHelp(inst, undefined, help));
  side.append(help);
  root.append(el("div", { class: data.criteria ? "ag-body ag-rubric" : "ag-body" }, main, side));

  const list = el("dl", { class: "ag-keys" });
  for (const [key, what] of keyList(data)) list.append(el("dt", {}, el("kbd", { text: key })), el("dd", { text: what }));
  const close = el("button", { type: "button", class: "ag-link ag-help-close", text: "Close (Esc)" });
  close.addEventListener("click", () => toggleHelp(inst, false));
  root.append(el("div", { class: "ag-help", hidden: true, role: "dialog", tabindex: "-1", "aria-label": "Keys" }, el("div", { class: "ag-label", text: "Keys (Esc or ? closes)" }), list, close));
  return root;
}

// A part's title: a heading to assistive technology (jump by heading to "Response to grade"), styled as a label.
function heading(text) {
  return el("div", { class: "ag-label", role: "heading", "aria-level": "2", text }); // under the page's h1
}

// Say ``text`` in the status region that outlives the card's swaps; emptied first, so the same words are said again.
function announce(inst, text) {
  inst.announcer.textContent = "";
  if (text) setTimeout(() => { inst.announcer.textContent = text; }, 50);
}

function setStatus(inst, state, text) {
  if (!inst.root) return;
  inst.root.dataset.agState = state;
  inst.root.querySelector(".ag-status").textContent = text;
  inst.root.querySelectorAll(".ag-button").forEach((b) => b.classList.toggle("ag-busy", state === "sending"));
}

function focusCard(inst) {
  if (inst.root && inst.root.isConnected) inst.root.focus({ preventScroll: true });
}

// The open demo's name field still has the focus when the first card comes: keys pressed meanwhile (grades meant for
// the card) went into it, and the card taking the focus would commit them as a new name ("annYNY", its grades under
// it). The field gets back the name the card is for first, by the input's own value setter and an input event, so
// that Streamlit's widget holds it too; true when there was text to drop.
function restoreName(field, name) {
  if (typeof name !== "string" || field.value === name) return false;
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(field, name);
  field.dispatchEvent(new Event("input", { bubbles: true }));
  return true;
}

// Show or hide the key list (``show`` undefined: toggle); ``opener``: the button clicked to open it, which has the
// focus back when it closes (else the card).
function toggleHelp(inst, show, opener = null) {
  const help = inst.root && inst.root.querySelector(".ag-help");
  if (!help) return;
  help.hidden = show === undefined ? !help.hidden : !show;
  inst.root.querySelector(".ag-help-button").setAttribute("aria-expanded", String(!help.hidden));
  if (!help.hidden) {
    inst.helpOpener = opener;
    help.focus({ preventScroll: true }); // read out, and Esc closes it from there
  } else if (inst.helpOpener && inst.helpOpener.isConnected) inst.helpOpener.focus({ preventScroll: true });
  else focusCard(inst);
}

function count(inst, what) {
  inst.counts[what] += 1;
  inst.host.dataset[`ag${what[0].toUpperCase()}${what.slice(1)}`] = String(inst.counts[what]);
}

function notify(inst, text) {
  inst.notice.textContent = text;
  inst.notice.hidden = false;
  clearTimeout(inst.noticeTimer);
  inst.noticeTimer = setTimeout(() => dismiss(inst), NOTICE_MS);
}

// The notice taken off the screen: its time is up, or an answer on the rubric card has made it stale ("Enter not
// taken: no answer yet for clarity" stayed up after clarity was answered).
function dismiss(inst) {
  clearTimeout(inst.noticeTimer);
  inst.notice.hidden = true;
  inst.notice.textContent = "";
}

function refuse(inst, key, why) {
  count(inst, "refused");
  notify(inst, `${key} not taken: ${why}`);
}

// Why ``action`` cannot be sent for the card on screen now, or null when it can.
function obstacle(inst, action) {
  const card = inst.data && inst.data.card;
  if (action === "grade" || action === "skip" || action === "comment" || action === "queue" || action === "flag") {
    if (!card) return "there is no item on the card";
  }
  const gaps = action === "grade" && inst.data.criteria ? missing(inst) : [];
  if (gaps.length) return `no answer yet for ${gaps.join(", ")}`;
  const shownMs = inst.shownAt === null ? 0 : performance.now() - inst.shownAt;
  if ((action === "grade" || action === "skip") && shownMs < inst.data.min_view_ms) return "too fast, read the item first";
  if (action === "skip" && card.reviewing) return "an item you graded cannot be skipped (U undoes, a grade changes it)";
  const left = leaving(inst, action);
  if (left) return left;
  if (action === "back" && !inst.data.can_back) return "you have no grade yet";
  if (action === "undo" && !inst.data.can_undo) return "nothing to undo yet: you have no grade or skip";
  if ((action === "queue" || action === "comment") && !card.reviewing) return action === "queue" ? "you are in the queue already" : "grade the item first; the comment is saved with the grade";
  return null;
}

// Whether ``key`` (upper case) answers the card on screen: one of its scale's keys, or of a rubric criterion's.
function cardKey(inst, key) {
  const scales = inst.data.criteria ? inst.data.criteria.map((c) => c.choices) : [inst.data.choices || []];
  return scales.some((choices) => choices.some((c) => c.key.toUpperCase() === key));
}

// A rubric card's answers not saved yet, by name: those that differ from the card's saved ones (none on a new card).
function unsaved(inst) {
  const saved = (inst.data.card && inst.data.card.previous_labels) || {};
  return inst.data.criteria.filter((c) => (inst.answers[c.name] || null) !== (saved[c.name] || null)).map((c) => c.name);
}

// Why a press that leaves a rubric card (U, B, Q, S) waits for a second press: the answers given on it are not saved,
// and leaving drops them (U dropped two answers without a word: a grader's review). The same key again within the
// notice's time leaves them; null where nothing would be lost, or on that second press.
function leaving(inst, action) {
  if (!inst.data.criteria || !["undo", "back", "queue", "skip"].includes(action)) return null;
  const names = unsaved(inst);
  const asked = inst.leaveAsked;
  inst.leaveAsked = null;
  if (!names.length || (asked && asked.action === action && performance.now() - asked.at < NOTICE_MS)) return null;
  inst.leaveAsked = { action, at: performance.now() };
  return `your answers to ${names.join(", ")} are not saved: press it again to leave them, or Enter to save them`;
}

// A key or click: sent now, kept until the press in flight is answered (a command), or refused on screen.
// ``fields`` go with the press: a grade's label, or a rubric card's labels.
function press(inst, key, action, fields = {}) {
  if (inst.pending !== null) {
    if (action === "grade" || action === "skip" || action === "comment" || action === "flag") {
      refuse(inst, key, BUSY);
    } else {
      inst.queue.push({ key, action });
      count(inst, "queued");
      notify(inst, `${key} kept: it is carried out once the last press is answered`);
    }
    return;
  }
  const why = obstacle(inst, action);
  if (why) refuse(inst, key, why);
  else dispatch(inst, action, fields);
}

// The required criteria of a rubric card with no answer yet, by name.
function missing(inst) {
  return inst.data.criteria.filter((c) => c.required && !inst.answers[c.name]).map((c) => c.name);
}

// The first criterion from ``start`` on (wrapping around) with no answer yet; ``fallback`` when all have one.
function unanswered(inst, start, fallback) {
  const criteria = inst.data.criteria;
  for (let step = 0; step < criteria.length; step += 1) {
    const k = (start + step) % criteria.length;
    if (!inst.answers[criteria[k].name]) return k;
  }
  return fallback;
}

// Show a rubric card's answers and the criterion in focus (classes, aria-current and data-ag-answer, for tests).
// ``follow``: a key moved the criterion in focus, so the real focus goes to its group where it was on the card,
// the page or a criterion (not where a Tab took it: the criterion follows the focus then, `onFocusIn`).
function paintRubric(inst, follow = false) {
  const criteria = inst.data.criteria;
  if (!criteria || !inst.root) return;
  inst.root.querySelectorAll(".ag-criterion").forEach((block, index) => {
    const answer = inst.answers[criteria[index].name] || "";
    block.classList.toggle("ag-focused", index === inst.focus);
    if (index === inst.focus) block.setAttribute("aria-current", "true");
    else block.removeAttribute("aria-current");
    block.dataset.agAnswer = answer;
    const clear = block.querySelector(".ag-clear");
    if (clear) clear.hidden = !answer;
    block.querySelectorAll(".ag-choices .ag-button").forEach((b) => {
      b.classList.toggle("ag-chosen", b.dataset.agLabel === answer);
      b.setAttribute("aria-pressed", String(b.dataset.agLabel === answer));
    });
  });
  const submit = inst.root.querySelector(".ag-submit");
  if (submit) submit.classList.toggle("ag-ready", missing(inst).length === 0);
  const active = document.activeElement;
  const onCriteria = active === document.body || active === inst.root || (active instanceof Element && active.closest(".ag-criterion") && inst.root.contains(active));
  const block = inst.root.querySelectorAll(".ag-criterion")[inst.focus];
  if (follow && onCriteria && block && active !== block) block.focus({ preventScroll: true });
}

// The real focus reached a criterion's group or button (a Tab, a click): that criterion has the keys' focus.
function onFocusIn(inst, event) {
  const block = inst.root && inst.data && inst.data.criteria && event.target instanceof Element && event.target.closest(".ag-criterion");
  if (!block || !inst.root.contains(block)) return;
  const index = [...inst.root.querySelectorAll(".ag-criterion")].indexOf(block);
  if (index >= 0 && index !== inst.focus) {
    inst.focus = index;
    paintRubric(inst);
  }
}

// A fresh rubric card: the grader's earlier answers when reviewing, the focus on the first unanswered criterion.
function startAnswers(inst) {
  const card = inst.data.card;
  inst.answers = { ...((card && card.previous_labels) || {}) };
  inst.leaveAsked = null; // a second press to leave counts on the card it was asked on
  inst.focus = inst.data.criteria ? unanswered(inst, 0, 0) : 0;
  paintRubric(inst);
}

// Answer criterion ``index`` with ``label`` (by its ``key`` or a click), and move to the next unanswered one.
function choose(inst, key, index, label) {
  if (inst.pending !== null) return refuse(inst, key, BUSY);
  if (!inst.data.card) return refuse(inst, key, "there is no item on the card");
  inst.answers[inst.data.criteria[index].name] = label;
  dismiss(inst);
  inst.focus = unanswered(inst, index + 1, index);
  paintRubric(inst, true);
  const next = missing(inst).length ? `; now ${inst.data.criteria[inst.focus].name}` : "; every required criterion answered, Enter saves the card";
  announce(inst, `${inst.data.criteria[index].name}: ${label}${next}`);
}

// Backspace or Delete (the focused criterion) or a Clear button (its criterion, then focused): the answer
// cleared, so the card leaves it out; a required criterion cannot be left out (core.rubric refuses the card),
// so it keeps its answer and the card says so.
function clearAnswer(inst, key, index) {
  if (inst.pending !== null) return refuse(inst, key, BUSY);
  const criterion = inst.data.criteria[index];
  if (criterion.required) return refuse(inst, key, `${criterion.name} is required, so its answer cannot be cleared; press another of its keys to change it`);
  delete inst.answers[criterion.name];
  dismiss(inst);
  moveFocus(inst, index);
}

function moveFocus(inst, to) {
  inst.focus = to;
  paintRubric(inst, true);
}

// Send the whole rubric card; with a required criterion unanswered, the focus goes to it (and press says so).
function submitCard(inst, key) {
  const gaps = missing(inst);
  if (gaps.length && inst.pending === null) moveFocus(inst, inst.data.criteria.findIndex((c) => c.name === gaps[0]));
  press(inst, key, "grade", { labels: { ...inst.answers } });
}

// A key of a rubric card (the focus on the card or the page, `onKey`): true once handled (a scale key of the
// criterion in focus, a move between criteria, Enter, a clear), false for the others (the commands).
function rubricKey(inst, event, key) {
  const criteria = inst.data.criteria;
  const target = event.target;
  const step = { ArrowDown: 1, ArrowUp: -1 }[event.key];
  if (step && !event.shiftKey && inst.data.card) {
    const to = inst.focus + step;
    if (to >= 0 && to < criteria.length) moveFocus(inst, to);
    event.preventDefault();
    return true;
  }
  const command = target instanceof HTMLButtonElement && (!target.closest(".ag-criteria") || target.matches(".ag-clear")); // Enter clicks it
  if (event.key === "Enter" && inst.data.card && !command) {
    event.preventDefault();
    if (!event.repeat) submitCard(inst, "Enter");
    return true;
  }
  if (CLEAR_KEYS.includes(event.key) && inst.data.card) {
    event.preventDefault();
    if (!event.repeat) clearAnswer(inst, event.key, inst.focus);
    return true;
  }
  const focused = criteria[inst.focus];
  const choice = focused.choices.find((c) => c.key.toUpperCase() === key);
  const elsewhere = criteria.find((c) => c.choices.some((ch) => ch.key.toUpperCase() === key));
  if (!choice && (!elsewhere || COMMANDS[key] || key === "C")) return false;
  event.preventDefault();
  event.stopPropagation();
  if (event.repeat) return true; // a key held down is not a second judgement
  if (choice) choose(inst, key, inst.focus, choice.label);
  else {
    const keys = focused.choices.map((c) => (c.key === c.label ? c.key : `${c.key} ${c.label}`)).join(", ");
    refuse(inst, key, `not an answer to ${focused.name} (${keys}); ↑ ↓ move to ${elsewhere.name}`);
  }
  return true;
}

// The commands kept while a press was in flight, in order, each once the one before it was answered.
function runQueue(inst) {
  while (inst.pending === null && inst.queue.length) {
    const { key, action } = inst.queue.shift();
    const why = obstacle(inst, action);
    if (why) refuse(inst, key, why);
    else dispatch(inst, action);
  }
}

function dropQueue(inst, why) {
  if (!inst.queue.length) return;
  const keys = inst.queue.map((q) => q.key).join(", ");
  inst.queue.forEach(() => count(inst, "refused"));
  inst.queue = [];
  notify(inst, `${keys} not carried out: ${why}`);
}

function dispatch(inst, action, fields = {}) {
  const card = inst.data.card;
  const shownMs = inst.shownAt === null ? 0 : performance.now() - inst.shownAt;
  const text = inst.root.querySelector(".ag-comment-text");
  inst.seq += 1;
  inst.pending = inst.seq;
  count(inst, "sent");
  setStatus(inst, "sending", "sending…");
  inst.timer = setTimeout(() => {
    if (inst.pending === null) return;
    inst.pending = null;
    setStatus(inst, "error", "Not saved, press again: no answer from the server");
    dropQueue(inst, "the press before them had no answer");
  }, ANSWER_TIMEOUT_MS);
  inst.send("action", {
    seq: inst.seq,
    action,
    label: null,
    labels: null,
    ...fields,
    token: card ? card.token : null,
    position: card ? card.position : null,
    item_id: card ? card.item_id : null,
    shown_ms: Math.round(shownMs),
    comment: text ? text.value : "",
  });
}

// The response scrolls in its own box, which the card's focus does not reach: these keys scroll it from the card as
// they would a page, by a line, by most of the box, or to an end (Shift+Space back up); at that end already, the
// page scrolls as usual. On a rubric card the arrows move between criteria instead. With Shift, the arrows and
// PageDown/PageUp scroll the prompt's box (a long prompt could be read only with the mouse: grader's review).
const PROMPT_KEYS = new Set(["ArrowDown", "ArrowUp", "PageDown", "PageUp"]);
function scrollResponse(inst, event) {
  const prompt = event.shiftKey && PROMPT_KEYS.has(event.key);
  const box = inst.root.querySelector(prompt ? ".ag-prompt" : ".ag-response");
  if (!box || (!prompt && inst.data.criteria && (event.key === "ArrowDown" || event.key === "ArrowUp"))) return false;
  const page = 0.9 * box.clientHeight;
  const by = { ArrowDown: 40, ArrowUp: -40, PageDown: page, PageUp: -page, " ": event.shiftKey ? -page : page,
    Home: -box.scrollHeight, End: box.scrollHeight }[event.key];
  if (by === undefined) return false;
  const edges = box.getBoundingClientRect();
  const visible = Math.min(edges.bottom, window.innerHeight) - Math.max(edges.top, 0);
  if (visible < Math.min(box.clientHeight, window.innerHeight) / 3) { // mostly out of the window: the box first
    event.preventDefault(); // (at 1024 x 700 it showed one line under the fold, and the keys scrolled it unseen)
    box.scrollIntoView({ block: "nearest" });
    return true;
  }
  const to = Math.min(Math.max(box.scrollTop + by, 0), Math.max(box.scrollHeight - box.clientHeight, 0));
  if (Math.abs(to - box.scrollTop) < 1) return false;
  event.preventDefault();
  box.scrollTop = to;
  return true;
}

function onKey(inst, event) {
  if (!inst.root || !inst.root.isConnected || !inst.data) return;
  const target = event.target;
  if (target instanceof HTMLElement && target.matches(NAME_FIELD)) {
    if (event.key === "Enter" || event.key === "Escape") setTimeout(() => focusCard(inst), 0); // back to the card
    return;
  }
  const inComment = target instanceof HTMLElement && target.classList.contains("ag-comment-text");
  if (inComment) {
    if (event.key === "Escape") {
      event.preventDefault();
      focusCard(inst);
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      press(inst, "Ctrl+Enter", "comment");
      focusCard(inst); // the next key is the card's again, saved or not (Q back to the queue, B further back)
    }
    return;
  }
  if (event.key === "Escape" && isTextField(target) && !inst.host.contains(target) && !target.closest('[aria-expanded="true"]')) {
    focusCard(inst); // from a field of the page (the list's search, the sidebar's), as the key list says
    return;
  }
  if (isTextField(target) || event.ctrlKey || event.metaKey || event.altKey) return;
  const elsewhere = target instanceof Element && !inst.host.contains(target) && target.closest(OWN_KEYS);
  if (elsewhere) { // another element's keys (a link, a button, the list's table): Esc alone brings the card back
    if (event.key === "Escape" && !target.closest('[role="dialog"], [aria-modal="true"]')) {
      event.preventDefault();
      focusCard(inst);
    }
    return;
  }
  const native = target instanceof HTMLElement && target.closest(".ag-response, .ag-prompt, button, summary");
  if (!native && scrollResponse(inst, event)) return;
  const help = inst.root.querySelector(".ag-help");
  if (event.key === "?" || (event.key === "Escape" && help && !help.hidden)) {
    event.preventDefault();
    toggleHelp(inst, event.key === "?" ? undefined : false);
    return;
  }
  if (help && !help.hidden) { // the list is over the item: no key grades what it hides, and Tab stays in it
    const shown = event.key.length === 1 ? event.key.toUpperCase() : "";
    if (event.key === "Tab") {
      event.preventDefault();
      help.querySelector(".ag-help-close").focus();
    } else if (shown && (COMMANDS[shown] || shown === "C" || cardKey(inst, shown))) {
      refuse(inst, shown, "the list of keys is over the item: ? or Esc closes it"); // it said nothing: a grader's review
    }
    return;
  }
  const key = event.key.length === 1 ? event.key.toUpperCase() : "";
  if (inst.data.criteria && rubricKey(inst, event, key)) return;
  const choice = inst.data.criteria ? null : inst.data.choices.find((c) => c.key.toUpperCase() === key);
  if (!choice && !COMMANDS[key] && key !== "C") return;
  event.preventDefault();
  event.stopPropagation();
  if (key === "C" && !choice) {
    const box = inst.root.querySelector(".ag-comment");
    if (box) {
      box.open = true;
      box.querySelector("textarea").focus();
    }
    return;
  }
  if (event.repeat) return; // a key held down is not a second judgement
  press(inst, key, choice ? "grade" : COMMANDS[key], choice ? { label: choice.label } : {});
}

function update(inst, data) {
  inst.data = data;
  const ack = data.ack;
  const answered = inst.pending !== null && ack && ack.seq === inst.pending ? ack : null;
  if (answered) {
    inst.pending = null;
    clearTimeout(inst.timer);
  }
  const token = data.card ? data.card.token : `empty:${data.empty.kind}:${data.progress}`;
  const fresh = token !== inst.token;
  if (fresh) {
    // the page's first card takes the focus, wherever it was (the sidebar's link to this page, clicked, kept
    // it: the keys would have been the link's), unless the grader is typing
    const opened = inst.root === null && !isTextField(document.activeElement);
    const hadFocus = opened || (inst.root && inst.root.contains(document.activeElement));
    const root = buildCard(inst, data);
    inst.host.replaceChildren(root); // one swap: never a mix of two items
    inst.root = root;
    inst.token = token;
    startAnswers(inst);
    inst.shownAt = null;
    requestAnimationFrame(() => {
      if (inst.root !== root) return;
      inst.shownAt = performance.now(); // the frame that paints this item: the viewing time starts here
      root.dataset.agShownAt = String(inst.shownAt);
    });
    const active = document.activeElement;
    const inName = active instanceof HTMLElement && active.matches(NAME_FIELD);
    if (inName && restoreName(active, data.grader)) notify(inst, `Keys pressed before the card came went into your name, not onto an item: nothing was graded with them, and you grade as ${data.grader}.`);
    if (hadFocus || inName || answered || (data.card && data.card.reviewing)) focusCard(inst); // where keys act
    // an earlier item opened from the list below the card (or by B): the card scrolled into view, where the page
    // had stayed at the list with the item's id and the "Reviewing" note off screen
    if (data.card && data.card.reviewing) requestAnimationFrame(() => {
      const top = root.getBoundingClientRect().top;
      if (root.isConnected && (top < 0 || top > window.innerHeight * 0.5)) root.scrollIntoView({ block: "start" });
    });
  } else {
    inst.root.querySelector(".ag-progress").textContent = data.progress;
  }
  if (inst.pending !== null) return; // still waiting for this card's answer
  if (answered) setStatus(inst, answered.status === "error" ? "error" : answered.status === "saved" || answered.status === "changed" ? "saved" : "note", answered.message);
  else if (fresh) setStatus(inst, "ready", data.flash || "");
  if (answered || fresh) {
    const reviewing = data.card && data.card.reviewing ? ` ${reviewWords(data)}` : "";
    const now = fresh ? (data.card ? `Now item ${data.card.item_id}, ${data.progress}.${reviewing}` : data.empty.text) : "";
    announce(inst, [answered ? answered.message : data.flash, now].filter(Boolean).join(". "));
  }
  if (!answered || !inst.queue.length) return;
  if (answered.status === "error") dropQueue(inst, "the press before them was not saved");
  else setTimeout(() => runQueue(inst), 0); // after this answer is on screen: the next press is a new message
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    const host = el("div", { class: "ag-host" }); // our own node: the component's <style> stays in place
    const notice = el("div", { class: "ag-notice", role: "alert", hidden: true }); // outlives a card swap
    const announcer = el("div", { class: "ag-announcer", role: "status", "aria-live": "polite" }); // so does this
    parentElement.append(host, notice, announcer);
    inst = { host, notice, announcer, root: null, token: null, data: null, pending: null, seq: 0, shownAt: null, timer: null, answers: {}, focus: 0 };
    Object.assign(inst, { queue: [], noticeTimer: null, counts: { sent: 0, queued: 0, refused: 0 } });
    inst.onKey = (event) => onKey(inst, event);
    host.addEventListener("focusin", (event) => onFocusIn(inst, event));
    inst.cleanup = () => window.removeEventListener("keydown", inst.onKey, true);
    window.addEventListener("keydown", inst.onKey, true);
    INSTANCES.set(parentElement, inst);
  }
  inst.send = setTriggerValue;
  update(inst, data);
  return inst.cleanup;
}
