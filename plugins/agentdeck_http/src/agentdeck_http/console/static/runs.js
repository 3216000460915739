// The runs list: newest first, filtered, paged through the API's cursors as the table is
// scrolled, and kept live by the namespace's change stream (no polling from the page).

import { ApiError, UI, get, stream } from "./api.js";
import { el, formatTime, statusBadge } from "./dom.js";

const STATUSES = ["", "running", "paused", "waiting_answer", "completed", "failed", "cancelled"];
const PAGE = 50;

export function runLink(run, namespace) {
  const suffix = namespace ? `?namespace=${encodeURIComponent(namespace)}` : "";
  return `${UI}/runs/${encodeURIComponent(run.id)}${suffix}`;
}

function filtersFromLocation() {
  const params = new URLSearchParams(location.search);
  const value = (name) => params.get(name) || "";
  return {
    status: value("status"), name: value("name"), namespace: value("namespace"),
    session_id: value("session_id"), created_after: value("created_after"),
    created_before: value("created_before"), search: value("search"),
  };
}

function field(label, control) {
  return el("label", { class: "field" }, el("span", {}, label), control);
}

function filterForm(filters, who) {
  const status = el("select", { name: "status", id: "filter-status" },
    STATUSES.map((s) => el("option", { value: s, selected: s === filters.status }, s || "any")));
  const controls = [
    field("Status", status),
    field("Agent / workflow", el("input", { name: "name", id: "filter-name", value: filters.name })),
    field("Session", el("input", { name: "session_id", id: "filter-session", value: filters.session_id })),
    field("Started after", el("input", { name: "created_after", type: "datetime-local", value: filters.created_after })),
    field("Started before", el("input", { name: "created_before", type: "datetime-local", value: filters.created_before })),
    field("Run id or key", el("input", { name: "search", id: "search", type: "search", value: filters.search })),
  ];
  const namespaces = (who.namespaces || []).filter((n) => n !== null);
  if (!who.keys_required) {
    // No keys: every namespace is open, so any may be typed (empty is the default one).
    controls.splice(1, 0, field("Namespace", el("input", { name: "namespace", id: "filter-namespace",
      value: filters.namespace, placeholder: "(default)" })));
  } else if (namespaces.length > 1) {
    controls.splice(1, 0, field("Namespace", el("select", { name: "namespace", id: "filter-namespace" },
      namespaces.map((n) => el("option", { value: n, selected: n === filters.namespace }, n)))));
  }
  return el("form", { class: "filters", id: "filters", method: "get", action: `${UI}/` },
    ...controls, el("button", { type: "submit" }, "Apply"));
}

function isoOf(local) {
  return local ? new Date(local).toISOString() : undefined;
}

function row(run, namespace) {
  return el("tr", { dataset: { runId: run.id, created: run.created_at } },
    el("td", {}, el("a", { href: runLink(run, namespace), class: "run-link" }, run.id)),
    el("td", {}, run.name),
    el("td", { class: "status-cell" }, statusBadge(run.status)),
    el("td", {}, run.session_id || ""),
    el("td", {}, run.key || ""),
    el("td", {}, formatTime(run.created_at)),
    el("td", { class: "updated" }, formatTime(run.updated_at)));
}

function matches(run, filters) {
  if (filters.status && run.status !== filters.status) return false;
  if (filters.name && run.name !== filters.name) return false;
  if (filters.session_id && run.session_id !== filters.session_id) return false;
  if (filters.created_after && run.created_at < isoOf(filters.created_after)) return false;
  if (filters.created_before && run.created_at > isoOf(filters.created_before)) return false;
  return !filters.search;
}

async function searched(term, namespace) {
  try {
    return [await get(`/runs/${encodeURIComponent(term)}`, { namespace })];
  } catch (failure) {
    if (!(failure instanceof ApiError) || failure.status !== 404) throw failure;
  }
  return (await get("/runs", { key: term, namespace })).runs;
}

export async function renderRuns(page, who) {
  const filters = filtersFromLocation();
  const namespace = filters.namespace || undefined;
  const body = el("tbody", { id: "runs-body" });
  const table = el("table", { id: "runs" },
    el("thead", {}, el("tr", {}, ["Run", "Name", "Status", "Session", "Key", "Started", "Updated"]
      .map((h) => el("th", {}, h)))), body);
  const more = el("button", { type: "button", id: "more" }, "Older runs");
  const sentinel = el("div", { id: "sentinel" });
  const note = el("p", { class: "muted", id: "runs-note" });
  page.append(el("h1", {}, "Runs"), filterForm(filters, who), table, note, more, sentinel);

  const query = {
    order: "newest", limit: PAGE, namespace, status: filters.status || undefined,
    name: filters.name || undefined, session_id: filters.session_id || undefined,
    created_after: isoOf(filters.created_after), created_before: isoOf(filters.created_before),
  };
  let cursor = null;
  let loading = false;
  async function nextPage() {
    if (loading || cursor === undefined) return;
    loading = true;
    try {
      const found = await get("/runs", { ...query, cursor });
      for (const run of found.runs) {
        if (!body.querySelector(`tr[data-run-id="${CSS.escape(run.id)}"]`)) body.append(row(run, namespace));
      }
      cursor = found.next_cursor || undefined;
      more.hidden = cursor === undefined;
      note.textContent = body.children.length ? "" : "No runs match.";
    } finally {
      loading = false;
    }
  }

  if (filters.search) {
    for (const run of await searched(filters.search.trim(), namespace)) body.append(row(run, namespace));
    note.textContent = body.children.length ? "" : "No run has that id or key.";
    more.hidden = true;
  } else {
    await nextPage();
    more.addEventListener("click", nextPage);
    new IntersectionObserver((seen) => {
      if (seen.some((entry) => entry.isIntersecting)) nextPage();
    }).observe(sentinel);
  }

  stream("/runs/changes", { namespace }, ["run.changed"], (_kind, run) => {
    const existing = body.querySelector(`tr[data-run-id="${CSS.escape(run.id)}"]`);
    if (existing) {
      existing.replaceWith(row(run, namespace));
      return;
    }
    if (!matches(run, filters)) return;
    const newer = [...body.children].find((tr) => tr.dataset.created < run.created_at);
    const first = body.firstElementChild;
    if (!first || first.dataset.created <= run.created_at) body.prepend(row(run, namespace));
    else if (newer) newer.before(row(run, namespace));
    note.textContent = "";
  });
}
