// One-key repairs on the escalation page (reviewer/desk/repairs.py). A static file: the
// Content-Security-Policy allows no inline script. A fix's button, or its number key, puts the fixed
// text (the button's value) in the edit box, where the guard checks it as if the lead had typed it;
// nothing is decided until the lead approves. Keys never fire while typing in a field, or with
// Ctrl/Alt/Cmd; the edit box's own fixes (of the text in it) take the keys while it shows any.
(function () {
  "use strict";

  function typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable ||
      ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function fill(button, byKey) {
    const box = document.querySelector("#edit textarea[name=text]");
    if (!box) return false; // no edit box (decided meanwhile): the button posts as plain HTML
    box.value = button.value;
    // The edit box asks the guard on keyup (its hx-trigger): the same check as typing.
    box.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
    box.scrollIntoView({ block: "center" });
    if (!byKey) box.focus({ preventScroll: true }); // a click: on to the text it put there
    const said = document.getElementById("repair-status");
    if (said) said.textContent = "The fix is in the edit box; the guard is checking it.";
    return true;
  }

  // Capture: before htmx, so a fix inside the edit form never submits that form.
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element && event.target.closest("button.repair");
    if (button && fill(button, false)) {
      event.preventDefault();
      event.stopPropagation();
    }
  }, true);

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || !/^[1-9]$/.test(event.key)) return;
    const key = `button.repair[data-repair-key="${event.key}"]`;
    const mine = document.querySelector("#edit-violations button.repair");
    const button = mine ? document.querySelector(`#edit-violations ${key}`) : document.querySelector(key);
    if (!button) return;
    event.preventDefault();
    // Chosen by its key: the focus stays out of the fields, so the next key works too.
    if (!fill(button, true)) button.click();
  });
})();
