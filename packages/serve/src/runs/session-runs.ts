import {
  awaitingRunOf,
  type Continuation,
  continueAfterAnswer,
  type Dispatcher,
  type RunState,
} from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import { type Pod, PodBusyError, type PodEvent, type RunHandle } from "@podkit/pod";
import {
  type ApprovalAnswerInput,
  type ApprovalRecord,
  ancestryOf,
  answerApproval,
  restoreSession,
  type Store,
  sessionHoldingCall,
} from "@podkit/session-store";
import { HttpError } from "../http/http-error.js";
import type { DraftBoard } from "./draft-board.js";
import type { PodSource } from "./pod-source.js";

/** A run this server started: its session, the segment it writes and its handle. */
export interface StartedRun {
  sessionId: string;
  segmentId: string;
  handle: RunHandle;
}

export interface SessionRunsOptions {
  /** An idle pod is closed after this long without a run (default 10 minutes). */
  idleMs?: number;
  /** At most this many idle pods stay open; the longest idle is closed first (default 32). */
  maxIdlePods?: number;
  /**
   * The dispatcher of the store's dispatched runs, opened when an answer completes what such a run
   * waits for: the run is requeued (a worker continues it) instead of continued by this server.
   */
  dispatcher?: () => Promise<Dispatcher>;
}

/** What answering an approval did: the answer, and what continues now (see `Continuation`). */
export interface AnsweredApproval {
  /** The session whose log holds the call (a sub-pod's, when answered from its root). */
  sessionId: string;
  approval: ApprovalRecord;
  next: Continuation;
  /** The run this server started to continue the tree (`next.kind === "resume"`). */
  resumed: StartedRun | undefined;
}

interface LivePod {
  pod: Promise<Pod>;
  running: boolean;
  idleTimer: NodeJS.Timeout | undefined;
  idleSince: number;
}

/**
 * The pods this server runs, one per session at a time, kept open between runs (a restore reads
 * the whole log) and closed when idle. It owns which session is running here; the log owns
 * everything else, so another server can continue any session from the store.
 */
export class SessionRuns {
  private readonly live = new Map<string, LivePod>();
  /** Sessions a task holds to itself (`exclusively`): no run of them starts here meanwhile. */
  private readonly held = new Set<string>();
  private readonly idleMs: number;
  private readonly maxIdlePods: number;
  private readonly dispatcher: (() => Promise<Dispatcher>) | undefined;
  private closed = false;

  constructor(
    private readonly source: PodSource,
    private readonly store: Store<Item>,
    private readonly drafts: DraftBoard,
    private readonly committedCount: (segmentId: string) => number | undefined,
    options: SessionRunsOptions = {},
  ) {
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.maxIdlePods = options.maxIdlePods ?? 32;
    this.dispatcher = options.dispatcher;
  }

  /** Starts a new session with `message`; resolves once the session exists (its first run goes on). */
  async start(message: string): Promise<StartedRun> {
    const pod = await this.source.create(this.store);
    this.preview(pod);
    const handle = pod.run(message);
    const sessionId = await sessionOf(pod, handle).catch(async (error: unknown) => {
      await pod.close();
      throw error;
    });
    const entry: LivePod = { pod: Promise.resolve(pod), running: true, idleTimer: undefined, idleSince: 0 };
    this.live.set(sessionId, entry);
    this.settleWhenDone(sessionId, entry, handle);
    return { sessionId, segmentId: pod.segmentId as string, handle };
  }

  /**
   * Runs `message` in session `sessionId`, restoring its pod unless it is open here. Rejects with
   * `PodBusyError` while the session runs here, and with the store's `NotFoundError` for an
   * unknown session.
   */
  async continue(sessionId: string, message: string): Promise<StartedRun> {
    const current = await this.acquire(sessionId);
    let handle: RunHandle;
    try {
      const pod = await current.pod;
      const dispatched = awaitingRunOf(pod);
      if (dispatched !== undefined) {
        // A new input would close the calls the dispatched run waits on, and leave it stale.
        throw new HttpError(
          409,
          `session ${sessionId} is dispatched run ${dispatched}, waiting for approvals: a worker continues it`,
          `answer its calls (POST /sessions/${sessionId}/approvals/<call>); the run is requeued`,
        );
      }
      handle = pod.run(message);
    } catch (error) {
      this.release(sessionId, current);
      throw error;
    }
    this.settleWhenDone(sessionId, current, handle);
    return { sessionId, segmentId: (await current.pod).segmentId as string, handle };
  }

  /**
   * Answers the pending call `callId` of session `sessionId`'s tree — its own, or a sub-pod's its
   * run waits on (answered from the root) — then does what the one continuation rule says
   * (`continueAfterAnswer` of `@podkit/dispatch`): nothing yet while other calls are awaited; a
   * dispatched run is requeued for a worker; otherwise the session at the top of the waiting chain
   * is resumed here (`resume()`: an allowed call runs once, a denied one reaches the model as its
   * error result, and the tree continues from there). The approval errors of
   * `@podkit/session-store` (unknown call, already answered, not pending, delegated, malformed
   * answer) reach the caller with nothing written.
   */
  async answer(sessionId: string, callId: string, answer: ApprovalAnswerInput): Promise<AnsweredApproval> {
    const holder = (await sessionHoldingCall(this.store, sessionId, callId)) ?? sessionId;
    this.assertIdle(holder);
    const { approval } = await answerApproval(this.store, holder, callId, answer);
    // The answer went in beside an open pod of that session: its head is stale now, so the next
    // run there restores it instead of writing into a drift fork.
    const stale = this.live.get(holder);
    if (stale !== undefined) this.retire(holder, stale);
    const next = await continueAfterAnswer(this.store, holder, {
      ...(this.dispatcher === undefined ? {} : { dispatcher: this.dispatcher }),
    });
    if (next.kind !== "resume") return { sessionId: holder, approval, next, resumed: undefined };
    const current = await this.acquire(next.sessionId);
    try {
      const pod = await current.pod;
      const handle = pod.resume();
      this.settleWhenDone(next.sessionId, current, handle);
      const resumed = { sessionId: next.sessionId, segmentId: pod.segmentId as string, handle };
      return { sessionId: holder, approval, next, resumed };
    } catch (error) {
      this.release(next.sessionId, current);
      throw error;
    }
  }

  /**
   * The session's pod, marked running: the open one when nobody else wrote to the session since,
   * else a fresh restore. Rejects with `PodBusyError` while the session runs here or is being
   * rewound.
   */
  private async acquire(sessionId: string): Promise<LivePod> {
    this.assertIdle(sessionId);
    let entry = this.live.get(sessionId);
    if (entry === undefined) {
      entry = { pod: this.restore(sessionId), running: true, idleTimer: undefined, idleSince: 0 };
      this.live.set(sessionId, entry);
    } else {
      entry.running = true;
      if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
      // Another process may have continued the session since: restore rather than fork.
      if (!(await this.current(sessionId, await entry.pod))) {
        const stale = entry.pod;
        entry.pod = this.restore(sessionId);
        void stale.then((pod) => pod.close());
      }
    }
    const current = entry;
    current.pod.catch(() => {
      if (this.live.get(sessionId) === current) this.live.delete(sessionId);
    });
    return current;
  }

  /**
   * Runs `task` (a rewind) with session `sessionId` to itself, giving it the store this server's
   * pods write through (so the feeds hear of its writes at once). Refused with `PodBusyError`
   * while a run of the session, or of a session above it in its tree, is in progress here, and
   * with a 409 while its dispatched run is queued, running or waiting for approvals (the
   * dispatcher's word where the server has one, else the log's); no run of the session starts here
   * until the task is done. The session's open pod is closed afterwards: its head may have moved.
   */
  async exclusively<T>(sessionId: string, task: (store: Store<Item>) => Promise<T>): Promise<T> {
    this.assertIdle(sessionId);
    this.held.add(sessionId);
    let ran = false;
    try {
      const { steps } = await ancestryOf(this.store, sessionId);
      for (const { link } of steps) this.assertIdle(link.session_id);
      await this.assertNotDispatched(sessionId);
      ran = true;
      return await task(this.store);
    } finally {
      this.held.delete(sessionId);
      const open = this.live.get(sessionId);
      if (ran && open !== undefined) this.retire(sessionId, open);
    }
  }

  /** Rejects with `PodBusyError` while a run of `sessionId` is in progress here or a task holds it. */
  private assertIdle(sessionId: string): void {
    if (this.live.get(sessionId)?.running === true) throw busy(sessionId);
    if (this.held.has(sessionId)) throw busy(sessionId, "being rewound");
  }

  /** A 409 while a dispatched run of `sessionId` has not ended (or waits for approvals). */
  private async assertNotDispatched(sessionId: string): Promise<void> {
    if (this.dispatcher !== undefined) {
      const dispatcher = await this.dispatcher();
      const [run] = await dispatcher.list({ sessionId, states: UNFINISHED_RUN_STATES, limit: 1 });
      if (run === undefined) return;
      throw new HttpError(
        409,
        `session ${sessionId} is dispatched run ${run.runId} (${run.state.replace("_", " ")}): it writes the session`,
        `wait for it to end, or cancel it (\`podkit runs cancel ${run.runId}\`)`,
      );
    }
    const waiting = awaitingRunOf(await restoreSession(this.store, sessionId));
    if (waiting === undefined) return;
    throw new HttpError(
      409,
      `session ${sessionId} is dispatched run ${waiting}, waiting for approvals: a worker continues it`,
      `answer its calls, or cancel it (\`podkit runs cancel ${waiting}\`)`,
    );
  }

  /** Gives back a pod `acquire` marked running when no run was started on it. */
  private release(sessionId: string, entry: LivePod): void {
    entry.running = false;
    if (this.live.get(sessionId) === entry) this.idle(sessionId, entry);
  }

  /** Interrupts the run of `sessionId` in progress here; false when none is. */
  async interrupt(sessionId: string): Promise<boolean> {
    const entry = this.live.get(sessionId);
    if (entry?.running !== true) return false;
    (await entry.pod).interrupt("interrupted through the HTTP API");
    return true;
  }

  /** True while a run of `sessionId` is in progress on this server. */
  isRunning(sessionId: string): boolean {
    return this.live.get(sessionId)?.running === true;
  }

  /** Interrupts every run and closes every pod. */
  async close(): Promise<void> {
    this.closed = true;
    const pods = [...this.live.values()];
    this.live.clear();
    for (const entry of pods) {
      if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
      await entry.pod.then(
        (pod) => pod.close(),
        () => undefined,
      );
    }
  }

  private restore(sessionId: string): Promise<Pod> {
    return this.source.restore(this.store, sessionId).then((pod) => {
      this.preview(pod);
      return pod;
    });
  }

  /**
   * True when `pod`'s segment is still the session's newest and holds what this process last
   * committed to it: nobody else wrote to the session since, so the open pod can go on.
   */
  private async current(sessionId: string, pod: Pod): Promise<boolean> {
    const segmentId = pod.segmentId;
    if (segmentId === undefined) return true;
    try {
      const [newest] = await this.store.listSegments(sessionId);
      if (newest !== segmentId) return false;
      return (await this.store.entryCount({ sessionId, segmentId })) === this.committedCount(segmentId);
    } catch {
      return false; // the restore reports what is wrong
    }
  }

  /** Feeds the live preview of `pod`'s responses (and typed answers) to the draft board (display only). */
  private preview(pod: Pod): void {
    pod.subscribe((event: PodEvent) => {
      const sessionId = pod.sessionId;
      const segmentId = pod.segmentId;
      if (sessionId === undefined || segmentId === undefined) return;
      if (event.type === "request_start") {
        this.drafts.begin(sessionId, segmentId, this.committedCount(segmentId) ?? 0);
      } else if (event.type === "text_delta") this.drafts.append(sessionId, "text", event.delta);
      else if (event.type === "reasoning_delta") this.drafts.append(sessionId, "reasoning", event.delta);
      else if (event.type === "output_partial") this.drafts.output(sessionId, event);
      else if (event.type === "run_end") this.drafts.clear(sessionId);
    });
  }

  private settleWhenDone(sessionId: string, entry: LivePod, handle: RunHandle): void {
    handle.result.then(
      () => this.ran(sessionId, entry),
      () => this.ran(sessionId, entry),
    );
  }

  private ran(sessionId: string, entry: LivePod): void {
    entry.running = false;
    this.drafts.clear(sessionId);
    if (this.live.get(sessionId) === entry) this.idle(sessionId, entry);
  }

  private idle(sessionId: string, entry: LivePod): void {
    if (this.closed) return;
    entry.idleSince = Date.now();
    entry.idleTimer = setTimeout(() => this.retire(sessionId, entry), this.idleMs);
    entry.idleTimer.unref();
    const idle = [...this.live.entries()].filter(([, e]) => !e.running);
    if (idle.length > this.maxIdlePods) {
      const [oldestId, oldest] = idle.sort((a, b) => a[1].idleSince - b[1].idleSince)[0] as [string, LivePod];
      this.retire(oldestId, oldest);
    }
  }

  private retire(sessionId: string, entry: LivePod): void {
    if (entry.running || this.live.get(sessionId) !== entry) return;
    if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
    this.live.delete(sessionId);
    entry.pod.then(
      (pod) => pod.close(),
      () => undefined,
    );
  }
}

/** Resolves with the session id as soon as the first run created it; rejects if the run failed first. */
async function sessionOf(pod: Pod, handle: RunHandle): Promise<string> {
  if (pod.sessionId !== undefined) return pod.sessionId;
  return new Promise<string>((resolve, reject) => {
    const unsubscribe = pod.subscribe(() => {
      if (pod.sessionId === undefined) return;
      unsubscribe();
      resolve(pod.sessionId);
    });
    handle.result.then(
      () => {
        unsubscribe();
        if (pod.sessionId !== undefined) resolve(pod.sessionId);
        else reject(new Error("the run ended before it created a session"));
      },
      (error: unknown) => {
        unsubscribe();
        if (pod.sessionId !== undefined) resolve(pod.sessionId);
        else reject(error);
      },
    );
  });
}

/** The states of a dispatched run that still writes its session, or will (`awaiting_approval`). */
const UNFINISHED_RUN_STATES: readonly RunState[] = ["queued", "running", "retrying", "awaiting_approval"];

function busy(sessionId: string, doing: "running a turn" | "being rewound" = "running a turn"): PodBusyError {
  return doing === "running a turn"
    ? new PodBusyError(`session ${sessionId} is running a turn on this server`, {
        hint: "wait for the run to end (its events stream at GET /sessions/<id>/events) or interrupt it",
      })
    : new PodBusyError(`session ${sessionId} is being rewound on this server`, {
        hint: "wait for the rewind to end, then try again",
      });
}
