import { type Item, type Tool, type ToolCallItem, ToolCallItemSchema } from "@podkit/llm-worker";
import { BUILTIN_TOOL_NAMES, type LoadedManifest, type PermissionMode } from "@podkit/manifest";
import { CorruptEntryError, type ParentLink, type Store } from "@podkit/session-store";
import { builtinToolPackage, createSandbox } from "@podkit/tools";
import { PodUsageError } from "../errors.js";
import { loadSubpodRoles, type SubpodRole } from "../subpods/roles.js";
import { type SubpodToolTarget, subpodTools } from "../subpods/subpod-tools.js";
import { processWarningSink, type WarningSink } from "../warnings.js";
import { effectiveMode, PermissionPolicy } from "./permissions.js";

/**
 * What podkit knows of a tool's effect without starting anything: `reads` (it declares
 * `readOnly`), `changes` (it declares nothing: a writing tool, `bash`), or `unknown` (an MCP
 * tool, a tool package's, memory's: shadow mode loads none of them, so it is treated as changing
 * things, as the conservative side).
 */
export type ToolEffect = "reads" | "changes" | "unknown";

/** One recorded call the manifest's mode or rules would not let run as it did. */
export interface PolicyFinding {
  sessionId: string;
  /** The segment the call was first recorded in. */
  segmentId: string;
  callId: string;
  tool: string;
  /** The call's arguments as recorded (the model's JSON text). */
  arguments: string;
  /** `deny`: it would not run; `ask`: it would wait for an approval first. */
  outcome: "deny" | "ask";
  /** `mode` (read_only, by the tool's effect) or a `rule` of `[[permissions.rule]]`. */
  decidedBy: "mode" | "rule";
  /** The rule as the manifest spells it (`describeRule`), or `mode = "read_only"`. */
  rule: string;
  /** What the model (or the person asked) would be told. */
  reason: string;
  effect: ToolEffect;
}

/** One session the check read. */
export interface CheckedSession {
  sessionId: string;
  /** The mode its calls were checked under (a sub-pod's: the tighter of its parent's and its role's); absent when unchecked. */
  mode?: PermissionMode;
  segments: number;
  /** Distinct tool calls (by call id) across its segments. */
  calls: number;
  /** For a sub-pod session reached with `tree`: its parent session and role. */
  parentSessionId?: string;
  role?: string;
  /** Why its calls were not checked (a sub-pod whose role the manifest no longer declares). */
  unchecked?: string;
}

/** What `checkPolicy` found: every call that would be denied or asked about, and what it read. */
export interface PolicyCheckReport {
  /** The mode the named sessions were checked under. */
  mode: PermissionMode;
  /** `[[permissions.rule]]` entries of the manifest (every layer). */
  rules: number;
  sessions: CheckedSession[];
  callsChecked: number;
  findings: PolicyFinding[];
}

/** Options of `checkPolicy`. */
export interface CheckPolicyOptions {
  /** The manifest whose `[permissions]` (mode and rules) the calls are checked against. */
  loaded: LoadedManifest;
  /**
   * Where the sessions are: `openSessionStore(loaded)`, or any store validating what it reads with
   * llm-worker's `ItemSchema` (a damaged log is then `CorruptEntryError` naming its file and line).
   */
  store: Store<Item>;
  sessionIds: readonly string[];
  /** The mode to check under instead of the manifest's `[permissions] mode` (as `PodOptions.mode`). */
  mode?: PermissionMode;
  /** Also check every sub-pod session under each one, each under its role's mode and rules. */
  tree?: boolean;
  /** Where a role that cannot be lent to a sub-pod is reported; default a process warning. */
  onWarning?: WarningSink;
}

/**
 * Shadow mode: replays the tool calls recorded in sessions against a manifest's permission mode
 * and rules without running anything, and lists every call they would deny or ask about — so a
 * team can tighten its rules against last week's logs before switching them on. Each call of each
 * segment (compactions and forks copy earlier calls: each call id counts once per session) goes
 * through `PermissionPolicy.decide`, the pod's own check; the builtin approval policy (`bash`,
 * `confirm_writes`) and hooks are not part of it. In `read_only` a tool is judged by its declared
 * effect; no tool package or MCP server is started, so a tool that is not builtin is treated as
 * changing things and its finding says so.
 *
 * Throws the store's `NotFoundError` for an unknown session and `CorruptEntryError` (file, line)
 * for a damaged log.
 */
export async function checkPolicy(options: CheckPolicyOptions): Promise<PolicyCheckReport> {
  const sessionIds = [...new Set(options.sessionIds)];
  if (sessionIds.length === 0) {
    throw new PodUsageError("checkPolicy was given no session to check", {
      hint: "pass the ids of the sessions to replay (`podkit session list` shows them)",
    });
  }
  const warn = options.onWarning ?? processWarningSink;
  const effects = await declaredEffects(options.loaded);
  const root: CheckedPod = {
    loaded: options.loaded,
    mode: effectiveMode(options.loaded, options.mode, false),
    child: false,
  };
  const report: PolicyCheckReport = {
    mode: root.mode,
    rules: options.loaded.manifest.permissions.rule.length,
    sessions: [],
    callsChecked: 0,
    findings: [],
  };
  const seen = new Set<string>();
  /** Checks one session as the pod `podFor` says it ran as, then (with `tree`) its sub-pod sessions. */
  const check = async (
    sessionId: string,
    podFor: (recorded: SessionCalls) => Promise<CheckedPod | string>,
  ) => {
    if (seen.has(sessionId)) return;
    seen.add(sessionId);
    const recorded = await recordedCalls(options.store, sessionId);
    const pod = await podFor(recorded);
    const session: CheckedSession = {
      sessionId,
      ...(typeof pod === "string" ? {} : { mode: pod.mode }),
      segments: recorded.segments,
      calls: recorded.calls.length,
      ...(pod !== root && recorded.parent !== undefined
        ? { parentSessionId: recorded.parent.session_id, role: recorded.parent.role }
        : {}),
    };
    report.sessions.push(session);
    if (typeof pod === "string") {
      session.unchecked = pod;
      return;
    }
    report.callsChecked += recorded.calls.length;
    report.findings.push(...findingsOf(sessionId, recorded.calls, pod, effects));
    if (options.tree !== true) return;
    // Oldest first, as they were spawned (the store lists newest first).
    for (const child of [...(await options.store.listChildSessions(sessionId))].reverse()) {
      await check(child, async ({ parent }) =>
        parent === undefined ? "its log names no parent pod" : childPod(pod, parent, warn),
      );
    }
  };
  for (const sessionId of sessionIds) await check(sessionId, async () => root);
  return report;
}

/**
 * The calls of one session that `pod`'s mode or rules deny or ask about, decided by the pod's own
 * `PermissionPolicy` (one owner of the decision: no second copy of its matching here).
 */
function findingsOf(
  sessionId: string,
  calls: readonly RecordedCall[],
  pod: CheckedPod,
  effects: ReadonlyMap<string, boolean>,
): PolicyFinding[] {
  const policy = new PermissionPolicy(
    pod.mode,
    pod.loaded.manifest.permissions.rule,
    (name) => effects.get(name) === true,
  );
  const findings: PolicyFinding[] = [];
  for (const { segmentId, call } of calls) {
    const verdict = policy.decide(call);
    if (verdict.action !== "deny" && verdict.action !== "ask") continue;
    const declared = effects.get(call.name);
    const effect: ToolEffect = declared === undefined ? "unknown" : declared ? "reads" : "changes";
    const reason = verdict.reason ?? `the rule ${verdict.rule} asks`;
    const byMode = verdict.action === "deny" && verdict.by === "mode";
    findings.push({
      sessionId,
      segmentId,
      callId: call.call_id,
      tool: call.name,
      arguments: call.arguments,
      outcome: verdict.action,
      decidedBy: byMode ? "mode" : "rule",
      rule: verdict.rule,
      reason:
        byMode && effect === "unknown"
          ? `${reason} (shadow mode starts no MCP server or tool package, so it cannot know whether ${call.name} only reads: it is treated as changing things)`
          : reason,
      effect,
    });
  }
  return findings;
}

/** The manifest and mode a session's calls are checked under. */
interface CheckedPod {
  loaded: LoadedManifest;
  mode: PermissionMode;
  child: boolean;
  roles?: Promise<ReadonlyMap<string, SubpodRole>>;
}

/**
 * The pod a sub-pod session of `parent` runs as: its role's manifest (the loan: the parent's rules
 * and its own) in the tighter of the parent's mode and the role's — or why it cannot be checked.
 */
async function childPod(
  parent: CheckedPod,
  link: ParentLink,
  warn: WarningSink,
): Promise<CheckedPod | string> {
  // A root's role that cannot be loaded fails as the pod would; a child's is left out with a warning.
  parent.roles ??= loadSubpodRoles(parent.loaded, parent.child ? { warn } : undefined);
  const role = (await parent.roles).get(link.role);
  if (role === undefined) return `the manifest declares no role "${link.role}" for it`;
  return { loaded: role.loaded, mode: effectiveMode(role.loaded, parent.mode, true), child: true };
}

/** A tool call and the segment it was first recorded in. */
interface RecordedCall {
  segmentId: string;
  call: ToolCallItem;
}

/** What one session recorded: its segments, its calls, and its parent pod (a sub-pod's session). */
interface SessionCalls {
  segments: number;
  calls: RecordedCall[];
  parent?: ParentLink;
}

/**
 * Every tool call of session `sessionId`, each call id once, oldest segment first: a compaction's
 * or a fork's `segment_start` copies calls of the segment it came from, which count where they
 * were first recorded. Provider-executed calls (`provider_tool_call`) never pass the pod's check.
 */
async function recordedCalls(store: Store<Item>, sessionId: string): Promise<SessionCalls> {
  // Segment ids are UUIDv7: sorted, they are in the order the segments were made.
  const segmentIds = [...(await store.listSegments(sessionId))].sort();
  const calls = new Map<string, RecordedCall>();
  let parent: ParentLink | undefined;
  for (const segmentId of segmentIds) {
    let index = 0;
    const take = (item: Item) => {
      if (item.type !== "tool_call") return;
      // A store that does not validate items (not opened with the worker's schema) may hand out anything.
      const parsed = ToolCallItemSchema.safeParse(item);
      if (!parsed.success) {
        throw new CorruptEntryError({
          file: `session ${sessionId} segment ${segmentId}`,
          line: index + 1,
          reason: `a tool call that is not one: ${parsed.error.issues[0]?.message ?? "invalid"}`,
        });
      }
      if (!calls.has(item.call_id)) calls.set(item.call_id, { segmentId, call: parsed.data });
    };
    for await (const entry of store.readAll({ sessionId, segmentId })) {
      if (entry.kind === "segment_start") {
        parent ??= entry.parent;
        for (const item of entry.history) take(item);
      } else if (entry.kind === "assistant_item") take(entry.item);
      index += 1;
    }
  }
  return {
    segments: segmentIds.length,
    calls: [...calls.values()],
    ...(parent === undefined ? {} : { parent }),
  };
}

/** Shadow mode runs nothing: the stand-in it hands the sub-pod tools refuses any use. */
function refuse(): never {
  throw new PodUsageError("shadow mode (checkPolicy) starts no process and runs no tool");
}
const NO_CHILDREN: SubpodToolTarget = { spawn: refuse, send: refuse, stop: refuse, list: refuse };

/**
 * Which tools declare that they only read, from the declarations themselves: the builtin file
 * tools (materialized from `@podkit/tools`'s package with `bash` off, so nothing can start) and
 * the sub-pod tools. `bash` is builtin and declares nothing (its factory waits for the sandbox's
 * probe, which shadow mode never runs). Any other name is unknown here.
 */
async function declaredEffects(loaded: LoadedManifest): Promise<ReadonlyMap<string, boolean>> {
  const declared = new Map<string, boolean>([["bash", false]]);
  const add = (tools: Tool | readonly Tool[]) => {
    for (const tool of [tools].flat()) declared.set(tool.name, tool.readOnly === true);
  };
  const context = { scope: loaded.scope, workspace: loaded.workspace, env: {}, warn: () => {} };
  // A sandbox closed before use: nothing can start in it (and with bash off nothing asks it to).
  const sandbox = createSandbox({ ...context, config: loaded.manifest.sandbox });
  await sandbox.close();
  const factories = await builtinToolPackage.tools({
    ...context,
    options: { builtin: [...BUILTIN_TOOL_NAMES], bash: false },
    sandbox,
    signal: new AbortController().signal,
    onClose: () => {},
  });
  for (const factory of factories) add(await factory());
  // A stand-in role: the sub-pod tools are offered only where some role may run one level deeper.
  const standIn = { name: "role", config: { description: "", max_depth: 1 } } as unknown as SubpodRole;
  add(subpodTools(new Map([["role", standIn]]), NO_CHILDREN, 0, () => ""));
  return declared;
}
