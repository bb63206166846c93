import type { Item } from "@podkit/llm-worker";
import {
  FINAL_OUTPUT_DOMAIN,
  type ParentLink,
  parentOf,
  restoreSession,
  type SessionState,
  type Store,
} from "@podkit/session-store";

/** A child session as its parent lists it (`pod.children()`, `list_pods`). */
export interface ChildPodInfo {
  readonly sessionId: string;
  readonly role: string;
  readonly depth: number;
  /** The parent's `spawn_pod` call that created it. */
  readonly callId: string;
  /**
   * `running`: a run in progress; `idle`: in memory, waiting; `awaiting_approval`: its last run
   * stopped on calls a person must answer; `stopped`: by `stop_pod` or the parent's close;
   * `failed`: its last run failed; `stored`: only in the log.
   */
  readonly status: "running" | "idle" | "awaiting_approval" | "stopped" | "failed" | "stored";
  /** The pod path, e.g. `root › reviewer#2`. */
  readonly path: string;
  readonly turns: number;
  /** Input and output tokens of the child's head segment. */
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
  /**
   * The child's latest typed answer (its last `final_output` entry), for a role with an output
   * schema (docs/subpods.md#typed-answers); absent before it gave one.
   */
  readonly output?: unknown;
}

/**
 * The child sessions of `parentSessionId` with their links, oldest first (ids are UUIDv7), from
 * the store's child index.
 */
export async function childSessionsOf(
  store: Store<Item>,
  parentSessionId: string,
): Promise<{ sessionId: string; link: ParentLink }[]> {
  const found: { sessionId: string; link: ParentLink }[] = [];
  for (const sessionId of await store.listChildSessions(parentSessionId)) {
    const link = await parentOf(store, sessionId);
    if (link?.session_id === parentSessionId) found.push({ sessionId, link });
  }
  return found.reverse();
}

/** A stored child's turns and usage, replayed from its head segment. */
export async function storedChildInfo(
  store: Store<Item>,
  child: { sessionId: string; link: ParentLink },
  path: string,
): Promise<ChildPodInfo> {
  const state = await restoreSession(store, child.sessionId);
  const output = latestOutputOf(state);
  return {
    sessionId: child.sessionId,
    role: child.link.role,
    depth: child.link.depth,
    callId: child.link.call_id,
    status: "stored",
    path,
    turns: state.turn,
    usage: {
      inputTokens: state.usage.reduce((sum, u) => sum + u.inputTokens, 0),
      outputTokens: state.usage.reduce((sum, u) => sum + u.outputTokens, 0),
    },
    ...(output === undefined ? {} : { output: output.value }),
  };
}

/** A stored child's latest typed answer, from its head segment. */
export async function storedChildOutput(
  store: Store<Item>,
  sessionId: string,
): Promise<{ value: unknown } | undefined> {
  return latestOutputOf(await restoreSession(store, sessionId));
}

/** The value of the last `final_output` entry a session's state folded (replaced, never merged). */
function latestOutputOf(state: SessionState<Item>): { value: unknown } | undefined {
  const payload = state.extensions.get(FINAL_OUTPUT_DOMAIN);
  if (typeof payload !== "object" || payload === null || !Object.hasOwn(payload, "value")) return undefined;
  return { value: (payload as { value: unknown }).value };
}
