// What the deck serves, which plugins it loaded, and whether its event store answers.

import { API, get } from "./api.js";
import { el, statusBadge } from "./dom.js";

function names(title, id, values) {
  return el("section", { class: "card", id },
    el("h2", {}, title),
    values.length ? el("ul", {}, values.map((name) => el("li", {}, name))) : el("p", { class: "muted" }, "none"));
}

function storeCard(store) {
  if (!store) return el("section", { class: "card", id: "health-store" }, el("h2", {}, "Event store"),
    el("p", { class: "muted" }, "sign in with a key to see the store's health"));
  return el("section", { class: "card", id: "health-store" },
    el("h2", {}, "Event store"),
    el("p", {}, statusBadge(store.status), " ", el("code", {}, store.backend),
      ` answered a one-run listing in ${store.latency_ms.toFixed(1)} ms`),
    store.error ? el("pre", { class: "error" }, store.error) : null);
}

function pluginTable(plugins) {
  const rows = plugins.map((plugin) => el("tr", { dataset: { plugin: plugin.name } },
    el("td", {}, plugin.name),
    el("td", {}, plugin.distribution ? `${plugin.distribution} ${plugin.version || ""}`.trim() : ""),
    el("td", {}, Object.entries(plugin.provides)
      .map(([kind, provided]) => `${kind}: ${provided.join(", ")}`).join("; "))));
  return el("section", { class: "card", id: "health-plugins" },
    el("h2", {}, "Plugins"),
    rows.length
      ? el("table", {}, el("thead", {}, el("tr", {}, ["Plugin", "Distribution", "Provides"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows))
      : el("p", { class: "muted" }, "none"));
}

export async function renderHealth(page) {
  const health = await get("/health");
  page.append(
    el("h1", {}, "Health"),
    el("p", { id: "health-status" }, "Deck status: ", el("strong", {}, health.status)),
    storeCard(health.store),
    el("div", { class: "columns" },
      names("Agents", "health-agents", health.agents),
      names("Workflows", "health-workflows", health.workflows),
      names("Skills", "health-skills", health.skills)),
    pluginTable(health.plugins),
    el("p", {}, el("a", { href: `${API}/docs` }, "API reference (OpenAPI)")),
  );
}
