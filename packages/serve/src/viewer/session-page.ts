import { ApiError, api } from "./api.js";
import { h } from "./dom.js";
import { type LogEntry, SessionModel } from "./session-model.js";
import { SessionRenderer } from "./session-render.js";
import { readEventStream } from "./sse-reader.js";

const CACHE_PREFIX = "podkit.log.";

/**
 * The page of one session: its log streamed live, the preview of the response in flight, a
 * message box and the interrupt button. What it has received is kept for this tab, so a reload
 * draws it at once and the stream resumes after the last entry instead of starting over.
 */
export function sessionPage(root: HTMLElement, sessionId: string): () => void {
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
    timeline,
    problem,
    h("form", { class: "compose", id: "compose" }, message, send),
  );
  root.replaceChildren(page);

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
      if (change.kind === "entry" || change.kind === "all") saveTimer ??= window.setTimeout(save, 100);
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
    stream.stop();
    window.removeEventListener("pagehide", save);
    if (saveTimer !== undefined) window.clearTimeout(saveTimer);
    save();
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
