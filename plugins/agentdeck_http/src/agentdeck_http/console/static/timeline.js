// A run's timeline: model calls, tool calls, steps, waits, timers and child runs as bars on one
// time axis, folded from the run's events as they arrive.

import { clear, el, formatDuration } from "./dom.js";

/** Folds events into spans {key, lane, label, start, end (null while open)}. */
export class Timeline {
  constructor() {
    this.spans = new Map();
    this.first = null;
    this.last = null;
    this.stepStart = null;
    this.ended = false;
  }

  open(key, lane, label, at) {
    if (!this.spans.has(key)) this.spans.set(key, { key, lane, label, start: at, end: null });
    return this.spans.get(key);
  }

  close(key, at, label) {
    const span = this.spans.get(key);
    if (span && span.end === null) {
      span.end = at;
      if (label) span.label = label;
    }
  }

  closeLane(lane, at) {
    for (const span of this.spans.values()) if (span.lane === lane && span.end === null) span.end = at;
  }

  add(event) {
    const at = Date.parse(event.ts);
    const payload = event.payload || {};
    if (this.first === null) this.first = at;
    this.last = Math.max(this.last ?? at, at);
    if (this.stepStart === null) this.stepStart = at;
    switch (event.kind) {
      case "text.delta":
      case "thought.delta":
        this.open(`model:${payload.message_id}`, "model", `model ${payload.agent || ""}`.trim(), at);
        break;
      case "message.completed":
        this.open(`model:${payload.message_id}`, "model", "model", at);
        this.close(`model:${payload.message_id}`, at, `model${payload.agent ? ` (${payload.agent})` : ""}`);
        break;
      case "tool.call.started":
        this.open(`tool:${payload.call_id}`, "tool", `tool ${payload.tool}`, at);
        break;
      case "tool.call.completed":
        this.open(`tool:${payload.call_id}`, "tool", `tool ${payload.tool}`, at);
        this.close(`tool:${payload.call_id}`, at);
        break;
      case "step.completed":
        this.spans.set(`step:${event.seq}`, { key: `step:${event.seq}`, lane: "step",
          label: `step ${payload.name ?? payload.index}`, start: this.stepStart, end: at });
        this.stepStart = at;
        break;
      case "run.interrupted":
        this.open(`wait:${payload.interrupt_id}`, "wait",
          payload.reason === "approval" ? "waiting for approval" : "waiting for an answer", at);
        break;
      case "answer.recorded":
        this.close(`wait:${payload.interrupt_id}`, at);
        break;
      case "approval.decided":
        if (payload.interrupt_id) this.close(`wait:${payload.interrupt_id}`, at);
        break;
      case "run.paused":
        this.open(`timer:${event.seq}`, payload.wake_at ? "timer" : "wait",
          payload.wake_at ? "timer" : "paused", at);
        break;
      case "run.resumed":
        this.closeLane("timer", at);
        for (const span of this.spans.values()) {
          if (span.label === "paused" && span.end === null) span.end = at;
        }
        break;
      case "run.completed":
      case "run.failed":
      case "run.cancelled":
        this.ended = true;
        for (const span of this.spans.values()) if (span.end === null) span.end = at;
        break;
      default:
        break;
    }
  }

  child(run) {
    const start = Date.parse(run.created_at);
    const finished = ["completed", "failed", "cancelled"].includes(run.status);
    this.spans.set(`child:${run.id}`, { key: `child:${run.id}`, lane: "child",
      label: `child ${run.name}`, start, end: finished ? Date.parse(run.updated_at) : null,
      href: run.id });
  }

  draw(container, now) {
    clear(container);
    if (this.first === null) return;
    const end = this.ended ? this.last : Math.max(this.last, now);
    const width = Math.max(end - this.first, 1);
    const axis = el("div", { class: "axis" },
      el("span", {}, "0"), el("span", {}, formatDuration(width)));
    container.append(axis);
    const ordered = [...this.spans.values()].sort((a, b) => a.start - b.start);
    for (const span of ordered) {
      const stop = span.end ?? end;
      const duration = stop - span.start;
      const bar = el("div", { class: `bar lane-${span.lane}${span.end === null ? " open" : ""}` });
      bar.style.marginLeft = `${((span.start - this.first) / width) * 100}%`;
      bar.style.width = `${Math.max((duration / width) * 100, 0.5)}%`;
      container.append(el("div", { class: "span", dataset: { lane: span.lane, key: span.key } },
        el("span", { class: "span-label" }, span.label),
        el("div", { class: "track" }, bar),
        el("span", { class: "span-duration" }, span.end === null ? `${formatDuration(duration)}…` : formatDuration(duration))));
    }
  }
}
