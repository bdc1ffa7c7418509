// A signed-in reader's own parts of a page every signed-in reader shares (accounts.reader_state).
// The page came from the shared cache with the signed-out buttons; this asks /me/state (which
// the browser keeps: its address changes with the wp_state cookie after any change) and makes
// the follow, "this is me" and save controls the reader's, fills in the CSRF token of the forms
// every signed-in reader shares (the account links, the chat) and shows the setup offer. Names and titles are
// set with textContent, never as markup; the only markup taken is the server's own parts.
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

  function make(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      node.setAttribute(name, attrs[name]);
    });
    if (text) node.textContent = text;
    return node;
  }

  function hidden(name, value) {
    return make("input", { type: "hidden", name: name, value: String(value) });
  }

  // A form posting to `action`, answered by htmx with the control's new state.
  function form(action, target, fields) {
    var f = make("form", {
      method: "post",
      action: action,
      "hx-post": action,
      "hx-target": "closest " + target,
      "hx-swap": "outerHTML",
    });
    f.appendChild(hidden("csrfmiddlewaretoken", state.csrf));
    Object.keys(fields).forEach(function (name) {
      f.appendChild(hidden(name, fields[name]));
    });
    f.appendChild(hidden("next", here()));
    return f;
  }

  function withLabel(button, label, aside) {
    button.appendChild(document.createTextNode(label));
    button.appendChild(make("span", { class: "sr-only" }, aside));
    return button;
  }

  function replaceParts(root) {
    state.parts.forEach(function (html) {
      var holder = document.createElement("template");
      holder.innerHTML = html;
      Array.prototype.slice.call(holder.content.children).forEach(function (part) {
        var old = part.id && root.getElementById(part.id);
        if (!old) return;
        part.querySelectorAll("input[name=next]").forEach(function (input) {
          input.value = here();
        });
        old.replaceWith(part);
      });
    });
  }

  function follow(box) {
    var ids = state.following[box.dataset.kind] || [];
    var following = ids.indexOf(Number(box.dataset.pk)) >= 0;
    var name = box.dataset.name;
    var f = form(following ? box.dataset.unfollowUrl : box.dataset.followUrl, ".follow", {});
    var button = make("button", {
      type: "submit",
      class: following ? "follow-button secondary" : "follow-button",
      "aria-pressed": String(following),
      title: following ? "Stop following " + name : "Follow " + name + ": " + box.dataset.hint,
    });
    f.appendChild(withLabel(button, following ? "Following" : "Follow", " " + name));
    var signIn = box.querySelector("a.button");
    if (signIn) signIn.replaceWith(f);
    box.removeAttribute("data-follow-url");
  }

  function claim(box) {
    // A claim the reader made came among the parts; the others offer "This is me", which
    // leads to the confirm step (nothing is sent until it is).
    var f = make("form", { method: "get", action: box.dataset.claimUrl });
    f.appendChild(hidden("next", here()));
    f.appendChild(make("button", { type: "submit", class: "secondary" }, "This is me"));
    box.replaceChildren(f);
    box.removeAttribute("data-claim-url");
  }

  // What the control's hidden label names: a list item's heading, or a chat citation's link.
  function titleOf(box) {
    if (box.dataset.title) return box.dataset.title;
    var holder = box.closest(".paper-item, li");
    var heading = holder && (holder.querySelector("h3") || holder.querySelector("a"));
    return heading ? heading.textContent.trim() : "";
  }

  function save(box) {
    var paper = Number(box.id.slice("save-".length));
    var title = titleOf(box);
    var savedIn = state.saved[String(paper)] || [];
    var control = make("div", { class: "save", id: box.id });
    if (savedIn.length) {
      var where = make("span", { class: "saved-in small" }, "Saved in ");
      state.lists
        .filter(function (l) {
          return savedIn.indexOf(l.id) >= 0;
        })
        .forEach(function (l, i) {
          if (i) where.appendChild(document.createTextNode(", "));
          where.appendChild(make("a", { href: l.url }, l.name));
        });
      control.appendChild(where);
      var remove = form(loader.dataset.unsaveUrl, ".save", { paper: paper });
      var button = make("button", { type: "submit", class: "link-button small" });
      remove.appendChild(withLabel(button, "Remove", " “" + title + "” from your library"));
      control.appendChild(remove);
    }
    var unsaved = state.lists.filter(function (l) {
      return savedIn.indexOf(l.id) < 0;
    });
    if (unsaved.length || !state.lists.length) {
      var add = form(loader.dataset.saveUrl, ".save", { paper: paper });
      if (state.lists.length > 1) {
        var id = "save-list-" + paper;
        add.appendChild(make("label", { class: "sr-only", for: id }, "List to save “" + title + "” in"));
        var select = make("select", { name: "list", id: id, class: "small" });
        unsaved.forEach(function (l) {
          select.appendChild(make("option", { value: String(l.id) }, l.name));
        });
        add.appendChild(select);
      } else if (state.lists.length) {
        add.appendChild(hidden("list", state.lists[0].id));
      }
      var saveButton = make("button", {
        type: "submit",
        class: savedIn.length ? "small secondary" : "small",
        title: "Save to your library",
      });
      add.appendChild(withLabel(saveButton, savedIn.length ? "Save to list" : "Save", " “" + title + "”"));
      control.appendChild(add);
    }
    box.replaceWith(control);
    return control;
  }

  // Everything of the reader's under `root`: the whole page, or what htmx has just put in it.
  function apply(root) {
    root.querySelectorAll("input[data-reader-csrf]").forEach(function (input) {
      input.value = state.csrf;
      input.removeAttribute("data-reader-csrf");
    });
    root.querySelectorAll(".follow[data-follow-url]").forEach(follow);
    root.querySelectorAll(".claim[data-claim-url]").forEach(function (box) {
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
