// Single-key shortcuts of Streamlit's buttons (``shortcut=``) act wherever the focus is. On a page that gives
// buttons single keys (the Review page: a label's key, J and K), this keeps a letter or digit typed on a link, a
// summary, a table cell or a control of the sidebar that element's (an accessibility review saved a real final
// grade by pressing N on the sidebar's Dashboard link; WCAG 2.1.4), and Esc takes the focus off such an element,
// back to the page, where the keys act; Ctrl+Enter on a form's radio button submits its form, as it does from the
// form's other fields. It acts only where its marker (#ag-shortcut-guard) is on the page.
(() => {
  if (window.agShortcutGuard) return; // one listener for the page, however many times it is drawn
  window.agShortcutGuard = true;
  const OTHERS = 'a[href], summary, [contenteditable], [role="grid"], [role="gridcell"], [role="link"], [role="tab"]';
  const SIDEBAR_CONTROLS = 'a[href], button, input, select, textarea, [role="combobox"], [role="button"]';
  window.addEventListener(
    "keydown",
    (event) => {
      if (!document.getElementById("ag-shortcut-guard")) return;
      const target = event.target;
      if (!(target instanceof Element)) return;
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && target.matches('input[type="radio"]')) {
        // Streamlit's form shortcut ignores a key pressed on an input, and a choice made with the arrows leaves the
        // focus on its radio: Ctrl+Enter did nothing there, said nothing (a reviewer's review). Its form's submit
        const submit = target.closest('[data-testid="stForm"]')?.querySelector('[data-testid="stFormSubmitButton"] button');
        if (submit) {
          event.preventDefault();
          submit.click();
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const elsewhere = target.closest(OTHERS) ||
        (target.closest('[data-testid="stSidebar"]') && target.closest(SIDEBAR_CONTROLS));
      if (!elsewhere) return;
      if (event.key === "Escape" && !target.closest('[aria-expanded="true"]')) {
        target.blur();
        return;
      }
      if (/^[a-z0-9]$/i.test(event.key)) event.stopImmediatePropagation(); // the element's key, not a shortcut
    },
    true,
  );
})();
