import { api } from "./api.js";
import { h, messageBox, sendOnCtrlEnter } from "./dom.js";
import { listedInTrees, roleOf, type SessionRow, statusBadge } from "./session-tree.js";
import { readEventStream } from "./sse-reader.js";

/**
 * The list of sessions, newest first, sub-pods under their parent, and a box that starts a new
 * one. It stays current: `GET /sessions` as an event stream sends the listing, then each session
 * that changed or appeared. Resolves with the function that stops it.
 */
export async function listPage(root: HTMLElement, context: { onUnauthorized(): void }): Promise<() => void> {
  const box = messageBox("message", "Start a session", "Your first message…");
  const message = box.textarea;
  const send = h("button", { id: "send", type: "submit" }, "Start session");
  const problem = h("div", { class: "problem", id: "problem", role: "alert", hidden: "" });
  const form = h(
    "form",
    { class: "compose", id: "compose" },
    box.label,
    h("div", { class: "compose-row" }, message, send),
    box.hint,
  ) as HTMLFormElement;
  let rows = await api<SessionRow[]>("/sessions");
  const listing = h("div", { id: "listing" });
  const section = h("section", { id: "list" }, h("h1", {}, "Sessions"), form, problem, listing);
  const draw = () => {
    // A row keeps the keyboard focus it had across a redraw.
    const focused = document.activeElement?.closest("tr")?.getAttribute("data-session-id");
    listing.replaceChildren(sessionTable(rows));
    if (focused !== null && focused !== undefined)
      listing.querySelector<HTMLElement>(`tr[data-session-id="${focused}"] a`)?.focus();
  };
  draw();
  root.replaceChildren(section);
  sendOnCtrlEnter(message, form);
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
  const stream = readEventStream(
    "/sessions",
    undefined,
    (event) => {
      const data = JSON.parse(event.data) as unknown;
      if (event.event === "sessions") {
        rows = data as SessionRow[];
        section.dataset.live = "true";
      } else if (event.event === "session") {
        const row = data as SessionRow;
        const at = rows.findIndex((r) => r.sessionId === row.sessionId);
        // A session new since the listing was read is newer than every session in it.
        rows = at < 0 ? [row, ...rows] : rows.map((r, i) => (i === at ? row : r));
      } else if (event.event === "removed") {
        const { sessionId } = data as { sessionId: string };
        rows = rows.filter((r) => r.sessionId !== sessionId);
      } else return;
      draw();
    },
    (state, _detail, httpStatus) => {
      if (state !== "open") section.dataset.live = "false";
      if (httpStatus === 401) context.onUnauthorized();
    },
  );
  return () => stream.stop();
}

function sessionTable(rows: readonly SessionRow[]): HTMLElement {
  if (rows.length === 0) return h("p", { class: "empty" }, "No sessions yet.");
  return h(
    "table",
    { class: "sessions", id: "sessions" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "session"),
        h("th", { scope: "col" }, "status"),
        h("th", { scope: "col" }, "last activity"),
        h("th", { scope: "col" }, "turns"),
        h("th", { scope: "col" }, "first message"),
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
}
