// When an htmx request fails (the server answers an error it does not swap, or cannot be reached), a
// message says so next to the form that sent it (or at the top of the page for a refresh), with the
// request id the server gave, so nothing fails silently. A static file: the Content-Security-Policy
// allows no inline script. Text only (textContent): nothing from the answer is read as HTML.
(function () {
  "use strict";
  const SAID = {
    413: "What you sent is too large for this site; nothing was saved. Shorten it and try again.",
    503: "The service is unavailable for a moment; nothing was changed. Try again in a few seconds.",
  };

  function placeFor(elt) {
    return (elt && elt.closest && elt.closest("form")) || document.getElementById("main");
  }

  function messageFor(place) {
    let message = place.querySelector(":scope > .request-failed");
    if (!message) {
      message = document.createElement("p");
      message.className = "error request-failed";
      message.setAttribute("role", "alert");
      place.tagName === "FORM" ? place.append(message) : place.prepend(message);
    }
    return message;
  }

  function say(elt, text) {
    const message = messageFor(placeFor(elt));
    if (message.textContent !== text) message.textContent = text;
  }

  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const id = xhr.getResponseHeader("X-Request-ID");
    let text = SAID[xhr.status];
    if (!text && xhr.status >= 500) text = "The server failed to answer; this has been logged. Try again in a moment.";
    if (!text) text = `The server refused this request (${xhr.status} ${xhr.statusText || "error"}).`;
    say(event.detail.elt, id ? `${text} Request id: ${id}.` : text);
  });

  document.addEventListener("htmx:sendError", (event) => {
    say(event.detail.elt, "The server could not be reached. Check your connection and try again.");
  });

  // A request that succeeds takes back what an earlier failure of the same place said.
  document.addEventListener("htmx:afterRequest", (event) => {
    if (!event.detail.successful) return;
    const place = placeFor(event.detail.elt);
    const message = place && place.querySelector(":scope > .request-failed");
    if (message) message.remove();
  });
})();
