// Signing in: the API key is posted once and never kept by the page; the server answers with
// an HttpOnly cookie the page cannot read.

import { ApiError, UI, login } from "./api.js";
import { el } from "./dom.js";

export async function renderLogin(page) {
  const key = el("input", { type: "password", id: "api-key", autocomplete: "off", required: true });
  const problem = el("p", { class: "error", id: "login-error", role: "alert" });
  const form = el("form", { id: "login", class: "card" },
    el("h1", {}, "Sign in"),
    el("label", { for: "api-key" }, "API key"), key,
    el("button", { type: "submit" }, "Sign in"), problem);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    try {
      await login(key.value);
      location.assign(`${UI}/`);
    } catch (failure) {
      problem.textContent = failure instanceof ApiError ? failure.message : String(failure);
    }
  });
  page.append(form);
}
