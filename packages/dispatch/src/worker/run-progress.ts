import type { Item } from "@podkit/llm-worker";
import {
  describeSession,
  type Entry,
  FINAL_OUTPUT_DOMAIN,
  lineOf,
  type SegmentRef,
  type Store,
} from "@podkit/session-store";
import type { RunJob } from "../dispatcher.js";
import { RunInputError } from "../errors.js";
import { type EndedEntry, parseRunEntry, runEntryOf, type SubmittedEntry } from "../run-entries.js";

/** Entries of a segment from index `from` on: the one place the worker reads the log. */
export async function readSegmentFrom(
  store: Store<Item>,
  ref: SegmentRef,
  from: number,
): Promise<Entry<Item>[]> {
  const entries: Entry<Item>[] = [];
  for await (const batch of store.readFrom(ref, from)) entries.push(...batch);
  return entries;
}

/** The run's "submitted" entry at the offset its job names, validated against the job. */
export async function readSubmitted(store: Store<Item>, job: RunJob): Promise<SubmittedEntry> {
  const at = `${job.sessionId}/${job.input.segmentId}:${job.input.index}`;
  const [entry] = await readSegmentFrom(
    store,
    { sessionId: job.sessionId, segmentId: job.input.segmentId },
    job.input.index,
  );
  if (entry === undefined)
    throw new RunInputError({ runId: job.runId, at, problem: "there is no such entry" });
  const parsed = parseRunEntry(entry);
  if (!parsed.ok) throw new RunInputError({ runId: job.runId, at, problem: parsed.problem });
  if (parsed.entry.event !== "submitted" || parsed.entry.run_id !== job.runId) {
    throw new RunInputError({
      runId: job.runId,
      at,
      problem: `it is the "${parsed.entry.event}" entry of run ${parsed.entry.run_id}`,
    });
  }
  return parsed.entry;
}

/**
 * What earlier attempts of a run left in the log, which decides what this attempt does:
 * `fresh` — no attempt committed the input yet: hand it to `pod.run` (again); `committed` — the
 * input is in the log (or the run continues without input) and the turn did not end: `resume()`,
 * which closes in-flight tool calls as interrupted instead of running them again; `turn_ended` —
 * the turn ended but the attempt died before recording it (with the turn's typed answer, when its
 * pod has an output schema: its `final_output` entry); `ended` — an attempt recorded the end.
 */
export type RunProgress =
  | { readonly phase: "fresh" }
  | { readonly phase: "committed" }
  | { readonly phase: "turn_ended"; readonly result: string; readonly output?: unknown }
  | { readonly phase: "ended"; readonly ended: EndedEntry };

/**
 * Reads the run's progress from the session: the entries after its latest "started" entry, found
 * by walking the session's line of work (`lineOf`, the walk every reader of a session shares) back
 * from the head segment through compactions and drift forks (a compaction before or during the
 * turn moves the rest of the run to a new segment). The walk stops at the segment holding the
 * run's input: nothing of the run can lie before it.
 */
export async function readRunProgress(
  store: Store<Item>,
  job: RunJob,
  headSegmentId: string,
): Promise<RunProgress> {
  const line = lineOf(await describeSession(store, job.sessionId));
  const upTo = line.lastIndexOf(headSegmentId);
  const walk = upTo < 0 ? [headSegmentId] : line.slice(0, upTo + 1);
  const after: Entry<Item>[][] = [];
  for (let at = walk.length - 1; at >= 0; at--) {
    const segmentId = walk[at] as string;
    const ref = { sessionId: job.sessionId, segmentId };
    const isInputSegment = segmentId === job.input.segmentId;
    const entries = await readSegmentFrom(store, ref, isInputSegment ? job.input.index : 0);
    const started = findLastIndex(entries, (entry) => {
      const run = runEntryOf(entry);
      return run?.run_id === job.runId && run.event === "started";
    });
    if (started >= 0) {
      after.unshift(entries.slice(started));
      return progressAfterStart(job.runId, after.flat());
    }
    after.unshift(isInputSegment ? entries : entries.slice(1));
    if (isInputSegment) break;
  }
  return { phase: "fresh" };
}

/** Progress from the latest "started" entry (first of `entries`) on. */
function progressAfterStart(runId: string, entries: readonly Entry<Item>[]): RunProgress {
  const started = runEntryOf(entries[0] as Entry<Item>);
  let committed = started?.event === "started" && started.resumes;
  let turnEnd: string | undefined;
  let output: { value: unknown } | undefined;
  for (const entry of entries.slice(1)) {
    const run = runEntryOf(entry);
    if (run?.run_id === runId && run.event === "ended") return { phase: "ended", ended: run };
    if (entry.kind === "user_input") committed = true;
    if (entry.kind === "invoke" || entry.kind === "run_errored") {
      turnEnd = undefined;
      output = undefined;
    }
    if (entry.kind === "extension" && entry.domain === FINAL_OUTPUT_DOMAIN)
      output = finalOutputOf(entry.payload);
    if (entry.kind === "run_completed") turnEnd = entry.result;
  }
  if (!committed) return { phase: "fresh" };
  if (turnEnd === undefined) return { phase: "committed" };
  return { phase: "turn_ended", result: turnEnd, ...(output === undefined ? {} : { output: output.value }) };
}

/** The value of a `final_output` payload read back (untrusted): undefined unless it has one. */
function finalOutputOf(payload: unknown): { value: unknown } | undefined {
  if (typeof payload !== "object" || payload === null || !Object.hasOwn(payload, "value")) return undefined;
  return { value: (payload as { value: unknown }).value };
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i] as T)) return i;
  return -1;
}
