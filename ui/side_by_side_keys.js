// The side-by-side card's keys (ui/side_by_side_card.py puts this script on the page with window.agSbsKeys, the
// scale's keys -> labels): a scale key grades the first response without a grade yet, the next key the next
// one, Enter submits the card, S skips it, F flags it for a reviewer (the comment box's text going with it), U
// undoes the last card or skip and B goes back to an earlier card; a grade given is changed by clicking another. Keys typed into a text field are
// the field's.
(() => {
  if (window.agSbsListening) return; // one listener for the page, however many times the card is drawn
  window.agSbsListening = true;
  const sides = () =>
    [...document.querySelectorAll('[data-testid="stRadio"]')].filter((r) =>
      (r.querySelector('[data-testid="stWidgetLabel"]')?.innerText || "").startsWith("Grade of Response"));
  const chosen = (side) => side.querySelector('input[type="radio"]:checked');
  const option = (side, label) => [...side.querySelectorAll("label")].find((l) => l.innerText.trim() === label);
  document.addEventListener(
    "keydown",
    (event) => {
      const target = event.target;
      const typing = target instanceof HTMLElement &&
        (target.isContentEditable || target.matches("input:not([type=radio]), textarea, select"));
      if (typing || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      const all = sides();
      if (!all.length) return;
      const press = { Enter: "Submit", s: "Skip", S: "Skip", f: "Flag", F: "Flag", u: "Undo", U: "Undo", b: "Back", B: "Back" }[event.key];
      if (press) {
        const button = [...document.querySelectorAll("button")].find((b) => b.innerText.trim().startsWith(press));
        if (button) {
          event.preventDefault();
          button.click();
        }
        return;
      }
      const label = (window.agSbsKeys || {})[event.key.toUpperCase()];
      const next = all.find((side) => !chosen(side));
      if (!label || !next) return;
      const choice = option(next, label);
      if (choice) {
        event.preventDefault();
        choice.click();
      }
    },
    true,
  );
})();
