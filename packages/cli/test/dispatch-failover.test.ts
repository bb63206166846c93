import { readFile, rm } from "node:fs/promises";
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
// worker holding runs SIGKILLed 10 times while they work. No run is lost, none runs on two workers
// at once, every committed tool call's side effect happened exactly once, every session restores
// and passes the pods' log-integrity check.

const RUNS = 50;
const KILLS = 10;
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
  it("3 workers, 50 runs, 10 SIGKILLs: nothing lost, nothing run twice at once, each committed call's side effect once", {
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
    const spawn = () => {
      const worker = startWorker(ws.workspace, env, ["--concurrency", "2"]);
      workers.push(worker);
      return worker;
    };
    cleanups.push(async () => {
      for (const worker of workers) worker.child.kill("SIGKILL");
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
    for (let kill = 0; kill < KILLS; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1_000));
      const alive = () =>
        workers.filter((worker) => worker.child.exitCode === null && !kills.has(worker.child.pid as number));
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
    expect(final.filter((run) => run.attempts > 1).length).toBeGreaterThanOrEqual(3);

    // 0 runs executed by two workers at once: per run, the attempts' intervals on the workers
    // (claimed → its end, or the worker's SIGKILL) never overlap.
    for (const run of runs) {
      const intervals = workers.flatMap((worker) => {
        const pid = worker.child.pid as number;
        const mine = worker.events.filter((e) => e.event.runId === run.runId);
        const start = mine.find((e) => e.event.type === "claimed")?.at;
        if (start === undefined) return [];
        const end = mine.find((e) => e.event.type !== "claimed")?.at ?? kills.get(pid) ?? Date.now();
        return [{ start, end }];
      });
      intervals.sort((a, b) => a.start - b.start);
      for (let i = 1; i < intervals.length; i++) {
        expect(intervals[i]?.start, `run ${run.runId} ran on two workers at once`).toBeGreaterThanOrEqual(
          intervals[i - 1]?.end as number,
        );
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
});
