// The console's only way to the server: the binding's JSON API and its event streams, sent with
// the session cookie (same origin) and, for anything that changes a run, the CSRF token.

const body = document.body;
export const UI = body.dataset.ui;
export const API = body.dataset.api;

let csrf = "";

/** A refusal from the API: its status and JSON body (detail, error, field). */
export class ApiError extends Error {
  constructor(status, detail) {
    super((detail && detail.detail) || `HTTP ${status}`);
    this.status = status;
    this.detail = detail || {};
  }
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") search.set(name, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function read(response) {
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export async function session() {
  const data = await read(await fetch(`${UI}/session`, { credentials: "same-origin" }));
  csrf = data.csrf || "";
  return data;
}

export async function login(key) {
  const response = await fetch(`${UI}/login`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ key }),
  });
  const data = await read(response);
  csrf = data.csrf || "";
  return data;
}

export async function logout() {
  await fetch(`${UI}/logout`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRF-Token": csrf },
  });
}

/**
 * Numbering for reads that may overlap (a slow one, then one for a later change): `begin()`
 * numbers a read, `isNewest(n)` says whether no read began since. Only the newest read may draw,
 * so an older answer arriving last never puts back what the page has moved past.
 */
export function overlappingReads() {
  let last = 0;
  return { begin: () => ++last, isNewest: (read) => read === last };
}

export async function get(path, params) {
  return read(await fetch(`${API}${path}${query(params)}`, { credentials: "same-origin" }));
}

export async function post(path, payload, params) {
  const response = await fetch(`${API}${path}${query(params)}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(payload ?? {}),
  });
  return read(response);
}

/** An EventSource on an API stream, with a listener per named event kind. */
export function stream(path, params, kinds, onEvent) {
  const source = new EventSource(`${API}${path}${query(params)}`, { withCredentials: true });
  for (const kind of kinds) {
    source.addEventListener(kind, (message) => onEvent(kind, JSON.parse(message.data), message));
  }
  return source;
}

/** Every event kind a run's log may hold (a stream names each frame by its kind). */
export const EVENT_KINDS = [
  "run.started", "run.completed", "run.failed", "run.cancelled", "run.paused", "run.resumed",
  "run.interrupted", "answer.recorded", "answer.refused", "approval.decided",
  "control.requested", "control.observed", "text.delta", "thought.delta", "message.completed",
  "agent.changed", "tool.call.started", "tool.call.completed", "usage.reported", "report",
  "artifact.created", "input.appended", "step.completed", "node.updated", "plan.updated",
  "custom",
];
