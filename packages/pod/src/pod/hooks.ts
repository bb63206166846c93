import type {
  AbortContext,
  AfterToolBatchDecision,
  Interceptor,
  Item,
  PostToolCallDecision,
  PreRequestContext,
  PreRequestDecision,
  PreToolCallDecision,
  ToolCallItem,
  ToolOutput,
  ToolResultItem,
  TurnEndContext,
  TurnEndDecision,
} from "@podkit/llm-worker";
import { deferredCallOf } from "@podkit/tools";
import type { SubpodPlacement } from "../subpods/placement.js";
import { type HookToolDecision, ROOT_POD_PATH } from "./approvals.js";

type Maybe<T> = T | Promise<T>;

/**
 * Which pod a hook runs for: the last argument of every hook. A hook object shared by the pods
 * of a tree (`PodOptions.childHooks`) tells them apart by it.
 */
export interface HookPod {
  /** The pod's path from its root, as approvals name it: `["root"]`, a child's `["root", "worker#1"]`. */
  readonly podPath: readonly string[];
  readonly sessionId: string;
  /** The child's role (`[subpods.<role>]`); null for a root. */
  readonly role: string | null;
  /** 0 for a root, 1 for its children, and so on. */
  readonly depth: number;
}

/** The identity hooks get for a pod at `placement` (undefined: a root) in session `sessionId`. */
export function hookPodOf(placement: SubpodPlacement | undefined, sessionId: string): HookPod {
  return Object.freeze({
    podPath: Object.freeze(placement === undefined ? [...ROOT_POD_PATH] : placement.path.split(" › ")),
    sessionId,
    role: placement?.link.role ?? null,
    depth: placement?.link.depth ?? 0,
  });
}

/**
 * The public hooks. They see read-only views and return decisions only; they cannot
 * change history or the request (that is the pod's own interceptor's job). Every hook gets,
 * last, the identity of the pod it runs for (`HookPod`).
 */
export interface PodHooks {
  onPromptSubmit?(
    input: { readonly text: string },
    pod: HookPod,
  ): Maybe<{ action: "continue" } | { action: "cancel"; reason?: string }>;
  preRequest?(
    context: PreRequestContext,
    pod: HookPod,
  ): Maybe<{ action: "continue" } | { action: "cancel"; reason?: string } | { action: "yield" }>;
  /**
   * `ask` asks for an approval (`askedBy` names the asker in the log, default `hook`): the
   * request is committed, the pod's approver (if any) answers now, else the run ends
   * `awaiting_approval` (docs/approvals.md).
   */
  preToolCall?(call: Readonly<ToolCallItem>, pod: HookPod): Maybe<HookToolDecision>;
  postToolCall?(
    call: Readonly<ToolCallItem>,
    result: Readonly<ToolResultItem>,
    pod: HookPod,
  ): Maybe<
    | { action: "continue" }
    | { action: "abort"; reason?: string }
    | Extract<PostToolCallDecision, { action: "rewrite" }>
  >;
  onTurnEnd?(context: TurnEndContext, pod: HookPod): Maybe<{ action: "finish" } | { action: "pause" }>;
  onAbort?(context: AbortContext, pod: HookPod): Maybe<void>;
}

/**
 * The pod's own step hooks: notifications and context blocks in, and before each request the
 * prune (`continue_with` a request-local copy) and the `request_threshold` check (`yield`).
 */
export interface InternalInterceptor {
  pendingHistoryAppends(): Maybe<Item[]>;
  preRequest(context: PreRequestContext): Maybe<PreRequestDecision>;
  /** The approval gate: it asks `hooks` when the log holds no answer for the call yet. */
  preToolCall(call: ToolCallItem, hooks: () => Promise<HookToolDecision>): Promise<PreToolCallDecision>;
  /**
   * After a call, before the hooks: containment's refusals (`output.denied`) go into the log, then
   * the after-tool guardrails; a guardrail's rewrite or abort wins (the hooks do not run).
   */
  postToolCall(
    call: ToolCallItem,
    result: ToolResultItem,
    output: Readonly<ToolOutput>,
  ): Promise<PostToolCallDecision>;
  /** The final-answer guardrails, before the hooks' `onTurnEnd`. */
  onTurnEnd(context: TurnEndContext): Promise<TurnEndDecision>;
  /** The typed answer came in a `final_answer` call: the run ends after its batch. */
  afterToolBatch(context: { readonly requests: number }): Promise<AfterToolBatchDecision>;
}

/**
 * A deep, frozen copy: hooks are read-only, and a frozen shallow copy would still hand
 * them the worker's own items to mutate. Copied only for hooks that exist (an optional call
 * does not evaluate its arguments).
 */
export function readOnly<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * One interceptor for the worker: the internal one first, then every hook in registration
 * order, each given the pod's identity (`pod`, read when a hook is called: the session exists
 * by then); the first decision other than continue/finish wins.
 */
export function composeInterceptor(
  internal: InternalInterceptor,
  hooks: readonly PodHooks[],
  pod: () => HookPod,
): Interceptor {
  return {
    pendingHistoryAppends: () => internal.pendingHistoryAppends(),
    async preRequest(context) {
      const own = await internal.preRequest(context);
      if (own.action !== "continue" && own.action !== "continue_with") return own;
      for (const hook of hooks) {
        if (hook.preRequest === undefined) continue;
        // The signal is a live object (not cloneable); everything else is a frozen copy.
        const { signal, ...data } = context;
        const decision = await hook.preRequest({ ...readOnly(data), signal }, pod());
        if (decision !== undefined && decision.action !== "continue") return decision;
      }
      // Hooks decide on what history holds; the request itself goes out as the pod prepared it.
      return own;
    },
    preToolCall(called) {
      // A `call_tool` call is decided as the deferred tool's own call (docs/tools-deferred.md).
      const call = deferredCallOf(called) ?? called;
      return internal.preToolCall(call, async () => {
        for (const hook of hooks) {
          const decision = await hook.preToolCall?.(readOnly(call), pod());
          if (decision !== undefined && decision.action !== "continue") return decision;
        }
        return { action: "continue" };
      });
    },
    async postToolCall(called, result, output) {
      const call = deferredCallOf(called) ?? called;
      const own = await internal.postToolCall(call, result, output);
      if (own.action !== "continue") return own;
      for (const hook of hooks) {
        const decision = await hook.postToolCall?.(readOnly(call), readOnly(result), pod());
        if (decision !== undefined && decision.action !== "continue") return decision;
      }
      return { action: "continue" };
    },
    async onTurnEnd(context) {
      const own = await internal.onTurnEnd(context);
      if (own.action !== "finish") return own;
      for (const hook of hooks) {
        const decision = await hook.onTurnEnd?.(readOnly(context), pod());
        if (decision !== undefined && decision.action !== "finish") return decision;
      }
      return { action: "finish" };
    },
    afterToolBatch: (context) => internal.afterToolBatch(context),
    async onAbort(context) {
      for (const hook of hooks) {
        if (hook.onAbort !== undefined)
          await hook.onAbort({ error: context.error, history: readOnly(context.history) }, pod());
      }
    },
  };
}
