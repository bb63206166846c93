import {
  describeSession,
  type Entry,
  EVAL_ORIGIN_DOMAIN,
  lineOf,
  NotFoundError,
  RunStatusSchema,
  type SessionStatus,
  SessionStoreUsageError,
  type Store,
  summarizeEntries,
} from "@podkit/session-store";
import { EvalQueryError } from "./errors.js";
import type { EvalQuery, RecordedCase } from "./eval-types.js";
import { foldTurns, type RecordedTurn } from "./recorded-turns.js";

/** Every status a session can have (`podkit session list`'s vocabulary). */
const SESSION_STATUSES: readonly string[] = [...RunStatusSchema.options, "errored", "open", "idle"];

const QUERY_KEYS: readonly string[] = ["since", "until", "status", "tool", "input", "limit"];

/** A query checked and in the form the selection uses. */
interface CheckedQuery {
  readonly since?: number;
  readonly until?: number;
  readonly status?: readonly string[];
  readonly tools: readonly string[];
  readonly input?: string;
  readonly limit?: number;
}

/**
 * The recorded cases a query selects: the store's root sessions (not sub-pods' sessions, not eval
 * items) that match every filter, newest first, at most `limit`. Reads sessions through the
 * `Store` interface only, so it works on every store; it stops reading once `limit` is reached.
 * A session whose first segment is debris (no readable segment) is skipped, as `session list`
 * does. Throws `EvalQueryError` for a filter it cannot use.
 */
export async function selectRecordedSessions(
  store: Store,
  query: EvalQuery,
  now: () => number = Date.now,
): Promise<RecordedCase[]> {
  const checked = checkQuery(query, now());
  const cases: RecordedCase[] = [];
  if (checked.limit === 0) return cases;
  for (const sessionId of await store.listSessions()) {
    if (await matches(store, sessionId, checked)) cases.push({ sessionId });
    if (checked.limit !== undefined && cases.length >= checked.limit) break;
  }
  return cases;
}

async function matches(store: Store, sessionId: string, query: CheckedQuery): Promise<boolean> {
  let overview: Awaited<ReturnType<typeof describeSession>>;
  try {
    overview = await describeSession(store, sessionId);
  } catch (error) {
    if (NotFoundError.isInstance(error) || SessionStoreUsageError.isInstance(error)) return false;
    throw error;
  }
  const segments = [overview.head, ...overview.otherBranches, ...overview.compacted];
  const started = Math.min(...segments.map((segment) => segment.startedAt));
  if (query.since !== undefined && started < query.since) return false;
  if (query.until !== undefined && started >= query.until) return false;
  const turns: RecordedTurn[] = [];
  let head: readonly Entry[] = [];
  for (const [index, segmentId] of lineOf(overview).entries()) {
    const entries: Entry[] = [];
    for await (const batch of store.readFrom({ sessionId, segmentId }, 0)) entries.push(...batch);
    const start = entries[0];
    if (index === 0) {
      // A sub-pod's session runs another pod; an eval item is a replay, not a recording.
      if (start?.kind === "segment_start" && start.parent !== undefined) return false;
      if (entries.some((e) => e.kind === "extension" && e.domain === EVAL_ORIGIN_DOMAIN)) return false;
    }
    foldTurns(entries, turns);
    head = entries;
  }
  if (query.status !== undefined) {
    const status: SessionStatus = summarizeEntries(head).turns.at(-1)?.status ?? "idle";
    if (!query.status.includes(status)) return false;
  }
  if (query.tools.length > 0) {
    const called = new Set(turns.flatMap((turn) => turn.toolCalls.map((call) => call.name)));
    if (!query.tools.every((tool) => called.has(tool))) return false;
  }
  if (query.input !== undefined) {
    const wanted = query.input;
    if (!turns.some((turn) => turn.input?.toLowerCase().includes(wanted) === true)) return false;
  }
  return turns.some((turn) => turn.trigger === "user" && turn.input !== null);
}

function checkQuery(query: EvalQuery, now: number): CheckedQuery {
  for (const key of Object.keys(query)) {
    if (!QUERY_KEYS.includes(key)) throw new EvalQueryError(key, "no such filter");
  }
  const since = query.since === undefined ? undefined : timeOf("since", query.since, now);
  const until = query.until === undefined ? undefined : timeOf("until", query.until, now);
  const status = query.status === undefined ? undefined : listOf(query.status);
  for (const value of status ?? []) {
    if (!SESSION_STATUSES.includes(value)) {
      throw new EvalQueryError("status", `${JSON.stringify(value)} is not a session status`, {
        hint: `the statuses are ${SESSION_STATUSES.join(", ")}`,
      });
    }
  }
  const tools = query.tool === undefined ? [] : listOf(query.tool);
  if (tools.some((tool) => tool === "")) throw new EvalQueryError("tool", "a tool name is empty");
  const limit = query.limit;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw new EvalQueryError("limit", `${limit} is not a whole number ≥ 0`);
  }
  return {
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
    ...(status === undefined ? {} : { status }),
    tools,
    ...(query.input === undefined || query.input === "" ? {} : { input: query.input.toLowerCase() }),
    ...(limit === undefined ? {} : { limit }),
  };
}

/** A Date, an ISO date (midnight UTC) or date-time, or `<n>d` / `<n>h` back from `now`. */
function timeOf(key: string, value: Date | string, now: number): number {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new EvalQueryError(key, "the Date is invalid");
    return value.getTime();
  }
  const back = /^(\d+)([dh])$/.exec(value.trim());
  if (back !== null) return now - Number(back[1]) * (back[2] === "d" ? 86_400_000 : 3_600_000);
  const time = /^\d{4}-\d{2}-\d{2}(T.+)?$/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (Number.isNaN(time)) throw new EvalQueryError(key, `${JSON.stringify(value)} is not a date`);
  return time;
}

function listOf(value: string | readonly string[]): string[] {
  return (typeof value === "string" ? [value] : [...value]).map((v) => v.trim());
}
