import { api } from "./api.js";
import { h } from "./dom.js";
import { listedInTrees, roleOf, type SessionRow, statusBadge } from "./session-tree.js";

/** The list of sessions, newest first, sub-pods under their parent, and a box that starts a new one. */
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
              h("th", {}, "status"),
              h("th", {}, "last activity"),
              h("th", {}, "turns"),
              h("th", {}, "first message"),
            ),
          ),
          h(
            "tbody",
            {},
            ...listedInTrees(rows).map(({ row, depth }) =>
              h(
                "tr",
                {
                  "data-session-id": row.sessionId,
                  "data-depth": String(depth),
                  ...(row.parent === undefined ? {} : { "data-parent": row.parent.sessionId }),
                },
                h(
                  "td",
                  { class: "session-cell" },
                  depth === 0 ? null : h("span", { class: "role" }, `└ ${roleOf(row)} `),
                  h("a", { href: `#/sessions/${row.sessionId}` }, row.sessionId),
                ),
                h("td", {}, statusBadge(row)),
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
