// Chat with the papers: ask without leaving the page and read the answer as it is streamed.
// The answer's text arrives as plain text and is shown with textContent (never as markup);
// once it is complete the server's rendering of it, with its citations, replaces it.
// Without this script the forms post normally and the page reloads with the answer.
(function () {
  "use strict";

  function item(role, text) {
    var li = document.createElement("li");
    li.className = "chat-msg chat-" + role;
    var body = document.createElement("div");
    body.className = "chat-text";
    body.textContent = text;
    li.appendChild(body);
    return li;
  }

  function showError(form, text) {
    var box = form.querySelector("[data-chat-error]");
    if (!box) return;
    box.textContent = text;
    box.hidden = !text;
  }

  async function readStream(response, target) {
    if (!response.body || !response.body.getReader) {
      target.textContent = await response.text();
      return;
    }
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      target.textContent += decoder.decode(chunk.value, { stream: true });
    }
  }

  // A new conversation, on the chat page: it gets its own address and its place at the top of
  // the list of conversations at once, as a reload would show it (the dock on other pages
  // stays where it is).
  function announce(data) {
    var list = document.querySelector("[data-chat-list]");
    if (!list) return;
    if (window.history && history.pushState && location.pathname !== data.conversation_url) {
      history.pushState({ conversation: data.conversation }, "", data.conversation_url);
    }
    var none = list.querySelector("[data-chat-none]");
    if (none) none.remove();
    list.querySelectorAll("[aria-current]").forEach(function (link) {
      link.removeAttribute("aria-current");
    });
    var li = document.createElement("li");
    var link = document.createElement("a");
    link.href = data.conversation_url;
    link.textContent = data.conversation_title;
    link.setAttribute("aria-current", "page");
    li.appendChild(link);
    list.insertBefore(li, list.firstChild);
  }

  async function ask(form) {
    var thread = form.parentElement.querySelector("[data-chat-thread]");
    var field = form.querySelector("textarea[name=question]");
    var question = field.value.trim();
    if (!question) return;
    showError(form, "");
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      var sent = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { "X-Requested-With": "fetch" },
        credentials: "same-origin",
      });
      var data = await sent.json();
      if (!sent.ok) {
        showError(form, data.error || "The question could not be sent.");
        return;
      }
      var current = form.querySelector("input[name=conversation]");
      if (!current.value) announce(data);
      current.value = data.conversation;
      field.value = "";
      thread.appendChild(item("user", question));
      var answer = item("assistant", "");
      answer.setAttribute("aria-busy", "true");
      thread.appendChild(answer);
      var text = answer.querySelector(".chat-text");
      var streamed = await fetch(data.stream_url, { credentials: "same-origin" });
      await readStream(streamed, text);
      var done = await fetch(data.answer_url, { credentials: "same-origin" });
      if (done.ok) {
        var holder = document.createElement("ol");
        holder.innerHTML = await done.text();
        var finished = holder.firstElementChild;
        if (finished) {
          // A paper cited higher up the thread keeps its one save control there: ids are unique.
          finished.querySelectorAll(".save-slot").forEach(function (slot) {
            if (document.getElementById(slot.id)) slot.remove();
          });
          answer.replaceWith(finished);
          // reader.js fills its cited papers' save slots from the reader's state.
          finished.dispatchEvent(new CustomEvent("wovepaper:added", { bubbles: true }));
        }
      }
      answer.removeAttribute("aria-busy");
    } catch (err) {
      showError(form, "The answer was interrupted; please ask again.");
    } finally {
      button.disabled = false;
    }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("[data-chat-form]")) return;
    if (!window.fetch || !window.FormData) return;
    event.preventDefault();
    ask(form);
  });
})();
