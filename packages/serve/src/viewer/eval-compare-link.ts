import { h } from "./dom.js";
import type { LogEntry } from "./session-model.js";

/** The entry that makes a session an eval item (docs/evals.md): the first after its `segment_start`. */
function isEvalOrigin(logged: LogEntry): boolean {
  return logged.entry.kind === "extension" && logged.entry.domain === "eval.origin";
}

/**
 * The link from a session's page to its compare page (`#/sessions/<id>/compare`): hidden until the
 * entries the page holds show the session is an eval item. `seen` takes what arrived (or all of it).
 */
export function evalCompareLink(sessionId: string): {
  element: HTMLElement;
  seen(entries: readonly LogEntry[]): void;
} {
  const link = h(
    "a",
    { id: "compare-link", href: `#/sessions/${encodeURIComponent(sessionId)}/compare`, hidden: "" },
    "Compare with the original",
  );
  return {
    element: link,
    seen(entries) {
      if (link.hidden && entries.some(isEvalOrigin)) link.hidden = false;
    },
  };
}
