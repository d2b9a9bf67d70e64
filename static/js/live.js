// The live fragments (reviewer/desk/live.py): an element with data-live polls its own URL with htmx.
// Each poll sends the ETag of what the element shows as If-None-Match; an unchanged fragment comes
// back as 304 without a body and htmx swaps nothing (base.html's responseHandling). The ETags are
// kept by element id and URL, because an outerHTML swap replaces the element itself.
(function () {
  "use strict";
  const shown = new Map();

  function key(detail) {
    const elt = detail.elt;
    if (!(elt instanceof HTMLElement) || !("live" in elt.dataset) || !elt.id) return null;
    const path = detail.path || (detail.requestConfig && detail.requestConfig.path) || "";
    return `${elt.id} ${path}`;
  }

  document.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.verb !== "get") return;
    const at = key(event.detail);
    if (at && shown.has(at)) event.detail.headers["If-None-Match"] = shown.get(at);
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const xhr = event.detail.xhr;
    const at = key(event.detail.requestConfig || event.detail);
    if (!at || !xhr || xhr.status !== 200) return;
    const etag = xhr.getResponseHeader("ETag");
    if (etag) shown.set(at, etag);
  });
})();
