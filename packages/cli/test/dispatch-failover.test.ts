import { readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type RunInfo, submitRun } from "@podkit/dispatch";
import { PgDispatcher } from "@podkit/dispatch-pg";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { Pod } from "@podkit/pod";
import { describeSession, type Entry, replay } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import {
  type CapturedRequest,
  type ProviderDouble,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { assertSegmentSound } from "../../../test-support/log-soundness.js";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import {
  dispatchWorkspace,
  startWorker,
  URL_VARIABLE,
  type WorkerProcess,
} from "./support/dispatch-world.js";

// Issue 27's failover check: 3 `podkit worker` processes, 50 runs with counted tool calls, a random
// worker holding runs SIGKILLed 10 times while they work — and, since issue 37, paused (SIGSTOP)
// past its heartbeat 4 times, resumed once its runs were taken over. No run is lost, none runs on
// two workers at once, every committed tool call's side effect happened exactly once, no second
// writer forked a session, every session restores and passes the pods' log-integrity check.

/** A pool of `pg` (a dependency of the store, not of the CLI): what the busy test reads pg-boss's rows with. */
interface AdminPool {
  query<R>(text: string): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}
const pg = createRequire(new URL("../../store-postgres/package.json", import.meta.url))("pg") as {
  Pool: new (config: { connectionString: string; max: number }) => AdminPool;
};

const RUNS = 50;
const KILLS = 10;
const STALLS = 4;
/** Past pg-boss's heartbeat (10 s) and a supervisor pass: long enough for the runs to be taken over. */
const STALL_MS = 16_000;
const database = usePostgresDatabases();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The model: `calls=N` in the run's input asks for N `count` calls, then an answer. Slow enough to be killed mid-turn. */
function model(request: CapturedRequest): ScriptedResponse {
  const messages = request.body.messages as { role: string; content: { type: string; text?: string }[] }[];
  let asked = -1;
  let want = 0;
  messages.forEach((message, i) => {
    const match =
      message.role === "user" ? /calls=(\d+)/.exec(message.content.map((c) => c.text ?? "").join("")) : null;
    if (match) [asked, want] = [i, Number(match[1])];
  });
  const made = messages
    .slice(asked + 1)
    .filter((m) => m.role === "assistant")
    .flatMap((m) => m.content)
    .filter((c) => c.type === "tool_use").length;
  const slow = { fault: { kind: "stall" as const, afterEvents: 1, ms: 100 } };
  return made < want
    ? { parts: [{ type: "tool_call", name: "count", arguments: { delay_ms: 400 } }], ...slow }
    : { parts: [{ type: "text", text: "counted" }], ...slow };
}

const firstText = (request: CapturedRequest) =>
  JSON.stringify((request.body.messages as { content: unknown }[])[0]?.content ?? "");

describe("dispatch failover with real workers", () => {
  it("3 workers, 50 runs, 10 SIGKILLs and 4 pauses past the heartbeat: nothing lost, nothing run twice at once, each committed call's side effect once", {
    timeout: 900_000,
  }, async () => {
    const double: ProviderDouble = await startProviderDouble({ wire: "anthropic", respond: model });
    cleanups.push(() => double.close());
    const ws = await dispatchWorkspace(double.baseUrl);
    cleanups.push(() => rm(ws.root, { recursive: true, force: true }));
    const url = await database();
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: url };
    const loaded = await loadManifest({ env: { cwd: ws.workspace, home: ws.home, env } });
    const store = new PostgresStore<Item>({ url, maxConnections: 4 });
    const dispatcher = new PgDispatcher({ url, schema: "podkit_dispatch" });
    cleanups.push(async () => {
      await dispatcher.close();
      await store.close();
    });

    // Submit: each run's input committed to its new session, then queued.
    const runs: RunInfo[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { run } = await submitRun(dispatcher, store, {
        pod: "tester",
        session: {
          create: async () => {
            const pod = await Pod.fromManifest(loaded, { store, env });
            try {
              return await pod.startSession();
            } finally {
              await pod.close();
            }
          },
        },
        input: `run ${i}: calls=${1 + (i % 3)}`,
        maxAttempts: 10,
      });
      runs.push(run);
    }

    const workers: WorkerProcess[] = [];
    const kills = new Map<number, number>(); // pid → when the SIGKILL was sent
    const stalls = new Map<number, { stoppedAt: number; continuedAt?: number }>(); // pid → its pause
    const resumed: Promise<void>[] = [];
    const spawn = () => {
      const worker = startWorker(ws.workspace, env, ["--concurrency", "2"]);
      workers.push(worker);
      return worker;
    };
    cleanups.push(async () => {
      for (const worker of workers) {
        worker.child.kill("SIGCONT");
        worker.child.kill("SIGKILL");
      }
    });
    for (let i = 0; i < 3; i++) spawn();
    await Promise.all(workers.map((worker) => worker.ready));

    const openRuns = (worker: WorkerProcess) => {
      const open = new Set<string>();
      for (const { event } of worker.events) {
        if (event.type === "claimed") open.add(event.runId as string);
        else if (typeof event.runId === "string") open.delete(event.runId);
      }
      return open;
    };
    let killsInFlight = 0;
    // Pauses land between kills, on a worker holding runs; each lasts past the heartbeat.
    const stallAt = new Set(Array.from({ length: STALLS }, (_, i) => 1 + Math.floor((i * KILLS) / STALLS)));
    for (let kill = 0; kill < KILLS; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1_000));
      const alive = () =>
        workers.filter(
          (worker) =>
            worker.child.exitCode === null &&
            !kills.has(worker.child.pid as number) &&
            // A paused worker is neither killed nor paused again (its runs' intervals stay simple).
            !stalls.has(worker.child.pid as number),
        );
      if (stallAt.has(kill)) {
        const holding = alive().filter((worker) => openRuns(worker).size > 0);
        const paused = holding[Math.floor(Math.random() * holding.length)];
        if (paused !== undefined && alive().length > 1) {
          const pid = paused.child.pid as number;
          const stall: { stoppedAt: number; continuedAt?: number } = { stoppedAt: Date.now() };
          stalls.set(pid, stall);
          paused.child.kill("SIGSTOP");
          resumed.push(
            new Promise((resolve) =>
              setTimeout(
                () => {
                  stall.continuedAt = Date.now();
                  paused.child.kill("SIGCONT");
                  resolve();
                },
                STALL_MS + Math.random() * 4_000,
              ),
            ),
          );
        }
      }
      // Kill a worker while it holds a run: wait (bounded) until one does, so the kills land mid-run
      // however fast or slow the machine runs them.
      for (let waited = 0; waited < 20_000 && !alive().some((w) => openRuns(w).size > 0); waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const busy = alive().filter((worker) => openRuns(worker).size > 0);
      const victim = (busy.length > 0 ? busy : alive())[
        Math.floor(Math.random() * (busy.length || alive().length))
      ];
      if (victim === undefined) break;
      if (openRuns(victim).size > 0) killsInFlight++;
      kills.set(victim.child.pid as number, Date.now());
      victim.child.kill("SIGKILL");
      await spawn().ready;
    }

    await Promise.all(resumed);
    // Every run reaches a final state.
    const deadline = Date.now() + 600_000;
    let final: RunInfo[] = [];
    for (;;) {
      final = await dispatcher.list({ limit: RUNS });
      if (final.every((run) => ["completed", "dead", "cancelled"].includes(run.state))) break;
      if (Date.now() > deadline)
        throw new Error(`runs still open: ${final.filter((r) => r.state !== "completed").length}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    // 0 runs lost.
    expect(final).toHaveLength(RUNS);
    expect(final.filter((run) => run.state !== "completed").map((run) => [run.state, run.error])).toEqual([]);
    expect(killsInFlight).toBeGreaterThanOrEqual(5);
    expect(stalls.size).toBeGreaterThanOrEqual(2);
    expect(final.filter((run) => run.attempts > 1).length).toBeGreaterThanOrEqual(3);

    // 0 runs executed by two workers at once: per run, the attempts' intervals on the workers
    // (claimed → its end, the worker's SIGKILL, or — for a paused worker whose next word on the run
    // after it resumed was that it lost the lease, having written and started nothing — its SIGSTOP)
    // never overlap. That a lease-lost worker wrote nothing is checked below (no forks, calls once).
    for (const run of runs) {
      const intervals = workers.flatMap((worker) => {
        const pid = worker.child.pid as number;
        const mine = worker.events.filter((e) => e.event.runId === run.runId);
        return mine.flatMap((claimed, i) => {
          if (claimed.event.type !== "claimed") return [];
          const ended = mine.slice(i + 1).find((e) => e.event.type !== "claimed");
          const stall = stalls.get(pid);
          const pausedThrough =
            stall !== undefined &&
            claimed.at < stall.stoppedAt &&
            ended?.event.type === "lease_lost" &&
            ended.at >= (stall.continuedAt ?? Number.POSITIVE_INFINITY);
          const end = pausedThrough ? stall.stoppedAt : (ended?.at ?? kills.get(pid) ?? Date.now());
          return [{ start: claimed.at, end }];
        });
      });
      intervals.sort((a, b) => a.start - b.start);
      for (let i = 1; i < intervals.length; i++) {
        const story = () =>
          JSON.stringify(
            workers.flatMap((worker) =>
              worker.events
                .filter((e) => e.event.runId === run.runId)
                .map((e) => ({
                  pid: worker.child.pid,
                  at: e.at,
                  type: e.event.type,
                  stall: stalls.get(worker.child.pid as number),
                  killed: kills.get(worker.child.pid as number),
                })),
            ),
          );
        expect(
          intervals[i]?.start,
          `run ${run.runId} ran on two workers at once: ${story()}`,
        ).toBeGreaterThanOrEqual(intervals[i - 1]?.end as number);
      }
    }

    // Side effects: each call ran at most once; each committed (answered) call exactly once.
    const counter = (await readFile(join(ws.workspace, "counter.txt"), "utf8")).trim().split("\n");
    const executed = new Map<string, number>();
    for (const line of counter) {
      const callId = line.split(" ")[0] as string;
      executed.set(callId, (executed.get(callId) ?? 0) + 1);
    }
    expect([...executed.values()].filter((n) => n > 1)).toEqual([]);
    let committed = 0;
    for (const run of runs) {
      const overview = await describeSession(store, run.sessionId);
      expect(overview.otherBranches, `session ${run.sessionId} was written by a second writer`).toEqual([]);
      const segments = [overview.head, ...overview.compacted];
      for (const segment of segments) {
        const entries: Entry<Item>[] = [];
        for await (const entry of store.readAll({ sessionId: run.sessionId, segmentId: segment.segmentId })) {
          entries.push(entry);
        }
        assertSegmentSound(`${run.sessionId}/${segment.segmentId}`, entries, replay(entries));
        for (const entry of entries) {
          if (entry.kind !== "tool_result") continue;
          const item = entry.item as { call_id: string; summary: string; is_error?: boolean };
          if (item.summary === "counted") {
            committed++;
            expect(executed.get(item.call_id), `committed call ${item.call_id}`).toBe(1);
          }
        }
      }
      // Every session restores.
      const pod = await Pod.restore(loaded, run.sessionId, { store, env });
      expect(pod.turn).toBe(1);
      await pod.close();
    }
    expect(committed).toBeGreaterThan(RUNS);

    // The system prompt and the first message of a run are byte-identical on every request,
    // whichever worker sent it.
    const systems = new Map<string, Set<string>>();
    for (const request of double.requests) {
      const key = firstText(request);
      systems.set(key, (systems.get(key) ?? new Set()).add(JSON.stringify(request.body.system)));
    }
    expect([...systems.values()].filter((set) => set.size > 1)).toEqual([]);
  });

  it("3 busy workers, 10 SIGKILLs: each run taken over goes before the runs submitted after it, at once when a slot frees", {
    timeout: 900_000,
  }, async () => {
    const BUSY_RUNS = 36;
    const MIN_QUEUED = 12;
    const double: ProviderDouble = await startProviderDouble({ wire: "anthropic", respond: model });
    cleanups.push(() => double.close());
    const ws = await dispatchWorkspace(double.baseUrl);
    cleanups.push(() => rm(ws.root, { recursive: true, force: true }));
    const url = await database();
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: url };
    const loaded = await loadManifest({ env: { cwd: ws.workspace, home: ws.home, env } });
    const store = new PostgresStore<Item>({ url, maxConnections: 4 });
    const dispatcher = new PgDispatcher({ url, schema: "podkit_dispatch" });
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    cleanups.push(async () => {
      await admin.end();
      await dispatcher.close();
      await store.close();
    });
    // A backlog the workers never clear before the kills end: they stay busy throughout. It is
    // topped up before each kill, so however slowly a busy machine starts the replacement workers,
    // the others cannot run the queue dry meanwhile.
    const runs: RunInfo[] = [];
    const submitBusy = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const { run } = await submitRun(dispatcher, store, {
          pod: "tester",
          session: {
            create: async () => {
              const pod = await Pod.fromManifest(loaded, { store, env });
              try {
                return await pod.startSession();
              } finally {
                await pod.close();
              }
            },
          },
          input: `busy run ${runs.length}: calls=4`,
          maxAttempts: 10,
        });
        runs.push(run);
      }
    };
    const topUp = async () => {
      const queued = (await dispatcher.list({ limit: runs.length + 1 })).filter(
        (run) => run.state === "queued",
      );
      if (queued.length < MIN_QUEUED) await submitBusy(MIN_QUEUED - queued.length);
    };
    await submitBusy(BUSY_RUNS);
    const workers: WorkerProcess[] = [];
    const spawn = () => {
      const worker = startWorker(ws.workspace, env, ["--concurrency", "1"]);
      workers.push(worker);
      return worker;
    };
    cleanups.push(async () => {
      for (const worker of workers) worker.child.kill("SIGKILL");
    });
    for (let i = 0; i < 3; i++) spawn();
    await Promise.all(workers.map((worker) => worker.ready));
    const holding = (worker: WorkerProcess) => {
      let held: string | undefined;
      for (const { event } of worker.events) {
        if (event.type === "claimed") held = event.runId as string;
        else if (event.runId === held) held = undefined;
      }
      return held;
    };
    const killed: { runId: string; at: number }[] = [];
    for (let kill = 0; kill < 10; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000 + Math.random() * 2_000));
      await topUp();
      const alive = () =>
        workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null);
      let victim: WorkerProcess | undefined;
      for (let waited = 0; waited < 30_000 && victim === undefined; waited += 50) {
        // A worker holding a run not killed before: each kill takes over a run of its own.
        const busy = alive().filter((worker) => {
          const held = holding(worker);
          return held !== undefined && !killed.some((k) => k.runId === held);
        });
        victim = busy[Math.floor(Math.random() * busy.length)];
        if (victim === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (victim === undefined) break;
      killed.push({ runId: holding(victim) as string, at: Date.now() });
      victim.child.kill("SIGKILL");
      await new Promise((resolve) => victim.child.once("exit", resolve));
      await spawn().ready;
    }

    const deadline = Date.now() + 600_000;
    let final: RunInfo[] = [];
    for (;;) {
      final = await dispatcher.list({ limit: runs.length });
      if (final.every((run) => ["completed", "dead", "cancelled"].includes(run.state))) break;
      if (Date.now() > deadline)
        throw new Error(`runs still open: ${final.filter((r) => r.state !== "completed").length}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(final.filter((run) => run.state !== "completed").map((run) => [run.state, run.error])).toEqual([]);
    expect(killed.length).toBe(10);

    // What pg-boss recorded per run: when it was submitted, when its latest attempt became
    // claimable (for a run taken over: when the supervisor gave up the dead worker's lease — no retry
    // delay), and when that attempt was claimed.
    const { rows } = await admin.query<{
      id: string;
      created_on: Date;
      start_after: Date;
      started_on: Date;
      retry_count: number;
      retry_delay: number;
      retry_backoff: boolean;
    }>(
      `SELECT id::text, created_on, start_after, started_on, retry_count, retry_delay, retry_backoff FROM podkit_dispatch.job WHERE name = 'podkit.run.tester'`,
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    // A takeover is not delayed: no job carries pg-boss's retry delay (a failed attempt's backoff is
    // set when the attempt fails, and packages/dispatch-pg/test/slots.test.ts shows both waits).
    expect(rows.filter((row) => row.retry_delay !== 0 || row.retry_backoff)).toEqual([]);
    const takenOver = [...new Set(killed.map((k) => k.runId))]
      .map((id) => byId.get(id))
      .filter((row) => row !== undefined);
    expect(takenOver.length).toBe(killed.length);
    let contested = 0;
    for (const run of takenOver) {
      expect(run.retry_count).toBeGreaterThanOrEqual(1);
      const ready = run.start_after.getTime();
      const claimed = run.started_on.getTime();
      // Runs submitted after it, still waiting when it became claimable again…
      const later = rows.filter(
        (other) =>
          other.retry_count === 0 && other.created_on > run.created_on && other.started_on.getTime() > ready,
      );
      if (later.length > 0) contested++;
      // …none of them was claimed before it (fetches at the same moment aside: SKIP LOCKED).
      const overtook = later.filter((other) => other.started_on.getTime() < claimed - 2_000);
      expect(
        overtook.map((other) => other.id),
        `run ${run.id} taken over after later runs`,
      ).toEqual([]);
      const killedAt = killed.find((k) => k.runId === run.id)?.at as number;
      console.log(
        `# takeover of ${run.id}: ${((claimed - killedAt) / 1000).toFixed(1)} s after the SIGKILL (claimable after ${((ready - killedAt) / 1000).toFixed(1)} s)`,
      );
    }
    // The workers were busy: most takeovers competed with queued new work.
    expect(contested).toBeGreaterThanOrEqual(5);
    for (const run of runs) {
      const overview = await describeSession(store, run.sessionId);
      expect(overview.otherBranches).toEqual([]);
    }
  });
});
