import { api } from "./api.js";
import { h } from "./dom.js";

interface SessionRow {
  sessionId: string;
  lastActivity: string;
  segments: number;
  turns: number;
  firstInput: string;
}

/** The list of sessions, newest first, and a box that starts a new one. */
export async function listPage(root: HTMLElement): Promise<void> {
  const message = h("textarea", {
    id: "message",
    rows: "3",
    placeholder: "Start a session: your first message…",
  }) as HTMLTextAreaElement;
  const send = h("button", { id: "send", type: "submit" }, "Start session");
  const problem = h("div", { class: "problem", id: "problem", hidden: "" });
  const form = h("form", { class: "compose", id: "compose" }, message, send);
  const rows = await api<SessionRow[]>("/sessions");
  const table =
    rows.length === 0
      ? h("p", { class: "empty" }, "No sessions yet.")
      : h(
          "table",
          { class: "sessions", id: "sessions" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", {}, "session"),
              h("th", {}, "last activity"),
              h("th", {}, "turns"),
              h("th", {}, "first message"),
            ),
          ),
          h(
            "tbody",
            {},
            ...rows.map((row) =>
              h(
                "tr",
                { "data-session-id": row.sessionId },
                h("td", {}, h("a", { href: `#/sessions/${row.sessionId}` }, row.sessionId)),
                h("td", {}, row.lastActivity.replace("T", " ").slice(0, 19)),
                h("td", {}, String(row.turns)),
                h("td", { class: "first-input" }, row.firstInput.slice(0, 120)),
              ),
            ),
          ),
        );
  root.replaceChildren(h("section", { id: "list" }, h("h1", {}, "Sessions"), form, problem, table));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (text === "") return;
    send.setAttribute("disabled", "");
    api<{ sessionId: string }>("/sessions", { message: text })
      .then(({ sessionId }) => {
        location.hash = `#/sessions/${sessionId}`;
      })
      .catch((error: unknown) => {
        problem.hidden = false;
        problem.textContent = error instanceof Error ? error.message : String(error);
        send.removeAttribute("disabled");
      });
  });
}
