// The inbox's keyboard shortcuts and its polling guard. A static file: the
// Content-Security-Policy allows no inline script. Keys never fire while typing in a field.
//   j / k      next / previous escalation        o / Enter  open the row (whole text, diff, guard)
//   a          approve (opens the row first)     e          edit, then approve, on the escalation page
//   r          reject: focus the reason field    c          take or release
//   ?          the list of keys                  Esc        close it
(function () {
  "use strict";
  const ROWS = "#inbox-list tr.esc-row";
  let current = null; // the data-escalation id of the selected row, kept across refreshes

  function rows() {
    return Array.from(document.querySelectorAll(ROWS));
  }

  function currentRow() {
    return current && document.querySelector(`${ROWS}[data-escalation="${current}"]`);
  }

  function select(row) {
    rows().forEach((r) => r.classList.remove("current"));
    if (!row) return;
    current = row.dataset.escalation;
    row.classList.add("current");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    const all = rows();
    if (!all.length) return;
    const at = all.indexOf(currentRow());
    const next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    select(all[next]);
  }

  function typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable ||
      ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function help() {
    const dialog = document.getElementById("inbox-keys");
    if (!dialog) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

  function act(key) {
    const row = currentRow();
    if (!row) return false;
    const details = row.querySelector("details.review-in-place");
    switch (key) {
      case "o":
      case "Enter":
        if (details) details.open = !details.open;
        return true;
      case "a": {
        // Never a blind approval: the first press opens the row with the whole text in view.
        if (details && !details.open) {
          details.open = true;
          details.scrollIntoView({ block: "nearest" });
          return true;
        }
        const button = row.querySelector(".approve-form button[type=submit]");
        if (button) button.closest("form").requestSubmit(button);
        return true;
      }
      case "e":
        window.location.assign(row.dataset.url + "#edit");
        return true;
      case "r": {
        const reason = row.querySelector(".reject-inline input[name=note]");
        if (reason) reason.focus();
        return true;
      }
      case "c": {
        const button = row.querySelector(".take-form button, .release-form button");
        if (button) button.click();
        return true;
      }
    }
    return false;
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) return;
    const dialog = document.getElementById("inbox-keys");
    if (dialog && dialog.open && event.key !== "?") return;
    let handled = false;
    if (event.key === "j") { move(1); handled = true; }
    else if (event.key === "k") { move(-1); handled = true; }
    else if (event.key === "?") { help(); handled = true; }
    else if (event.key === "Enter") {
      // Enter on a link or a button keeps its own meaning.
      if (event.target instanceof HTMLElement && event.target.closest("a, button, summary")) return;
      handled = act("Enter");
    }
    else if (["o", "a", "e", "r", "c"].includes(event.key)) { handled = act(event.key); }
    if (handled) event.preventDefault();
  });

  // A click in a row selects it, so the keys act on what the lead is looking at.
  document.addEventListener("click", (event) => {
    const row = event.target instanceof Element && event.target.closest(ROWS);
    if (row) select(row);
  });

  // The polling refresh waits while the lead works: a field has focus or text, a row is open, a
  // row is selected for bulk reject, or the help is open. The next poll catches up.
  function busy() {
    const list = document.getElementById("inbox-list");
    if (!list) return false;
    if (typing(document.activeElement) && (list.contains(document.activeElement) ||
        document.activeElement.form === document.getElementById("bulk-reject"))) return true;
    if (list.querySelector("details.review-in-place[open]")) return true;
    if (document.querySelector("input[form=bulk-reject]:checked")) return true;
    if (Array.from(list.querySelectorAll(".reject-inline input[name=note]")).some((i) => i.value)) return true;
    const dialog = document.getElementById("inbox-keys");
    return Boolean(dialog && dialog.open);
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    const source = event.detail && event.detail.elt;
    if (source && source.dataset && source.dataset.poll === "inbox" && busy()) event.preventDefault();
  });

  // After a refresh, keep the selection on the same escalation.
  document.addEventListener("htmx:afterSettle", () => {
    const row = currentRow();
    if (row) row.classList.add("current");
  });
})();
