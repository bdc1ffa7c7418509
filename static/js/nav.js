// The phone-width menu: the links fold behind one button. Without this script (or with it
// blocked) the links simply wrap, visible. Served from our own static files, no inline script,
// so a Content-Security-Policy of script-src 'self' allows it.
(function () {
  var nav = document.querySelector(".nav");
  var button = nav && nav.querySelector(".nav-toggle");
  if (!button) return;
  nav.classList.add("nav-foldable");
  button.hidden = false;
  button.addEventListener("click", function () {
    var open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();
