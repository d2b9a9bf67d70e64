// The uptime bars' day details (templates/status/_bars.html) show on hover and on keyboard focus, by CSS
// alone; Escape hides them until focus or the pointer leaves that day, so they never stand in the way.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  document.querySelectorAll(".day:hover, .day:focus-within").forEach((day) => day.classList.add("dismissed"));
});
for (const kind of ["focusout", "mouseout"]) {
  document.addEventListener(kind, (event) => {
    const day = event.target.closest && event.target.closest(".day.dismissed");
    if (day && !day.contains(event.relatedTarget)) day.classList.remove("dismissed");
  });
}
