import { announce } from "./announcer.js";
import { ApiError, api, authHeaders } from "./api.js";
import { h, messageBox, sendOnCtrlEnter } from "./dom.js";
import { evalCompareLink } from "./eval-compare-link.js";
import { confirmRewind, type RewindReport } from "./rewind-dialog.js";
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

/** What the page knows of the person using it, and what it does when the server stops knowing them. */
export interface PageContext {
  /** The name an answer from this page is recorded under (`GET /identity`). */
  answersAs: string | undefined;
  /** The server answered 401 (the token was changed or revoked meanwhile). */
  onUnauthorized(): void;
  /** Draws the page again from the server (after a rewind changed the session's line). */
  reload(): Promise<void>;
}

/**
 * The page of one session: the tree of sub-pods it belongs to, its log streamed live, the preview
 * of the response in flight, a message box and the interrupt button. What it has received is kept
 * for this tab, so a reload draws it at once and the stream resumes after the last entry instead
 * of starting over. `tree` is the one `GET /sessions/:id` gave; it is asked again after new
 * entries (a child spawned, a run ended) and, while a session of it runs, every few seconds.
 * An approval waiting for a person is scrolled to and announced (the live region): each new one
 * as it arrives, and those already waiting once the stream has caught up.
 */
export function sessionPage(
  root: HTMLElement,
  sessionId: string,
  tree: TreeNode,
  context: PageContext,
): () => void {
  const model = new SessionModel();
  const timeline = h("div", { class: "timeline", id: "timeline" });
  let caughtUp = false;
  /** Set by a rewind: the page is drawn again from the stream, not from what this tab kept. */
  let forget = false;
  /** The calls already revealed: a redraw (a rolled-back log) does not announce them again. */
  const revealed = new Set<string>();
  const reveal = (blocks: readonly HTMLElement[]) =>
    revealApprovals(
      blocks.filter((block) => !revealed.has(block.dataset.callId ?? "")),
      revealed,
    );
  const renderer = new SessionRenderer(timeline, {
    answersAs: context.answersAs,
    answer: (callId, decision, reason) =>
      api(`/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(callId)}`, {
        decision,
        ...(reason === undefined ? {} : { reason }),
      }).then(
        () => {
          problem.hidden = true;
        },
        (error: unknown) => {
          showProblem(problem, error);
          throw error;
        },
      ),
    onPendingApproval: (block) => {
      if (caughtUp) reveal([block]);
    },
    media: async (digest) => {
      const response = await fetch(
        `/sessions/${encodeURIComponent(sessionId)}/media/${encodeURIComponent(digest)}`,
        { headers: authHeaders() },
      );
      if (!response.ok) throw new ApiError(response.status, response.statusText);
      return response.blob();
    },
    rewind: (turn, button) => {
      const path = `/sessions/${encodeURIComponent(sessionId)}/rewind`;
      void confirmRewind(turn, (body) => api<RewindReport>(path, body)).then((report) => {
        if (report === undefined) {
          button.focus();
          return;
        }
        announce(rewoundText(report));
        forget = true;
        void context.reload().then(() => document.getElementById("message")?.focus());
      });
    },
  });
  const state = h("span", { class: "state", id: "stream-state" }, "connecting");
  const interrupt = h("button", { id: "interrupt", type: "button", hidden: "" }, "Interrupt");
  const box = messageBox("message", "Message the pod", "What should it do next?");
  const message = box.textarea;
  const send = h("button", { id: "send", type: "submit" }, "Send");
  const problem = h("div", { class: "problem", id: "problem", role: "alert", hidden: "" });
  const treeBox = h("nav", { class: "tree", id: "tree", "aria-label": "sub-pods", hidden: "" });
  const compare = evalCompareLink(sessionId);
  const page = h(
    "section",
    { id: "session", "data-session-id": sessionId },
    h(
      "div",
      { class: "session-head" },
      h("a", { href: "#/" }, "← sessions"),
      h("h1", {}, `Session ${sessionId}`),
      compare.element,
      state,
      interrupt,
    ),
    treeBox,
    timeline,
    problem,
    h(
      "form",
      { class: "compose", id: "compose" },
      box.label,
      h("div", { class: "compose-row" }, message, send),
      box.hint,
    ),
  );
  root.replaceChildren(page);
  sendOnCtrlEnter(message, page.querySelector("form") as HTMLFormElement);
  const trees = treeUpdates(treeBox, sessionId, tree);

  const cached = readCache(sessionId);
  model.entries = cached;
  renderer.redraw(model.entries, undefined);
  compare.seen(model.entries);
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
      else if (change.kind === "live") {
        page.dataset.live = "true";
        if (!caughtUp) {
          caughtUp = true;
          reveal([...timeline.querySelectorAll<HTMLElement>(".approval[data-answerable]")]);
        }
      }
      if (change.kind === "entry" || change.kind === "all") {
        compare.seen(change.kind === "entry" ? [change.entry] : model.entries);
        saveTimer ??= window.setTimeout(save, 100);
        // The tree is read whole: ask again only for an entry that can change a node (status,
        // turns, a spawned child, pending approvals), not for every text or usage entry.
        if (change.kind === "all" || TREE_ENTRY_KINDS.has(change.entry.entry.kind)) trees.soon();
      }
      refresh();
    },
    (status, detail, httpStatus) => {
      state.textContent = status === "open" ? "live" : status;
      if (httpStatus === 401) context.onUnauthorized();
      else if (detail !== undefined && detail !== "") showProblem(problem, detail);
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
    if (forget) sessionStorage.removeItem(CACHE_PREFIX + sessionId);
    else save();
  };
}

/** What a screen reader is told once a rewind is done. */
function rewoundText(report: RewindReport): string {
  const files = report.files.filter((file) => file.action !== "unchanged").length;
  return `Rewound to turn ${report.toTurn}: ${files} file${files === 1 ? "" : "s"} restored or removed${
    report.conversation.action === "fork" ? ", and the conversation continues from there" : ""
  }.`;
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
  const announced = new Set<string>();
  const show = (next: TreeNode) => {
    drawTree(box, next, sessionId);
    announceWaiting(next, sessionId, announced);
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

/**
 * Brings approvals waiting for a person into view (the first of them) and says what they ask, so
 * someone not looking at the page, or using a screen reader, learns a run waits on them.
 */
function revealApprovals(blocks: readonly HTMLElement[], revealed: Set<string>): void {
  if (blocks.length === 0) return;
  blocks[0]?.scrollIntoView({ block: "center" });
  for (const block of blocks) {
    revealed.add(block.dataset.callId ?? "");
    const what =
      block.querySelector("[data-arg='command']")?.textContent ??
      block.querySelector("[data-arg='path']")?.textContent ??
      "";
    const shown = what.length > 160 ? `${what.slice(0, 160)}…` : what;
    announce(
      `Approval needed: ${block.dataset.tool}${shown === "" ? "" : ` — ${shown}`}. Allow or Deny it on the page.`,
    );
  }
}

/** Announces each approval another session of the tree newly waits for (answered on its page). */
function announceWaiting(node: TreeNode, shown: string, announced: Set<string>): void {
  if (node.sessionId !== shown) {
    for (const approval of node.pendingApprovals) {
      const key = `${node.sessionId}:${approval.callId}`;
      if (announced.has(key)) continue;
      announced.add(key);
      const who = node.parent === undefined ? "the root" : `sub-pod ${node.parent.role}`;
      announce(`${who} waits for your approval of ${approval.tool}: open it from the sub-pods list.`);
    }
  }
  for (const child of node.children) announceWaiting(child, shown, announced);
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
