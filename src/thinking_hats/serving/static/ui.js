// thinking-hats web view: live updates of an open session page over server-sent events.
// The server renders (and escapes) every fragment; this script only places them. It is the page's only script,
// served from this origin (the Content-Security-Policy allows no other and no inline script).
"use strict";

(function () {
  const main = document.querySelector("main[data-events]");
  if (!main || !window.EventSource) {
    return;
  }
  const thoughts = document.getElementById("thoughts");
  const chain = document.getElementById("chain");
  const progress = document.getElementById("progress");
  const live = document.getElementById("live");
  const count = document.getElementById("count");
  const events = new EventSource(main.dataset.events);

  function fragment(html) {
    const template = document.createElement("template");
    template.innerHTML = html; // a template's content is inert: nothing in it runs
    return template.content;
  }

  events.addEventListener("open", function () {
    live.hidden = false;
  });
  events.addEventListener("error", function () {
    live.hidden = true;
  });
  events.addEventListener("thoughts", function (event) {
    const data = JSON.parse(event.data);
    data.thoughts.forEach(function (thought) {
      const card = fragment(thought.html);
      const old = document.getElementById("t" + thought.seq);
      if (old) {
        old.replaceWith(card);
      } else {
        thoughts.appendChild(card);
      }
    });
    chain.replaceChildren(fragment(data.chain));
    count.textContent = String(data.count);
  });
  events.addEventListener("progress", function (event) {
    const data = JSON.parse(event.data);
    if (!data.active) {
      progress.hidden = true;
      return;
    }
    progress.replaceChildren();
    const head = document.createElement("b");
    const where = data.branch ? " on branch " + data.branch : "";
    const of = data.total ? " (" + data.finished + "/" + data.total + ")" : "";
    head.textContent = "Analysing thought " + data.number + where + of;
    progress.appendChild(head);
    const list = document.createElement("ul");
    data.steps.forEach(function (step) {
      const item = document.createElement("li");
      item.textContent = step;
      list.appendChild(item);
    });
    progress.appendChild(list);
    progress.hidden = false;
  });
  events.addEventListener("end", function () {
    events.close();
    live.hidden = true;
    progress.hidden = false;
    progress.textContent = "Signed out: sign in again to follow this session.";
  });
})();
