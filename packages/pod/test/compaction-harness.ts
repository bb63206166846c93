import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { definePodkitToolPackage, type PodkitToolPackage } from "@podkit/tools";
import type { PodEvent } from "../src/pod/events.js";
import type { RunHandle } from "../src/pod/run-handle.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;

/** The first line of the builtin compaction instruction (`compact_system`). */
export const COMPACTION_INSTRUCTION_MARK = "[Compaction request from the runtime]";

/** Index of the message carrying the compaction instruction (-1: a request of the pod's own). */
export function instructionIndex(request: CapturedRequest): number {
  return ((request.body as Body).messages ?? []).findIndex(
    (message: Body) =>
      message.role === "user" && JSON.stringify(message.content).includes(COMPACTION_INSTRUCTION_MARK),
  );
}

/** A compaction request: the pod's conversation with the compaction instruction appended. */
export function isCompactRequest(request: CapturedRequest): boolean {
  return instructionIndex(request) >= 0;
}

export const mainRequests = (requests: readonly CapturedRequest[]) =>
  requests.filter((r) => !isCompactRequest(r));
export const compactRequests = (requests: readonly CapturedRequest[]) => requests.filter(isCompactRequest);

/** Every tool result of the request paired with a tool call earlier in the same request. */
export function unpairedToolResults(request: CapturedRequest): string[] {
  const calls = new Set<string>();
  const unpaired: string[] = [];
  for (const message of (request.body as Body).messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === "tool_use") calls.add(part.id);
      if (part.type === "tool_result" && !calls.has(part.tool_use_id)) unpaired.push(part.tool_use_id);
    }
  }
  return unpaired;
}

/** The compaction already got a tool result back (one after its instruction). */
const hasToolResult = (request: CapturedRequest) =>
  ((request.body as Body).messages ?? [])
    .slice(instructionIndex(request) + 1)
    .some(
      (message: Body) =>
        Array.isArray(message.content) && message.content.some((part: Body) => part.type === "tool_result"),
    );

/**
 * How the provider double answers the compaction worker: `summary` calls `write_summary` first, then
 * finishes; `script` gives the worker's responses in order (shared across compactions, cyclic).
 */
export function compactResponder(
  behaviour: { summary: string } | { script: ScriptedResponse[] },
): (request: CapturedRequest) => ScriptedResponse | undefined {
  let next = 0;
  return (request) => {
    if (!isCompactRequest(request)) return undefined;
    if ("summary" in behaviour) {
      return hasToolResult(request)
        ? { parts: [{ type: "text", text: "Summary written." }] }
        : {
            parts: [{ type: "tool_call", name: "write_summary", arguments: { summary: behaviour.summary } }],
          };
    }
    const response = behaviour.script[next % behaviour.script.length] as ScriptedResponse;
    next += 1;
    return response;
  };
}

/** A `lookup` tool whose result carries `contentBytes` bytes of output besides its summary. */
export function lookupTools(contentBytes: number): PodkitToolPackage {
  return definePodkitToolPackage({
    name: "lookup-tools",
    tools: () => [
      () => ({
        name: "lookup",
        description: "look something up",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, additionalProperties: true },
        execute: (args: Record<string, unknown>) => ({
          summary: `found ${String(args.q)}`,
          content: `${String(args.q)}: ${"data ".repeat(Math.ceil(contentBytes / 5))}`.slice(0, contentBytes),
        }),
      }),
    ],
  });
}

/** Runs a handle to its end, collecting its events. */
export async function eventsOf(handle: RunHandle): Promise<PodEvent[]> {
  const events: PodEvent[] = [];
  for await (const event of handle) events.push(event);
  return events;
}

export const ofType = <T extends PodEvent["type"]>(events: readonly PodEvent[], type: T) =>
  events.filter((event): event is Extract<PodEvent, { type: T }> => event.type === type);

/** A `[compaction]` table. */
export function compactionTable(values: Record<string, number>): string {
  return ["[compaction]", ...Object.entries(values).map(([key, value]) => `${key} = ${value}`)].join("\n");
}
