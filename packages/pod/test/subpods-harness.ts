import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { readAllSegments, systemOf } from "./pod-harness.js";

/**
 * Routes the provider double on the system prompt: each pod of a tree has its own prompt (a
 * role's `worker.system_prompt`) and its own queue of responses, so requests of pods that run
 * concurrently never take each other's answers. `requests` keeps each pod's captured requests.
 */
export function routeBySystemPrompt(scripts: Record<string, ScriptedResponse[]>) {
  const requests: Record<string, CapturedRequest[]> = {};
  const respond = (request: CapturedRequest): ScriptedResponse | undefined => {
    const system = systemOf(request) ?? "";
    const key = Object.keys(scripts).find((k) => system.startsWith(k));
    if (key === undefined) return undefined;
    requests[key] = [...(requests[key] ?? []), request];
    return scripts[key]?.shift();
  };
  return { respond, requests, scripts };
}

/** The entries of one session's segments, by session id. */
export async function entriesBySession(workspace: string): Promise<Map<string, Entry<Item>[]>> {
  const out = new Map<string, Entry<Item>[]>();
  for (const [key, entries] of await readAllSegments(workspace)) {
    const sessionId = key.split("/")[0] as string;
    out.set(sessionId, [...(out.get(sessionId) ?? []), ...entries]);
  }
  return out;
}

/** The tool results (summary and error flag) a session's log holds, in order. */
export function toolResults(entries: readonly Entry<Item>[]): { summary: string; isError: boolean }[] {
  return entries.flatMap((entry) => {
    if (entry.kind !== "tool_result") return [];
    const item = entry.item as { summary: string; is_error?: boolean };
    return [{ summary: item.summary, isError: item.is_error === true }];
  });
}

/** A root that may write the workspace and two roles lent parts of it. */
export const TREE_MANIFEST = `
[[scope.allow]]
target = ".."
permission = "write"

[subpods.worker]
description = "writes code in src"
[subpods.worker.worker]
system_prompt = "WORKER"
[[subpods.worker.scope.allow]]
target = "../src"
permission = "write"

[subpods.reviewer]
description = "reviews code, read-only"
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
[[subpods.reviewer.scope.allow]]
target = "../src"
permission = "read"
`;
