import type { Item } from "@podkit/llm-worker";
import { appendAsGuest, type Store } from "@podkit/session-store";
import { v5 as uuidv5, v7 as uuidv7 } from "uuid";
import type { Dispatcher, SubmitOutcome } from "../dispatcher.js";
import { SessionRunningError } from "../errors.js";
import { runEntry } from "../run-entries.js";

/** Namespace of run ids derived from idempotency keys (UUIDv5), fixed forever. */
const IDEMPOTENCY_NAMESPACE = "5b0f3c5e-8a3e-4d53-9a63-0d6f1c1a7d21";

/** The run id an idempotency key stands for: the same key gives the same run, on every machine. */
export function runIdForKey(key: string): string {
  return uuidv5(`podkit.dispatch.key:${key}`, IDEMPOTENCY_NAMESPACE);
}

/** One run to submit. */
export interface RunRequest {
  /** The pod that runs it (the manifest's `[pod] name`). */
  readonly pod: string;
  /** Continue this session; or create a new one with `newSession`. */
  readonly session: { readonly id: string } | { readonly create: () => Promise<string> };
  /** The user input; null continues the session without new input (after an answered approval). */
  readonly input: string | null;
  /** A duplicate submit with the same key returns the first run and runs nothing more. */
  readonly idempotencyKey?: string;
  /** The schedule firing this run comes from: its id is derived from the firing, so a retried firing runs once. */
  readonly firing?: { readonly schedule: string; readonly firingId: string };
  /** Attempts before the run is dead-lettered (the dispatcher's default otherwise). */
  readonly maxAttempts?: number;
  /** Epoch-ms clock for the entry's `ts` (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Submits a run the way the session log stays the only journal: the input is committed to the
 * session first (a `dispatch.run` "submitted" entry; a new session is created for it), then the
 * dispatcher enqueues ids and the entry's offset. A crash between the two leaves an input that
 * never runs, never a job without its input. With an idempotency key the run id is derived from
 * the key: a submit that finds the run does nothing, and of two racing submits the dispatcher
 * enqueues one (the other's entry is left unused).
 */
export async function submitRun(
  dispatcher: Dispatcher,
  store: Store<Item>,
  request: RunRequest,
): Promise<SubmitOutcome> {
  const derived =
    request.firing !== undefined
      ? uuidv5(`podkit.dispatch.firing:${request.firing.firingId}`, IDEMPOTENCY_NAMESPACE)
      : request.idempotencyKey === undefined
        ? undefined
        : runIdForKey(request.idempotencyKey);
  const runId = derived ?? uuidv7();
  if (derived !== undefined) {
    const existing = await dispatcher.show(runId);
    if (existing !== undefined) return { run: existing, created: false };
  }
  let sessionId: string;
  if ("id" in request.session) {
    sessionId = request.session.id;
    // One writer per session: a worker running it now must not find a foreign entry in its segment.
    const [running] = await dispatcher.list({ sessionId, states: ["running"], limit: 1 });
    if (running !== undefined) throw new SessionRunningError({ sessionId, runningRunId: running.runId });
  } else {
    sessionId = await request.session.create();
  }
  const entry = runEntry<Item>(
    {
      run_id: runId,
      event: "submitted",
      input: request.input,
      ...(request.idempotencyKey === undefined ? {} : { key: request.idempotencyKey }),
      ...(request.firing === undefined ? {} : { schedule: request.firing.schedule }),
    },
    (request.now ?? Date.now)(),
  );
  // Appended as a guest (the session's writer is whoever runs it): never a fork, a re-read on a lost race.
  const { segmentId, index } = await appendAsGuest(store, sessionId, () => ({ entry, result: undefined }));
  const input = { segmentId, index };
  return dispatcher.submit(
    { runId, pod: request.pod, sessionId, input },
    request.maxAttempts === undefined ? {} : { maxAttempts: request.maxAttempts },
  );
}
