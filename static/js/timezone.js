// Tells the server the browser's time zone (an IANA name such as "Europe/Berlin") in the "tz" cookie,
// so pages show times in the viewer's zone (reviewer.middleware.ViewerTimezoneMiddleware). Without it
// every time is shown in UTC, labelled so.
(function () {
  "use strict";
  let zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (error) {
    return;
  }
  if (!zone || !/^[A-Za-z0-9_+\-/]{1,64}$/.test(zone)) return;
  const current = document.cookie.split("; ").find((part) => part.startsWith("tz="));
  if (current === "tz=" + zone) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = "tz=" + zone + "; Path=/; Max-Age=31536000; SameSite=Lax" + secure;
})();
