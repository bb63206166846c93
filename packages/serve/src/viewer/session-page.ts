import { ApiError, api } from "./api.js";
import { h } from "./dom.js";
import { type LogEntry, SessionModel } from "./session-model.js";
import { SessionRenderer } from "./session-render.js";
import { drawTree, type TreeNode } from "./session-tree.js";
import { readEventStream } from "./sse-reader.js";

const CACHE_PREFIX = "podkit.log.";

/** How often the tree is asked again while one of its sessions runs (a child in the background). */
const TREE_POLL_MS = 3_000;
/** Entries after which this session's node (or its children) may read differently. */
const TREE_ENTRY_KINDS = new Set([
  "invoke",
  "tool_result",
  "turn_end",
  "run_completed",
  "run_errored",
  "approval_requested",
  "approval_answered",
]);

/**
 * The page of one session: the tree of sub-pods it belongs to, its log streamed live, the preview
 * of the response in flight, a message box and the interrupt button. What it has received is kept
 * for this tab, so a reload draws it at once and the stream resumes after the last entry instead
 * of starting over. `tree` is the one `GET /sessions/:id` gave; it is asked again after new
 * entries (a child spawned, a run ended) and, while a session of it runs, every few seconds.
 */
export function sessionPage(root: HTMLElement, sessionId: string, tree: TreeNode): () => void {
  const model = new SessionModel();
  const timeline = h("div", { class: "timeline", id: "timeline" });
  const renderer = new SessionRenderer(timeline, (callId, decision) => {
    api(`/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(callId)}`, { decision })
      .then(() => {
        problem.hidden = true;
      })
      .catch((error: unknown) => showProblem(problem, error));
  });
  const state = h("span", { class: "state", id: "stream-state" }, "connecting");
  const interrupt = h("button", { id: "interrupt", type: "button", hidden: "" }, "Interrupt");
  const message = h("textarea", {
    id: "message",
    rows: "3",
    placeholder: "Message the pod…",
  }) as HTMLTextAreaElement;
  const send = h("button", { id: "send", type: "submit" }, "Send");
  const problem = h("div", { class: "problem", id: "problem", hidden: "" });
  const treeBox = h("nav", { class: "tree", id: "tree", "aria-label": "sub-pods", hidden: "" });
  const page = h(
    "section",
    { id: "session", "data-session-id": sessionId },
    h(
      "div",
      { class: "session-head" },
      h("a", { href: "#/" }, "← sessions"),
      h("h1", {}, `Session ${sessionId}`),
      state,
      interrupt,
    ),
    treeBox,
    timeline,
    problem,
    h("form", { class: "compose", id: "compose" }, message, send),
  );
  root.replaceChildren(page);
  const trees = treeUpdates(treeBox, sessionId, tree);

  const cached = readCache(sessionId);
  model.entries = cached;
  renderer.redraw(model.entries, undefined);
  const refresh = () => {
    const running = model.running;
    page.dataset.running = String(running);
    interrupt.hidden = !running;
    renderer.showPreview(model.visiblePreview);
  };
  refresh();

  let saveTimer: number | undefined;
  const save = () => {
    saveTimer = undefined;
    writeCache(sessionId, model.entries);
  };
  const stream = readEventStream(
    `/sessions/${encodeURIComponent(sessionId)}/events`,
    model.lastId,
    (event) => {
      const change = model.apply(event);
      if (change.kind === "entry") renderer.add(change.entry);
      else if (change.kind === "all") renderer.redraw(model.entries, undefined);
      else if (change.kind === "live") page.dataset.live = "true";
      if (change.kind === "entry" || change.kind === "all") {
        saveTimer ??= window.setTimeout(save, 100);
        // The tree is read whole: ask again only for an entry that can change a node (status,
        // turns, a spawned child, pending approvals), not for every text or usage entry.
        if (change.kind === "all" || TREE_ENTRY_KINDS.has(change.entry.entry.kind)) trees.soon();
      }
      refresh();
    },
    (status, detail) => {
      state.textContent = status === "open" ? "live" : status;
      if (detail !== undefined && detail !== "") showProblem(problem, detail);
    },
  );
  window.addEventListener("pagehide", save);

  interrupt.addEventListener("click", () => {
    api(`/sessions/${encodeURIComponent(sessionId)}/interrupt`, {}).catch((error: unknown) =>
      showProblem(problem, error),
    );
  });
  page.querySelector("form")?.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (text === "") return;
    send.setAttribute("disabled", "");
    api(`/sessions/${encodeURIComponent(sessionId)}/messages`, { message: text })
      .then(() => {
        message.value = "";
        problem.hidden = true;
      })
      .catch((error: unknown) => showProblem(problem, error))
      .finally(() => send.removeAttribute("disabled"));
  });
  return () => {
    trees.stop();
    stream.stop();
    window.removeEventListener("pagehide", save);
    if (saveTimer !== undefined) window.clearTimeout(saveTimer);
    save();
  };
}

/**
 * Draws `tree` into `box` and keeps it current: `soon()` asks the server again shortly (many
 * entries in a row make one request), and while a session of the tree runs it is asked every few
 * seconds, since a child's progress is not in this session's stream.
 */
function treeUpdates(box: HTMLElement, sessionId: string, tree: TreeNode) {
  let timer: number | undefined;
  let stopped = false;
  const running = (node: TreeNode): boolean => node.status === "open" || node.children.some(running);
  const show = (next: TreeNode) => {
    drawTree(box, next, sessionId);
    if (running(next)) schedule(TREE_POLL_MS);
  };
  const schedule = (ms: number) => {
    if (stopped || timer !== undefined) return;
    timer = window.setTimeout(() => {
      timer = undefined;
      api<{ tree: TreeNode }>(`/sessions/${encodeURIComponent(sessionId)}`)
        .then((view) => (stopped ? undefined : show(view.tree)))
        .catch(() => schedule(TREE_POLL_MS));
    }, ms);
  };
  show(tree);
  return {
    soon: () => schedule(300),
    stop: () => {
      stopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    },
  };
}

function showProblem(box: HTMLElement, error: unknown): void {
  box.hidden = false;
  box.textContent =
    error instanceof ApiError
      ? `${error.status}: ${error.message}`
      : String(error instanceof Error ? error.message : error);
}

function readCache(sessionId: string): LogEntry[] {
  try {
    const text = sessionStorage.getItem(CACHE_PREFIX + sessionId);
    return text === null ? [] : (JSON.parse(text) as LogEntry[]);
  } catch {
    return [];
  }
}

function writeCache(sessionId: string, entries: readonly LogEntry[]): void {
  try {
    sessionStorage.setItem(CACHE_PREFIX + sessionId, JSON.stringify(entries));
  } catch {
    // Over the tab's storage quota: a reload replays the stream from the start instead.
    sessionStorage.removeItem(CACHE_PREFIX + sessionId);
  }
}
