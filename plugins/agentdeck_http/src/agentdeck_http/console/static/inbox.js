// The inbox: every open question and tool approval, oldest first, each with a form generated
// from the shape its answer must fit. The server decides; a refusal is shown where it was made.

import { ApiError, UI, get, overlappingReads, post, stream } from "./api.js";
import { el, formatTime, jsonBlock } from "./dom.js";

function isApproval(item) {
  return item.interrupt.reason === "approval";
}

/** The value typed into a field, as the schema's type would have it (or the raw text). */
function typed(text, type) {
  const trimmed = text.trim();
  if (type === "integer" || type === "number") {
    return trimmed !== "" && !Number.isNaN(Number(trimmed)) ? Number(trimmed) : text;
  }
  if (type === "string") return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

function answerForm(item, send) {
  const expected = item.interrupt.expected || {};
  if (isApproval(item)) {
    const message = el("input", { class: "deny-message", placeholder: "why not (optional)" });
    const approve = el("button", { type: "button", class: "approve" }, "Approve");
    const deny = el("button", { type: "button", class: "deny" }, "Deny");
    approve.addEventListener("click", () => send({ approved: true }));
    deny.addEventListener("click", () =>
      send(message.value ? { approved: false, message: message.value } : { approved: false }));
    return el("div", { class: "answer" }, approve, deny, message);
  }
  if (expected.options && expected.options.length) {
    return el("div", { class: "answer options" }, expected.options.map((option) => {
      const choice = el("button", { type: "button", class: "option", dataset: { value: JSON.stringify(option) } },
        typeof option === "string" ? option : JSON.stringify(option));
      choice.addEventListener("click", () => send(option));
      return choice;
    }));
  }
  const schema = expected.json_schema || {};
  if (schema.type === "boolean") {
    const yes = el("button", { type: "button", class: "option" }, "true");
    const no = el("button", { type: "button", class: "option" }, "false");
    yes.addEventListener("click", () => send(true));
    no.addEventListener("click", () => send(false));
    return el("div", { class: "answer" }, yes, no);
  }
  const simple = ["integer", "number", "string"].includes(schema.type);
  const input = simple
    ? el("input", { class: "answer-input", inputmode: schema.type === "string" ? "text" : "decimal",
      placeholder: schema.type, "aria-label": `answer (${schema.type})` })
    : el("textarea", { class: "answer-input", rows: 3, placeholder: "JSON", "aria-label": "answer (JSON)" });
  const form = el("form", { class: "answer" }, input,
    el("span", { class: "muted" }, schema.type ? `expects ${schema.type}` : "JSON or text"),
    el("button", { type: "submit" }, "Answer"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(typed(input.value, schema.type));
  });
  return form;
}

function question(item) {
  const payload = item.interrupt.payload;
  if (isApproval(item)) {
    const tool = payload && payload.tool;
    return [el("p", { class: "question" }, "Tool call ", el("code", {}, String(tool ?? "?")), " needs approval"),
      el("p", {}, "arguments:"), jsonBlock(payload && payload.args !== undefined ? payload.args : payload)];
  }
  return typeof payload === "string" ? [el("p", { class: "question" }, payload)] : [jsonBlock(payload)];
}

export async function renderInbox(page, who) {
  const namespace = new URLSearchParams(location.search).get("namespace") || undefined;
  const list = el("ol", { id: "inbox", class: "inbox" });
  const note = el("p", { class: "muted", id: "inbox-note" });
  page.append(el("h1", {}, "Inbox"), note, list);

  // An older load drawn last would drop the card of a question asked since, and with it
  // whatever an operator is typing there.
  const loads = overlappingReads();

  async function load() {
    const mine = loads.begin();
    const items = [];
    let cursor = null;
    do {
      const found = await get("/inbox", { namespace, cursor, limit: 200 });
      if (!loads.isNewest(mine)) return;
      items.push(...found.items);
      cursor = found.next_cursor;
    } while (cursor);
    // Cards still open keep their node, so an answer being typed is not lost to a redraw.
    const kept = new Map([...list.children].map((node) => [node.dataset.interruptId, node]));
    const cards = items.map((item) => kept.get(item.interrupt.interrupt_id) || card(item));
    list.replaceChildren(...cards);
    note.textContent = items.length ? "" : "Nothing is waiting for an answer.";
  }

  function card(item) {
    const refusal = el("p", { class: "refusal error", role: "alert" });
    const node = el("li", { class: "card item", dataset: { runId: item.run.id, interruptId: item.interrupt.interrupt_id } });
    async function send(value) {
      refusal.textContent = "";
      try {
        await post(`/runs/${encodeURIComponent(item.run.id)}/answer`,
          { value, interrupt_id: item.interrupt.interrupt_id }, { namespace });
        node.classList.add("answered");
        node.replaceChildren(el("p", { class: "done" }, `Answered: ${JSON.stringify(value)}`));
      } catch (failure) {
        refusal.textContent = failure instanceof ApiError ? failure.message : String(failure);
      }
    }
    node.append(
      el("p", { class: "muted" }, el("a", { href: `${UI}/runs/${encodeURIComponent(item.run.id)}` },
        `${item.run.name} · ${item.run.id}`), ` · ${isApproval(item) ? "tool approval" : "question"}`,
        ` · asked ${formatTime(item.run.updated_at)}`),
      ...question(item), answerForm(item, send), refusal);
    return node;
  }

  await load();
  let pending = null;
  const statuses = new Map();
  stream("/runs/changes", { namespace }, ["run.changed"], (_kind, run) => {
    const before = statuses.get(run.id);
    statuses.set(run.id, run.status);
    const relevant = run.status === "waiting_answer" || before === "waiting_answer";
    if (!relevant) return;  // a new question of a waiting run moves its seq, not its status
    clearTimeout(pending);
    pending = setTimeout(load, 100);
  });
  void who;
}
