// Building the page without ever parsing markup: every text a run produced goes in through
// textContent, so a model's or a tool's "<script>" stays a string on the screen.

/** An element with attributes (strings only; no event-handler attributes) and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) throw new Error(`use addEventListener, not ${name}`);
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** Append children: nodes as they are, anything else as text. */
export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** JSON shown as text, indented. */
export function jsonBlock(value) {
  return el("pre", { class: "json" }, JSON.stringify(value, null, 2) ?? "null");
}

export function formatTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { hour12: false });
}

export function formatDuration(milliseconds) {
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 60000) return `${(milliseconds / 1000).toFixed(2)} s`;
  return `${Math.floor(milliseconds / 60000)} min ${Math.round((milliseconds % 60000) / 1000)} s`;
}

export function statusBadge(status) {
  return el("span", { class: `status status-${status}`, dataset: { status } }, status);
}
