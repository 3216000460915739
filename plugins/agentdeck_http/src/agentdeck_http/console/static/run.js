// One run: its timeline, its event log (each event expandable), its child runs, and the
// controls its status allows -- all kept live from the run's own event stream.

import { ApiError, EVENT_KINDS, UI, get, overlappingReads, post, stream } from "./api.js";
import { append, clear, el, formatTime, jsonBlock, statusBadge } from "./dom.js";
import { Timeline } from "./timeline.js";

const ENDED = ["completed", "failed", "cancelled"];
const TREE_DEPTH = 4;

function eventBody(event) {
  const payload = event.payload || {};
  const parts = [];
  if (event.kind === "message.completed") parts.push(el("p", { class: "message" }, payload.text ?? ""));
  if (event.kind === "tool.call.started") parts.push(el("p", {}, "arguments:"), jsonBlock(payload.args));
  if (event.kind === "tool.call.completed") {
    parts.push(el("p", {}, "result:"), el("pre", { class: "result" }, payload.result_preview ?? ""));
    if (payload.error) parts.push(el("p", { class: "error" }, payload.error));
  }
  parts.push(el("details", { class: "raw" }, el("summary", {}, "event JSON"), jsonBlock(event)));
  return parts;
}

function summaryOf(event) {
  const payload = event.payload || {};
  const extra = {
    "tool.call.started": payload.tool, "tool.call.completed": payload.tool,
    "text.delta": payload.text, "message.completed": payload.text,
    "step.completed": payload.name, "run.failed": payload.message,
    "run.cancelled": payload.reason, "answer.refused": payload.reason,
  }[event.kind];
  return [el("span", { class: "seq" }, `#${event.seq}`), " ", el("span", { class: "kind" }, event.kind),
    " ", el("span", { class: "muted" }, formatTime(event.ts)),
    extra ? el("span", { class: "extra" }, ` ${String(extra).slice(0, 120)}`) : null];
}

export async function renderRun(page, runId, who) {
  const namespace = new URLSearchParams(location.search).get("namespace") || undefined;
  let run = await get(`/runs/${encodeURIComponent(runId)}`, { namespace });
  const header = el("div", { id: "run-header" });
  const controls = el("div", { id: "controls", class: "controls" });
  const problem = el("p", { class: "error", id: "control-error", role: "alert" });
  const lanes = el("div", { id: "timeline", class: "timeline" });
  const log = el("ol", { id: "events", class: "events" });
  const children = el("div", { id: "children" });
  page.append(header, controls, problem,
    el("section", { class: "card" }, el("h2", {}, "Timeline"), lanes),
    el("div", { class: "columns" },
      el("section", { class: "card grow" }, el("h2", {}, "Events"), log),
      el("section", { class: "card" }, el("h2", {}, "Child runs"), children)));

  const timeline = new Timeline();
  let lastSeq = -1;
  let source = null;

  function drawHeader() {
    // The helper, not Node.append: a missing parent or error must add nothing, not "null".
    append(clear(header), [el("h1", {}, run.name, " ", statusBadge(run.status)),
      el("p", { class: "muted" }, `run ${run.id}`, run.session_id ? ` · session ${run.session_id}` : "",
        run.key ? ` · key ${run.key}` : "", ` · started ${formatTime(run.created_at)}`),
      run.parent_run_id ? el("p", {}, "parent: ",
        el("a", { href: `${UI}/runs/${encodeURIComponent(run.parent_run_id)}` }, run.parent_run_id)) : null,
      run.error ? el("p", { class: "error" }, `${run.error.code}: ${run.error.message}`) : null]);
    drawControls();
  }

  async function act(verb, payload) {
    problem.textContent = "";
    try {
      const made = await post(`/runs/${encodeURIComponent(run.id)}/${verb}`, payload, { namespace });
      if (verb === "retry" || verb === "fork") {
        location.assign(`${UI}/runs/${encodeURIComponent(made.id)}`);
        return;
      }
      run = { ...run, ...made };
      drawHeader();
      follow();
    } catch (failure) {
      problem.textContent = failure instanceof ApiError ? failure.message : String(failure);
    }
  }

  function button(id, label, onClick) {
    const node = el("button", { type: "button", id }, label);
    node.addEventListener("click", onClick);
    return node;
  }

  // Made once: a live redraw of the controls must not drop a reason being typed.
  const reason = el("input", { id: "cancel-reason", placeholder: "reason", maxlength: 2000 });
  const at = el("input", { id: "fork-at", type: "number", min: 0, value: 0, class: "narrow" });

  function drawControls() {
    clear(controls);
    if (run.status === "running") controls.append(button("pause", "Pause", () => act("pause", {})));
    if (run.status === "paused") controls.append(button("resume", "Resume", () => act("resume", {})));
    if (!ENDED.includes(run.status)) {
      controls.append(reason, button("cancel", "Cancel", () => act("cancel", { reason: reason.value || null })));
    }
    if (run.status === "failed" || run.status === "cancelled") {
      controls.append(button("retry", "Retry", () => act("retry", {})));
    }
    if (ENDED.includes(run.status)) {
      controls.append(el("span", { class: "muted" }, "fork from point"), at,
        button("fork", "Fork", () => act("fork", { at: Number(at.value) })));
    }
  }

  let scheduled = false;
  function redraw() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      timeline.draw(lanes, Date.now());
    });
  }

  // Reads overlap when events come fast: a slow older one must not put back a status the run
  // has left, or a tree of children it has grown past.
  const runReads = overlappingReads();
  const childReads = overlappingReads();

  async function refreshRun() {
    const mine = runReads.begin();
    const read = await get(`/runs/${encodeURIComponent(run.id)}`, { namespace });
    if (!runReads.isNewest(mine)) return;
    run = read;
    drawHeader();
  }

  // The tree of child runs, a few levels deep: each level is one GET /runs?parent_run_id=.
  async function subtree(parentId, depth) {
    const found = await get("/runs", { parent_run_id: parentId, namespace, limit: 500 });
    const items = [];
    for (const child of found.runs) {
      const below = depth < TREE_DEPTH ? (await subtree(child.id, depth + 1)).list : null;
      items.push(el("li", { dataset: { runId: child.id } },
        el("a", { href: `${UI}/runs/${encodeURIComponent(child.id)}` }, child.name),
        " ", statusBadge(child.status), below));
    }
    return { runs: found.runs, list: items.length ? el("ul", { class: "tree" }, items) : null };
  }

  async function refreshChildren() {
    const mine = childReads.begin();
    const { runs, list } = await subtree(run.id, 1);
    if (!childReads.isNewest(mine)) return;
    for (const child of runs) timeline.child(child);
    clear(children).append(list || el("p", { class: "muted" }, "none"));
    redraw();
  }

  let childrenDue = null;
  function childrenMoved() {
    clearTimeout(childrenDue);
    childrenDue = setTimeout(refreshChildren, 150);
  }

  function onEvent(_kind, event) {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    timeline.add(event);
    const item = el("li", { dataset: { seq: event.seq, kind: event.kind } },
      append(el("details", {}, el("summary", {}, summaryOf(event))), []));
    append(item.firstChild, eventBody(event));
    log.append(item);
    redraw();
    if (event.kind.startsWith("run.") || event.kind === "answer.recorded" || event.kind === "approval.decided") {
      refreshRun();
      if (event.kind === "run.completed" || event.kind === "run.failed") childrenMoved();
    }
    // A child run's end is journaled in its parent (a workflow's invoke step, an agent's tool).
    const invoked = event.kind === "step.completed" && String(event.payload?.name).startsWith("invoke:");
    if (invoked || event.kind === "tool.call.completed" || event.kind === "run.interrupted") childrenMoved();
  }

  function follow() {
    if (source) source.close();
    source = stream(`/runs/${encodeURIComponent(run.id)}/events`, { namespace, from_seq: lastSeq + 1 },
      EVENT_KINDS, onEvent);
  }

  drawHeader();
  follow();
  await refreshChildren();
  // Redraws only, no request: an open bar keeps growing between events (news comes from SSE).
  setInterval(() => { if (!timeline.ended) redraw(); }, 500);
  void who;
}
