// Sessions: one conversation's runs, in the order they ran.

import { UI, get } from "./api.js";
import { el, formatTime, statusBadge } from "./dom.js";

export async function renderSessions(page, who) {
  const input = el("input", { id: "session-id", placeholder: "session id", required: true });
  const form = el("form", { class: "filters" }, input, el("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.assign(`${UI}/sessions/${encodeURIComponent(input.value.trim())}`);
  });
  const recent = await get("/runs", { order: "newest", limit: 200 });
  const seen = [...new Set(recent.runs.map((run) => run.session_id).filter(Boolean))];
  page.append(el("h1", {}, "Sessions"), form,
    el("h2", {}, "Recent sessions"),
    seen.length
      ? el("ul", { id: "sessions" }, seen.map((id) =>
        el("li", {}, el("a", { href: `${UI}/sessions/${encodeURIComponent(id)}` }, id))))
      : el("p", { class: "muted" }, "No recent run belongs to a session."));
  void who;
}

export async function renderSession(page, sessionId) {
  const runs = [];
  let cursor = null;
  do {
    const found = await get("/runs", { session_id: sessionId, limit: 500, cursor });
    runs.push(...found.runs);
    cursor = found.next_cursor;
  } while (cursor);
  page.append(el("h1", {}, "Session ", el("code", {}, sessionId)),
    el("ol", { id: "session-runs" }, runs.map((run) =>
      el("li", {}, el("a", { href: `${UI}/runs/${encodeURIComponent(run.id)}` }, run.name),
        " ", statusBadge(run.status), " ", formatTime(run.created_at)))));
}
