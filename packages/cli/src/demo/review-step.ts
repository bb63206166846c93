import type { LoadedManifest } from "@podkit/manifest";
import type { PodEvent } from "@podkit/pod";
import { listSessionRows, sessionForest, treeOf } from "@podkit/session-store";
import type { CapturedRequest } from "@podkit/testkit";
import { type EventPrinter, oneLine } from "../session/event-printer.js";
import { openStore } from "../session/open-store.js";
import { sessionTreeText } from "../session/session-tree.js";
import type { Narrator } from "./narrator.js";

/**
 * A printer for a turn that runs a child pod: the pod's own events as usual, and one line per
 * tool call and for the answer of each child, named by its pod path (`root › reviewer#1`).
 */
export function withChildLines(printer: EventPrinter, say: Narrator): EventPrinter {
  return {
    ...printer,
    print(event: PodEvent) {
      if (event.type !== "subpod") {
        printer.print(event);
        return;
      }
      const inner = event.event;
      if (inner.type === "tool_call_start") {
        printer.endLine();
        say.show(`  ${event.path}: ${inner.name}(${oneLine(inner.arguments, 80)})`);
      } else if (inner.type === "run_end" && inner.result !== undefined) {
        printer.endLine();
        say.show(`  ${event.path} answers: ${oneLine(inner.result.text, 160)}`);
      }
    },
  };
}

/** The tools the model of the pod whose system prompt starts with `prompt` was offered, from its first request. */
export function toolsOffered(requests: readonly CapturedRequest[], prompt: string): string[] {
  const request = requests.find((r) => String(r.body.system?.[0]?.text ?? "").startsWith(prompt));
  const tools = (request?.body.tools ?? []) as { name: string }[];
  return tools.map((tool) => tool.name);
}

/** The sub-pod tree of `sessionId`, as `podkit session show` draws it (read from the store). */
export async function treeText(loaded: LoadedManifest, sessionId: string): Promise<string> {
  const store = await openStore(loaded, {});
  try {
    const tree = treeOf(sessionForest(await listSessionRows(store)), sessionId);
    return tree === undefined ? "" : sessionTreeText(tree, sessionId);
  } finally {
    await store.close();
  }
}
