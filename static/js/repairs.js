// One-key repairs on the escalation page (reviewer/desk/repairs.py). A static file: the
// Content-Security-Policy allows no inline script. A fix's button, or its number key, puts the fixed
// text in the edit box, where the guard checks it as if the lead had typed it; nothing is decided
// until the lead approves. Keys never fire while typing in a field, or with Ctrl/Alt/Cmd.
(function () {
  "use strict";

  function typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable ||
      ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function fill(form) {
    const box = document.querySelector("#edit textarea[name=text]");
    if (!box) return false; // no edit box (decided meanwhile): the form posts as plain HTML
    box.value = form.elements.text.value;
    // The edit box asks the guard on keyup (its hx-trigger): the same check as typing.
    box.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
    box.scrollIntoView({ block: "center" });
    box.focus({ preventScroll: true });
    const said = document.getElementById("repair-status");
    if (said) said.textContent = "The fix is in the edit box; the guard is checking it.";
    return true;
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.classList.contains("repair-form") && fill(form)) {
      event.preventDefault();
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || !/^[1-9]$/.test(event.key)) return;
    const button = document.querySelector(`button[data-repair-key="${event.key}"]`);
    if (!button) return;
    event.preventDefault();
    button.closest("form").requestSubmit(button);
  });
})();
