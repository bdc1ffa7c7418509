// The phone-width menu: the stylesheet folds the links behind the "Menu" toggle before the first
// paint; this makes the toggle a button that opens and closes them. Without this script (or with
// it blocked) the toggle is a plain link to the menu, which the stylesheet shows as its target.
// Served from our own static files, no inline script, so a Content-Security-Policy of
// script-src 'self' allows it.
(function () {
  var nav = document.querySelector(".nav");
  var toggle = nav && nav.querySelector(".nav-toggle");
  if (!toggle) return;
  function setOpen(open) {
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  toggle.setAttribute("role", "button");
  toggle.setAttribute("aria-controls", "nav-menu");
  // Opened as a link before this script ran: it stays open.
  setOpen(location.hash === "#nav-menu");
  nav.classList.add("nav-foldable");
  toggle.addEventListener("click", function (event) {
    event.preventDefault();
    setOpen(toggle.getAttribute("aria-expanded") !== "true");
  });
  // A button opens with the space bar too (a link only with Enter).
  toggle.addEventListener("keydown", function (event) {
    if (event.key === " ") {
      event.preventDefault();
      toggle.click();
    }
  });
})();
