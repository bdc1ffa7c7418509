// A signed-in reader's own parts of a page every signed-in reader shares (accounts.reader_state).
// The page came from the shared cache with the signed-out buttons; this asks /me/state (which
// the browser keeps: its address changes with the wp_state cookie after any change) and makes
// the follow, "this is me" and save controls the reader's, fills in the CSRF token of the forms
// every signed-in reader shares (the account links, the chat) and shows the setup offer. It
// writes no markup of its own: every control is the server's, from its template (the follow and
// "this is me" forms hidden in the page, the claims and save controls in the state), and a name
// or title is put in as text, never as markup.
(function () {
  "use strict";

  var loader = document.getElementById("reader-state");
  if (!loader || !window.fetch) return;
  var state = null;
  // A page rendered for this reader alone: only its list items' save slots are left to fill.
  var savesOnly = loader.hasAttribute("data-saves-only");

  function cookie(name) {
    var found = document.cookie.split("; ").filter(function (c) {
      return c.indexOf(name + "=") === 0;
    })[0];
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "0";
  }

  function here() {
    return location.pathname + location.search;
  }

  // The forms the reader posts from come back to the page they are on.
  function nextHere(node) {
    node.querySelectorAll("input[name=next]").forEach(function (input) {
      input.value = here();
    });
    return node;
  }

  function replaceParts(root) {
    state.parts.forEach(function (html) {
      var holder = document.createElement("template");
      holder.innerHTML = html;
      Array.prototype.slice.call(holder.content.children).forEach(function (part) {
        var old = part.id && root.getElementById(part.id);
        if (old) old.replaceWith(nextHere(part));
      });
    });
  }

  // A form the page holds hidden for reader.js to show: in place of what a signed-out reader sees.
  function reveal(box, form) {
    form.hidden = false;
    nextHere(box);
    box.querySelectorAll(".follow > a.button, .claim > p").forEach(function (signIn) {
      signIn.remove();
    });
  }

  function follow(box) {
    var ids = state.following[box.dataset.kind] || [];
    var following = String(ids.indexOf(Number(box.dataset.pk)) >= 0);
    box.querySelectorAll("form[data-following]").forEach(function (f) {
      if (f.dataset.following === following) {
        f.removeAttribute("data-following");
        reveal(box, f);
      } else {
        f.remove();
      }
    });
    box.removeAttribute("data-kind");
  }

  function claim(box) {
    // A claim the reader made came among the parts; the others offer "This is me", which
    // leads to the confirm step (nothing is sent until it is).
    var offer = box.querySelector("form[data-claim-offer]");
    offer.removeAttribute("data-claim-offer");
    reveal(box, offer);
  }

  // What the control's hidden label names: a list item's heading, or a chat citation's link.
  function titleOf(box) {
    if (box.dataset.title) return box.dataset.title;
    var holder = box.closest(".paper-item, li");
    var heading = holder && (holder.querySelector("h3") || holder.querySelector("a"));
    return heading ? heading.textContent.trim() : "";
  }

  // The state's save control for the lists this paper is in, made for a stand-in paper: the
  // stand-in's id and title become this paper's, as text and attribute values.
  function save(box) {
    var paper = box.id.slice("save-".length);
    var html = state.save_controls[(state.saved[paper] || []).join(",")];
    if (!html) return;
    var holder = document.createElement("template");
    holder.innerHTML = html;
    var control = holder.content.firstElementChild;
    var names = { paper: paper, title: titleOf(box) };
    // accounts.reader_state.STAND_IN_PAPER and STAND_IN_TITLE.
    var rename = function (text) {
      return text.replace(/\ue000(paper|title)\ue001/g, function (_, name) {
        return names[name];
      });
    };
    var walker = document.createTreeWalker(control, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (var node = control; node; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) node.data = rename(node.data);
      else
        Array.prototype.forEach.call(node.attributes, function (attribute) {
          attribute.value = rename(attribute.value);
        });
    }
    box.replaceWith(nextHere(control));
  }

  // Everything of the reader's under `root`: the whole page, or what htmx has just put in it.
  function apply(root) {
    root.querySelectorAll("input[data-reader-csrf]").forEach(function (input) {
      input.value = state.csrf;
      input.removeAttribute("data-reader-csrf");
    });
    root.querySelectorAll(".follow[data-kind]").forEach(follow);
    root.querySelectorAll(".claim").forEach(function (box) {
      if (!box.querySelector("form[data-claim-offer]")) return;
      if (state.claimed.indexOf(Number(box.id.slice("claim-".length))) < 0) claim(box);
    });
    root.querySelectorAll(".save[data-title], .save-slot").forEach(save);
    if (window.htmx) window.htmx.process(root === document ? document.body : root);
  }

  function load() {
    var url = loader.dataset.url + "?v=" + encodeURIComponent(cookie("wp_state"));
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(
      function (response) {
        return response.status === 200 ? response.json() : null;
      }
    );
  }

  function start() {
    load().then(function (found) {
      if (!found) return;
      state = found;
      if (!savesOnly) {
        // htmx's own requests (a follow, a save) carry the token as a header too.
        document.body.setAttribute("hx-headers", JSON.stringify({ "X-CSRFToken": state.csrf }));
        replaceParts(document);
        var offer = document.querySelector("[data-reader-onboarding]");
        if (offer) offer.hidden = !state.onboarding;
      }
      apply(document);
      document.documentElement.dataset.readerState = "applied";
    });
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    if (state) apply(event.detail.target.parentElement || document);
  });
  // Markup another script put in the page (a chat answer with its citations).
  document.addEventListener("wovepaper:added", function (event) {
    if (state) apply(event.target);
  });
  // After a change (the answer set a new wp_state), later swaps use the reader's new state.
  document.addEventListener("htmx:afterRequest", function (event) {
    if (state && event.detail.requestConfig && event.detail.requestConfig.verb !== "get") {
      load().then(function (found) {
        if (found) state = found;
      });
    }
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
