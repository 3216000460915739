// The console's entry point: find out who the browser is, draw the navigation, and hand the
// page to the module its path names.

import { ApiError, UI, logout, session } from "./api.js";
import { clear, el } from "./dom.js";
import { renderHealth } from "./health.js";
import { renderInbox } from "./inbox.js";
import { renderLogin } from "./login.js";
import { renderRun } from "./run.js";
import { renderRuns } from "./runs.js";
import { renderSession, renderSessions } from "./sessions.js";

const page = document.getElementById("page");
const top = document.getElementById("top");

function navigation(who) {
  const here = location.pathname.slice(UI.length) || "/";
  const link = (path, label) =>
    el("a", { href: `${UI}${path}`, class: here === path ? "current" : "" }, label);
  const items = [
    el("span", { class: "brand" }, "AgentDeck"),
    link("/", "Runs"),
    link("/inbox", "Inbox"),
    link("/sessions", "Sessions"),
    link("/health", "Health"),
  ];
  if (who.keys_required && who.signed_in) {
    const namespaces = (who.namespaces || []).map((n) => (n === null ? "(default)" : n));
    const out = el("button", { type: "button", class: "link", id: "sign-out" }, "Sign out");
    out.addEventListener("click", async () => {
      await logout();
      location.assign(`${UI}/login`);
    });
    items.push(el("span", { class: "who" }, `namespaces: ${namespaces.join(", ")}`), out);
  }
  clear(top).append(el("nav", {}, ...items));
}

async function main() {
  const who = await session();
  const path = location.pathname.slice(UI.length) || "/";
  if (who.keys_required && !who.signed_in && path !== "/login") {
    location.assign(`${UI}/login`);
    return;
  }
  navigation(who);
  clear(page);
  const run = path.match(/^\/runs\/([^/]+)$/);
  const sessionPage = path.match(/^\/sessions\/([^/]+)$/);
  if (path === "/login") await renderLogin(page);
  else if (run) await renderRun(page, decodeURIComponent(run[1]), who);
  else if (path === "/inbox") await renderInbox(page, who);
  else if (sessionPage) await renderSession(page, decodeURIComponent(sessionPage[1]), who);
  else if (path === "/sessions") await renderSessions(page, who);
  else if (path === "/health") await renderHealth(page);
  else await renderRuns(page, who);
}

main().catch((failure) => {
  clear(page).append(
    el("p", { class: "error", role: "alert" },
      failure instanceof ApiError ? `${failure.status}: ${failure.message}` : String(failure)),
  );
});
