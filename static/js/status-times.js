// The public status page shows every time in UTC, as the server stored it (one page for every reader, so
// its HTML, cache and ETag never depend on who reads it). This script adds the reader's own time beside each
// UTC time (<time datetime="..."> elements), in the browser's time zone, and says so in the footer. Without
// JavaScript, or for a reader whose zone is UTC, the page stays in UTC.
(function () {
  "use strict";
  let zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (error) {
    return;
  }
  if (!zone || ["UTC", "Etc/UTC", "Etc/GMT", "GMT", "Etc/Universal", "Etc/Zulu"].includes(zone)) return;
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    hourCycle: "h23", timeZoneName: "short",
  });
  // "2026-12-01 23:31 EST" (en-US names the zone where it has a common abbreviation, else "GMT+1"): the same
  // shape as the UTC text beside it.
  const local = (instant) => {
    const part = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
    return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute} ${part.timeZoneName}`;
  };
  const main = document.querySelector("main");
  if (!main) return;
  for (const time of main.querySelectorAll("time[datetime]")) {
    // ISO 8601 with microseconds: the browser's parser wants at most milliseconds.
    const instant = new Date(time.getAttribute("datetime").replace(/(\.\d{3})\d+/, "$1"));
    if (Number.isNaN(instant.getTime()) || time.nextElementSibling?.classList.contains("local-time")) continue;
    const mine = document.createElement("span");
    mine.className = "local-time";
    mine.title = `Your time zone: ${zone}`;
    mine.textContent = `(${local(instant)}, your time)`;
    time.after(" ", mine);
  }
  const note = document.getElementById("times-note");
  if (note) note.textContent = `Times are in UTC, each with your time (${zone}) beside it.`;
})();
