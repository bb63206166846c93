import { expect } from "vitest";

/** An entry as this check reads it: its `kind` and whatever else the line holds. */
type LoggedEntry = { readonly kind: string };
type Fields = Readonly<Record<string, unknown>>;

/**
 * The log-integrity check every package's tests run on the segments they leave (pods, dispatched
 * runs, killed workers): the segment replays with no tool call in flight (`replayed` is
 * `replay(entries)` of `@podkit/session-store`), no `invoke` opens while another is open, and the
 * approvals, child-session and dispatched-run entries keep their invariants (see the checks
 * below). Returns whether the last `invoke` is still open (no `run_*` after it): a pod's own logs
 * must end closed, a SIGKILLed worker's may not.
 */
export function assertSegmentSound(
  segment: string,
  entries: readonly LoggedEntry[],
  replayed: { readonly inFlight?: unknown },
): boolean {
  expect(replayed.inFlight ?? null, `${segment}: an invoke was never closed`).toBeNull();
  let open = false;
  for (const entry of entries) {
    if (entry.kind === "invoke") {
      expect(open, `${segment}: invoke while another is open`).toBe(false);
      open = true;
    } else if (entry.kind === "run_completed" || entry.kind === "run_errored") {
      open = false;
    }
  }
  assertParentSound(segment, entries);
  assertApprovalsSound(segment, entries);
  assertRunEntriesSound(segment, entries);
  return open;
}

const fieldsOf = (entry: LoggedEntry) => entry as Fields;

/** A child session's `segment_start.parent` names another session, at depth 1 or deeper. */
function assertParentSound(segment: string, entries: readonly LoggedEntry[]): void {
  const start = entries[0] === undefined ? undefined : fieldsOf(entries[0]);
  if (start?.kind !== "segment_start" || start.parent === undefined) return;
  const parent = start.parent as Fields;
  expect(parent.depth, `${segment}: segment_start.parent.depth`).toBeGreaterThanOrEqual(1);
  expect(Number.isInteger(parent.depth), `${segment}: segment_start.parent.depth is an integer`).toBe(true);
  expect(typeof parent.session_id, `${segment}: segment_start.parent.session_id`).toBe("string");
  expect(parent.session_id, `${segment}: a session is not its own parent`).not.toBe(start.session_id);
}

/**
 * Every `approval_answered` names a call requested earlier in the segment (its request is an
 * entry of the segment: a fork carries the requests of calls still without a result), a call is
 * answered at most once, and a `run_completed{awaiting_approval}` has something to wait for: a
 * request whose call has no result yet and that no approver of the run answered (unanswered,
 * delegated to a child session, or answered from outside after the run was gone — a crashed run
 * is closed that way).
 */
function assertApprovalsSound(segment: string, entries: readonly LoggedEntry[]): void {
  const requests = new Map<string, { delegated: boolean; answer?: Fields; closed: boolean }>();
  for (const entry of entries) {
    const fields = fieldsOf(entry);
    if (entry.kind === "approval_requested") {
      const callId = fields.call_id as string;
      if (!requests.has(callId)) {
        requests.set(callId, { delegated: fields.child_session_id !== undefined, closed: false });
      }
    } else if (entry.kind === "approval_answered") {
      const request = requests.get(fields.call_id as string);
      expect(
        request,
        `${segment}: answer to ${String(fields.call_id)} without a request before it`,
      ).toBeDefined();
      expect(request?.answer, `${segment}: ${String(fields.call_id)} answered twice`).toBeUndefined();
      expect(request?.delegated, `${segment}: delegated call ${String(fields.call_id)} answered`).toBe(false);
      if (request !== undefined) request.answer = fields;
    } else if (entry.kind === "tool_result") {
      const callId = (fields.item as Fields | undefined)?.call_id;
      const request = typeof callId === "string" ? requests.get(callId) : undefined;
      if (request !== undefined) request.closed = true;
    } else if (entry.kind === "run_completed" && fields.result === "awaiting_approval") {
      const waitsOn = [...requests.values()].filter(
        (request) => !request.closed && (request.delegated || request.answer?.in_run !== true),
      );
      expect(waitsOn.length, `${segment}: awaiting_approval with no request to wait on`).toBeGreaterThan(0);
    }
  }
}

const RUN_DOMAIN = "dispatch.run";
const RUN_ID = (value: unknown) => typeof value === "string" && value.length >= 1 && value.length <= 200;
const ENDED_STATES = ["completed", "awaiting_approval", "cancelled", "failed"];

/**
 * The shape of a `dispatch.run` payload (packages/dispatch/src/run-entries.ts, checked here by
 * structure: test-support imports no package): the problem, or undefined when it is a run entry.
 */
function runEntryProblem(payload: unknown): string | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return "not an object";
  const p = payload as Fields;
  const keys = Object.keys(p);
  const only = (allowed: string[]) => keys.filter((key) => !allowed.includes(key));
  if (!RUN_ID(p.run_id)) return "run_id";
  switch (p.event) {
    case "submitted": {
      if (p.input !== null && typeof p.input !== "string") return "input";
      if (p.key !== undefined && typeof p.key !== "string") return "key";
      if (p.schedule !== undefined && typeof p.schedule !== "string") return "schedule";
      const extra = only(["run_id", "event", "input", "key", "schedule"]);
      return extra.length > 0 ? `unknown keys ${extra.join(", ")}` : undefined;
    }
    case "started": {
      if (!Number.isInteger(p.attempt) || (p.attempt as number) < 1) return "attempt";
      if (typeof p.worker !== "string") return "worker";
      if (typeof p.resumes !== "boolean") return "resumes";
      const extra = only(["run_id", "event", "attempt", "worker", "resumes"]);
      return extra.length > 0 ? `unknown keys ${extra.join(", ")}` : undefined;
    }
    case "ended": {
      if (!ENDED_STATES.includes(p.state as string)) return "state";
      if (p.result !== undefined && typeof p.result !== "string") return "result";
      if (p.error !== undefined) {
        const error = p.error as Fields | null;
        if (typeof error !== "object" || error === null) return "error";
        if (typeof error.type !== "string" || typeof error.message !== "string") return "error";
        if (Object.keys(error).some((key) => key !== "type" && key !== "message")) return "error";
      }
      const extra = only(["run_id", "event", "state", "result", "error"]);
      return extra.length > 0 ? `unknown keys ${extra.join(", ")}` : undefined;
    }
    default:
      return "event";
  }
}

/**
 * Every `dispatch.run` entry has the shape of a run entry, and per run id: `submitted` at most
 * once and before any `started`, attempts increasing, `ended` at most once per attempt (after
 * one started). A segment that continues another (a fork or a compaction) may begin inside a run
 * whose `submitted` and `started` are in the segment before it (a fork carries only the latest
 * entry of the domain), so there a run's first entry may be any of them.
 */
function assertRunEntriesSound(segment: string, entries: readonly LoggedEntry[]): void {
  const start = entries[0] === undefined ? undefined : fieldsOf(entries[0]);
  const continues = start?.forked_from !== undefined || start?.compacted_from !== undefined;
  const runs = new Map<string, { submitted: boolean; attempt: number; ended: boolean }>();
  for (const [index, entry] of entries.entries()) {
    const fields = fieldsOf(entry);
    if (entry.kind !== "extension" || fields.domain !== RUN_DOMAIN) continue;
    const where = `${segment}: entry ${index}`;
    const problem = runEntryProblem(fields.payload);
    expect(problem, `${where}: not a ${RUN_DOMAIN} entry (${problem})`).toBeUndefined();
    const payload = fields.payload as Fields;
    const runId = payload.run_id as string;
    let run = runs.get(runId);
    if (run === undefined) {
      if (!continues) {
        expect(payload.event, `${where}: run ${runId} begins with "${String(payload.event)}"`).toBe(
          "submitted",
        );
      }
      run = { submitted: false, attempt: 0, ended: false };
      runs.set(runId, run);
    }
    if (payload.event === "submitted") {
      expect(run.submitted || run.attempt > 0, `${where}: run ${runId} submitted again`).toBe(false);
      run.submitted = true;
    } else if (payload.event === "started") {
      const attempt = payload.attempt as number;
      expect(attempt, `${where}: run ${runId} attempt ${attempt} after ${run.attempt}`).toBeGreaterThan(
        run.attempt,
      );
      run.attempt = attempt;
      run.ended = false;
    } else {
      expect(run.ended, `${where}: run ${runId} ended twice in attempt ${run.attempt}`).toBe(false);
      expect(run.attempt > 0 || continues, `${where}: run ${runId} ended before it started`).toBe(true);
      run.ended = true;
    }
  }
}
