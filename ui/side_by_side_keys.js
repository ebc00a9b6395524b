// The side-by-side card's keys (ui/side_by_side_card.py puts this script on the page with window.agSbsKeys, the
// scale's keys -> labels): a scale key grades the first response without a grade yet, the next key the next one;
// Enter submits the card, S skips it, F flags it for a reviewer (the comment box's text going with it), U undoes the
// last card or skip, B goes back to an earlier card and Q returns to the queue from one; ? shows every key until ? or
// Esc. A key with nothing to do on the screen says so, as the one-response card's do. Left and Right choose the
// response the next scale key grades (outlined), so a grade given is changed from the keyboard too, as a rubric
// card's Up and Down choose its criterion. Keys typed into a text field are the field's; the keys act only where the
// card's marker (#ag-sbs-card) is on the page, and not while the focus is on a control that is not the card's own (a
// link, the reference's expander, the sidebar's widgets: a letter typed there graded the card, as an accessibility
// review found), from where Esc brings the focus back to the page; Enter on a focused button or link is that
// button's, and Left / Right on a focused grade are the radio buttons' own. What a rerun has not yet redrawn
// (Streamlit's stale elements) is not acted on: a key pressed while a slow rerun still showed the queue's Undo button
// clicked that stale button on an earlier card, and nothing was said. A key that grades, submits, skips or flags
// while a button's rerun has not drawn the next card is not taken, and says so (`busy`).
(() => { // each drawing of the card: what its marker says, read out from a status region that outlives the reruns
  const said = document.getElementById("ag-sbs-card")?.dataset.said;
  let live = document.getElementById("ag-sbs-live");
  if (!live) {
    live = document.createElement("div");
    live.id = "ag-sbs-live";
    live.setAttribute("role", "status");
    live.style.cssText = "position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap";
    document.body.appendChild(live);
  }
  if (said && live.dataset.said !== said) { // emptied first: a region whose text is set as it appears is not read
    live.dataset.said = said;
    live.textContent = "";
    setTimeout(() => { live.textContent = said; }, 50);
  }
})();
(() => {
  if (window.agSbsListening) return; // one listener for the page, however many times the card is drawn
  window.agSbsListening = true;
  const current = (selector) => [...document.querySelectorAll(selector)].filter((e) => !e.closest('[data-stale="true"]'));
  const sides = () =>
    current('[data-testid="stRadio"]').filter((r) =>
      (r.querySelector('[data-testid="stWidgetLabel"]')?.innerText || "").startsWith("Grade of Response"));
  const chosen = (side) => side.querySelector('input[type="radio"]:checked');
  const option = (side, label) => [...side.querySelectorAll("label")].find((l) => l.innerText.trim() === label);
  const unsay = () => { clearTimeout(window.agSbsNoteTimer); document.getElementById("ag-sbs-note")?.remove(); };
  // a short note at the foot of the window, read out by screen readers: for 4 s, or, ``lasting`` (the list of
  // keys, too long to read in 4 s), until ? or Esc takes it down
  const say = (text, lasting = false) => {
    let note = document.getElementById("ag-sbs-note");
    if (!note) {
      note = document.createElement("div");
      note.id = "ag-sbs-note";
      note.setAttribute("role", "status");
      note.style.cssText = "position:fixed;left:50%;bottom:1.5rem;transform:translateX(-50%);z-index:1000;" +
        "max-width:40rem;padding:.5rem .9rem;border-radius:.5rem;background:#31333f;color:#fff;font-size:.9rem";
      document.body.appendChild(note);
    }
    note.textContent = text;
    note.dataset.lasting = lasting ? "1" : "";
    clearTimeout(window.agSbsNoteTimer);
    if (!lasting) window.agSbsNoteTimer = setTimeout(unsay, 4000);
  };
  const CONTROLS = AG_OWN_KEYS; // the page's own keyed elements (ui/page_keys.py fills the list in)
  let chosenSide = null; // the response Left / Right chose for the next scale key (null: the first ungraded)
  const mark = (all, index) => all.forEach((side, i) => { side.style.outline = i === index ? "2px solid #1c83e1" : ""; });
  const buttons = { Enter: "Submit", s: "Skip", f: "Flag", u: "Undo", b: "Back", q: "Return" };
  const none = { // what a key says where its button is not on the screen
    Submit: "no card to submit", Skip: "an earlier card is changed, not skipped", Flag: "no card to flag",
    Undo: "on an earlier card, submit it or return to the queue (Q) first", Back: "no earlier card to go back to",
    Return: "this is the queue's card already",
  };
  // a button press reruns the page to another card (or the same one with the press's outcome): until the rerun has
  // drawn it (its marker says something else) a key that grades, submits, skips or flags a card has no card on
  // screen to act on and is not taken, as on the one-response card (typed ahead, half of them went to the card just
  // submitted, and the key said "every response has its grade": a grader's review); 5 s at most
  const BUSY = "not taken: the last press is not answered yet, and the next card is not on screen; press again once it is";
  const drawnSaid = () => current("#ag-sbs-card")[0]?.dataset.said;
  let sent = null; // {said, at}: what the marker said when a button was pressed, and when
  const busy = () => sent !== null && Date.now() - sent.at < 5000 && [undefined, sent.said].includes(drawnSaid());
  const AWAIT_CARD = new Set(["Submit", "Skip", "Flag"]); // U, B and Q act on the history: they wait for the button
  // the button named ``press`` clicked once the rerun under way has drawn it: while only a stale one is on the page
  // the key waits (every 50 ms, ``tries`` times) rather than say there is none (B pressed as Q's rerun redrew the
  // queue's card said "no earlier card" in CI); with none at all, drawn or stale, it says so at once
  const pressWhenDrawn = (press, shown, tries) => {
    const button = current("button").find((b) => b.innerText.trim().startsWith(press));
    if (button && !button.disabled) {
      sent = { said: drawnSaid(), at: Date.now() };
      return button.click();
    }
    const stale = [...document.querySelectorAll('[data-stale="true"] button')].some((b) => b.innerText.trim().startsWith(press));
    if (stale && tries > 0) return setTimeout(() => pressWhenDrawn(press, shown, tries - 1), 50);
    sent = null; // nothing was pressed
    say(`${shown}: ${none[press]}`);
  };
  // a scale key's grade given once the card's grades are drawn: a grade's own rerun leaves them stale for a moment,
  // and the next key, typed ahead, said every response had its grade (every 50 ms, ``tries`` times)
  const gradeWhenDrawn = (label, shown, tries) => {
    const all = sides();
    const stale = [...document.querySelectorAll('[data-stale="true"] [data-testid="stRadio"]')].length > 0;
    if (!all.length && stale && tries > 0) return setTimeout(() => gradeWhenDrawn(label, shown, tries - 1), 50);
    const next = chosenSide !== null && chosenSide < all.length ? all[chosenSide] : all.find((side) => !chosen(side));
    const choice = next && option(next, label);
    chosenSide = null;
    mark(all, -1);
    if (choice) choice.click();
    else if (all.length) say(`${shown}: every response has its grade; Left / Right choose one to change, Enter submits`);
    else say(`${shown}: no card on screen to grade`);
  };
  // the card's own controls: its grades' radio buttons and its buttons (Submit, Skip, ...)
  const own = (target) => sides().some((side) => side.contains(target)) ||
    Object.values(buttons).some((name) => (target.closest("button")?.innerText.trim() || "").startsWith(name));
  document.addEventListener(
    "keydown",
    (event) => {
      const target = event.target;
      const typing = target instanceof HTMLElement &&
        (target.isContentEditable || target.matches("input:not([type=radio]), textarea, select"));
      if (typing) { // Esc leaves the comment (or another field) for the card, as on the one-response card
        const leaves = event.key === "Escape" && document.getElementById("ag-sbs-card") &&
          !target.closest('[aria-expanded="true"]');
        if (leaves) {
          event.preventDefault();
          target.blur();
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      if (!document.getElementById("ag-sbs-card")) return; // another page: its keys are its own
      const control = target instanceof Element && target.closest(CONTROLS);
      if (control && !own(target)) {
        if (event.key === "Escape") {
          event.preventDefault();
          target.blur(); // the page's, where the card's keys act
        }
        return;
      }
      if (event.key === "Enter" && target instanceof Element && target.closest("button, a[href], summary")) return;
      const lasting = document.getElementById("ag-sbs-note")?.dataset.lasting === "1";
      if (lasting && (event.key === "?" || event.key === "Escape")) {
        unsay();
        event.preventDefault();
        return;
      }
      if (event.key === "?") {
        const keys = current('[data-testid="stCaptionContainer"]')
          .map((c) => c.innerText.trim()).find((t) => t.startsWith("Keys:"));
        say(keys || "Keys: B back to an earlier card, Q return to the queue.", true);
        event.preventDefault();
        return;
      }
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      if ((key === "ArrowLeft" || key === "ArrowRight") && !target.matches?.('input[type="radio"]')) {
        const all = sides(), n = all.length, step = key === "ArrowRight" ? 1 : -1;
        if (!n) return;
        const next = all.findIndex((side) => !chosen(side)); // what a scale key grades with none chosen
        const from = chosenSide ?? (next >= 0 ? next : step > 0 ? -1 : n);
        chosenSide = (from + step + n) % n;
        mark(all, chosenSide);
        event.preventDefault();
        return;
      }
      const press = buttons[key];
      const label = press ? null : (window.agSbsKeys || {})[event.key.toUpperCase()];
      if (!press && !label) return;
      event.preventDefault();
      const shown = key === "Enter" ? "Enter" : event.key.toUpperCase();
      if ((label || AWAIT_CARD.has(press)) && busy()) return say(`${shown}: ${BUSY}`);
      if (press) {
        chosenSide = null; // a new card, or the same one afresh: the next key grades its first ungraded response
        sent = { said: drawnSaid(), at: Date.now() }; // from the key on: its button may wait for a rerun's redraw
        pressWhenDrawn(press, shown, 40);
        return;
      }
      gradeWhenDrawn(label, shown, 40);
    },
    true,
  );
})();
