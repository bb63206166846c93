import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type RunInfo, submitRun } from "@podkit/dispatch";
import { PgDispatcher } from "@podkit/dispatch-pg";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { Pod } from "@podkit/pod";
import { describeSession, type Entry } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { type CapturedRequest, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import {
  dispatchWorkspace,
  startWorker,
  URL_VARIABLE,
  type WorkerProcess,
} from "./support/dispatch-world.js";

// Issue 37: workers paused rather than killed (a GC pause, a swapped-out VM: SIGSTOP here) past
// their heartbeat while another worker takes their run over, and workers whose run is cancelled.
// Real `podkit worker` processes, the provider double, a real PostgreSQL server. Assertions read
// the session logs, the counter file the tool writes and what the dispatcher says — never elapsed
// time (the bounds are measured by bench/dispatch-failover.bench.mjs).

const database = usePostgresDatabases();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PHASE_MS = 1_200;

/** Every model answer stalls PHASE_MS mid-stream; `calls=1` asks for one `count` call (PHASE_MS long), then an answer. */
function model(request: CapturedRequest): ScriptedResponse {
  const messages = request.body.messages as { role: string; content: { type: string }[] }[];
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const called = messages.slice(0, lastUser + 1).some((m) => m.content.some((c) => c.type === "tool_result"));
  const slow = { fault: { kind: "stall" as const, afterEvents: 1, ms: PHASE_MS } };
  // `hold`: the tool runs until the run is cancelled (so a cancel always lands mid-run, however slow the machine).
  const hold = JSON.stringify(messages[0]).includes("hold");
  return called
    ? { parts: [{ type: "text", text: `answer ${randomUUID()}` }], ...slow }
    : {
        parts: [{ type: "tool_call", name: "count", arguments: { delay_ms: hold ? 600_000 : PHASE_MS } }],
        ...slow,
      };
}

async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms = 120_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface DispatchWorld {
  ws: { root: string; workspace: string; home: string };
  env: Record<string, string>;
  loaded: LoadedManifest;
  store: PostgresStore<Item>;
  dispatcher: PgDispatcher;
  double: Awaited<ReturnType<typeof startProviderDouble>>;
  workers: WorkerProcess[];
  submit(input: string): Promise<RunInfo>;
  worker(args?: string[]): Promise<WorkerProcess>;
  entries(sessionId: string): Promise<Map<string, Entry<Item>[]>>;
  counter(): Promise<{ callId: string; pid: number }[]>;
}

async function dispatchWorld(): Promise<DispatchWorld> {
  const double = await startProviderDouble({ wire: "anthropic", respond: model });
  cleanups.push(() => double.close());
  const ws = await dispatchWorkspace(double.baseUrl);
  cleanups.push(() => rm(ws.root, { recursive: true, force: true }));
  const url = await database();
  const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: url };
  const loaded = await loadManifest({ env: { cwd: ws.workspace, home: ws.home, env } });
  const store = new PostgresStore<Item>({ url, maxConnections: 4 });
  const dispatcher = new PgDispatcher({ url, schema: "podkit_dispatch" });
  const workers: WorkerProcess[] = [];
  cleanups.push(async () => {
    for (const worker of workers) {
      worker.child.kill("SIGCONT");
      worker.child.kill("SIGKILL");
    }
    await dispatcher.close();
    await store.close();
  });
  return {
    ws,
    env,
    loaded,
    store,
    dispatcher,
    double,
    workers,
    async submit(input) {
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
        input,
        maxAttempts: 10,
      });
      return run;
    },
    async worker(args = ["--concurrency", "1"]) {
      const worker = startWorker(ws.workspace, env, args);
      workers.push(worker);
      await worker.ready;
      return worker;
    },
    async entries(sessionId) {
      const found = new Map<string, Entry<Item>[]>();
      for (const segmentId of await store.listSegments(sessionId)) {
        const entries: Entry<Item>[] = [];
        for await (const entry of store.readAll({ sessionId, segmentId })) entries.push(entry);
        found.set(segmentId, entries);
      }
      return found;
    },
    async counter() {
      const text = await readFile(join(ws.workspace, "counter.txt"), "utf8").catch(() => "");
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [callId, pid] = line.split(" ");
          return { callId: callId as string, pid: Number(pid) };
        });
    },
  };
}

/** The run a worker holds now (claimed, no end, lease kept): undefined when none. */
function heldRun(worker: WorkerProcess): string | undefined {
  let held: string | undefined;
  for (const { event } of worker.events) {
    if (event.type === "claimed") held = event.runId as string;
    else if (event.runId === held) held = undefined;
  }
  return held;
}

const toolCallIds = (entries: readonly Entry<Item>[]) =>
  entries.flatMap((e) =>
    e.kind === "assistant_item" && (e.item as { type: string }).type === "tool_call"
      ? [(e.item as { call_id: string }).call_id]
      : [],
  );

describe("workers that survive stalls and cancels", () => {
  it("SIGSTOP mid-tool and mid-model past the heartbeat, 20 times at random moments: after SIGCONT nothing is written, nothing forked, no tool started; the worker goes on with new runs", {
    timeout: 900_000,
  }, async () => {
    const w = await dispatchWorld();
    const STALLS = 20;
    const MAX_ROUNDS = 10;
    const VICTIMS = 4;
    const pool = await Promise.all(Array.from({ length: 6 }, () => w.worker()));
    const runs: RunInfo[] = [];
    const stalls: {
      victim: WorkerProcess;
      runId: string;
      sessionId: string;
      phase: "model" | "tool";
      continuedAt: number;
      segmentsAtContinue: string[];
      entriesAtContinue: number;
    }[] = [];

    // Rounds until 20 stalls landed (a stop that comes after its run ended is not one).
    for (let round = 0; stalls.length < STALLS && round < MAX_ROUNDS; round++) {
      const batch = await Promise.all(pool.map((_, i) => w.submit(`round ${round} run ${i}: calls=1`)));
      runs.push(...batch);
      // Victims: workers holding a run of this round (each holds at most one: concurrency 1).
      const ours = new Set(batch.map((run) => run.runId));
      const holders = await until("workers holding this round's runs", () => {
        const holding = pool.filter((worker) => ours.has(heldRun(worker) ?? ""));
        return holding.length >= VICTIMS ? holding.slice(0, VICTIMS) : undefined;
      });
      await Promise.all(
        holders.map(async (victim, v) => {
          const runId = heldRun(victim) as string;
          const run = batch.find((r) => r.runId === runId) as RunInfo;
          const claimedAt = [...victim.events].reverse().find((e) => e.event.type === "claimed")
            ?.at as number;
          const pid = victim.child.pid as number;
          // Wait for the phase this victim is to be stopped in, then stop it at a random moment inside it.
          const wantTool = (round + v) % 2 === 1;
          const tag = `round ${round} run ${batch.indexOf(run)}:`;
          const reached = await until(
            `victim ${pid} reaching its ${wantTool ? "tool" : "model"} phase`,
            async () => {
              if (heldRun(victim) !== runId) return "gone";
              if (wantTool) {
                const [entries] = (await w.entries(run.sessionId)).values();
                const calls = new Set(toolCallIds(entries ?? []));
                const lines = await w.counter();
                return lines.some((line) => line.pid === pid && calls.has(line.callId))
                  ? "reached"
                  : undefined;
              }
              const asked = w.double.requests.some(
                (request) => request.receivedAt >= claimedAt && request.rawBody.includes(tag),
              );
              return asked ? "reached" : undefined;
            },
          );
          if (reached === "gone") return;
          await sleep(Math.random() * PHASE_MS * 0.6);
          if (heldRun(victim) !== runId) return; // it finished before the stop landed (a slow round)
          victim.child.kill("SIGSTOP");
          // Where it stopped, as the log and the counter say.
          const [entries] = (await w.entries(run.sessionId)).values();
          const open = toolCallIds(entries ?? []).filter(
            (id) =>
              !(entries ?? []).some(
                (e) => e.kind === "tool_result" && (e.item as { call_id: string }).call_id === id,
              ),
          );
          const counted = new Set(
            (await w.counter()).filter((line) => line.pid === pid).map((line) => line.callId),
          );
          const phase = open.some((id) => counted.has(id)) ? "tool" : "model";
          // Another worker takes the run over once the heartbeat lapsed, and finishes it.
          const done = await until(`run ${runId} finished by another worker`, async () => {
            const shown = await w.dispatcher.show(runId);
            return shown?.state === "completed" || shown?.state === "dead" ? shown : undefined;
          });
          expect(done.state).toBe("completed");
          expect(done.attempts).toBeGreaterThanOrEqual(2);
          const segments = await w.entries(run.sessionId);
          stalls.push({
            victim,
            runId,
            sessionId: run.sessionId,
            phase,
            continuedAt: Date.now(),
            segmentsAtContinue: [...segments.keys()],
            entriesAtContinue: [...segments.values()].reduce((n, e) => n + e.length, 0),
          });
          victim.child.kill("SIGCONT");
          // It learns that its lease is gone (the first thing it does fails the fence).
          await until(`worker ${pid} reporting the lease of ${runId} lost`, () =>
            victim.events.some((e) => e.event.type === "lease_lost" && e.event.runId === runId)
              ? true
              : undefined,
          );
        }),
      );
      // The round's runs all end.
      await until(`round ${round} completed`, async () => {
        const shown = await Promise.all(batch.map((run) => w.dispatcher.show(run.runId)));
        return shown.every((run) => run?.state === "completed") ? true : undefined;
      });
    }
    // New work after the last resume, in waves until every stalled worker finished a run after it.
    const finishedSince = (stall: (typeof stalls)[number]) =>
      stall.victim.events.some(
        (e) => e.at > stall.continuedAt && e.event.type === "ended" && e.event.state === "completed",
      );
    for (let wave = 0; wave < 10 && !stalls.every(finishedSince); wave++) {
      const tail = await Promise.all(pool.map((_, i) => w.submit(`tail ${wave} run ${i}: calls=1`)));
      runs.push(...tail);
      await until(`tail wave ${wave} completed`, async () => {
        const shown = await Promise.all(tail.map((run) => w.dispatcher.show(run.runId)));
        return shown.every((run) => run?.state === "completed") ? true : undefined;
      });
    }

    expect(stalls.length).toBeGreaterThanOrEqual(20);
    expect(stalls.filter((s) => s.phase === "model").length).toBeGreaterThanOrEqual(3);
    expect(stalls.filter((s) => s.phase === "tool").length).toBeGreaterThanOrEqual(3);

    for (const stall of stalls) {
      // Nothing landed after the resume: the session is as the taker left it, no fork was created.
      const segments = await w.entries(stall.sessionId);
      expect([...segments.keys()].sort(), `session ${stall.sessionId}: no new segment`).toEqual(
        [...stall.segmentsAtContinue].sort(),
      );
      expect(segments.size, `session ${stall.sessionId}: no fork`).toBe(1);
      expect((await describeSession(w.store, stall.sessionId)).otherBranches).toEqual([]);
      const entries = [...segments.values()].flat();
      expect(entries).toHaveLength(stall.entriesAtContinue);
      expect(entries.filter((e) => e.ts >= stall.continuedAt)).toEqual([]);
      // The taker said why the turn stopped: the run moved to another worker.
      const note = entries.find(
        (e) => e.kind === "system_item" && (e.item as { kind: string }).kind === "interrupt",
      );
      expect(String((note as { item: { body: string } } | undefined)?.item.body)).toContain(
        "moved to another worker",
      );
      // The stalled worker went on: a run claimed after its resume, and finished.
      expect(finishedSince(stall), `worker ${stall.victim.child.pid} finished a run after its resume`).toBe(
        true,
      );
    }

    // No tool started after a resume for a call its worker could not commit: every executed call is
    // committed in a log, and ran once.
    const committed = new Set<string>();
    for (const run of runs)
      for (const entries of (await w.entries(run.sessionId)).values())
        for (const id of toolCallIds(entries)) committed.add(id);
    const executed = await w.counter();
    expect(executed.filter((line) => !committed.has(line.callId))).toEqual([]);
    const seen = new Map<string, number>();
    for (const line of executed) seen.set(line.callId, (seen.get(line.callId) ?? 0) + 1);
    expect([...seen].filter(([, n]) => n > 1)).toEqual([]);
    for (const run of runs) expect((await w.dispatcher.show(run.runId))?.state).toBe("completed");
  });

  it("runs cancel of a running run: the same worker (--concurrency 1) claims and finishes the next run", {
    timeout: 300_000,
  }, async () => {
    const w = await dispatchWorld();
    const worker = await w.worker(["--concurrency", "1"]);
    const cancelled = await w.submit("first: calls=1 hold");
    await until("the first run's tool started", async () =>
      (await w.counter()).length > 0 ? true : undefined,
    );
    const next = await w.submit("second: calls=1");
    const result = await runBin(["runs", "cancel", cancelled.runId], {
      cwd: w.ws.workspace,
      env: w.env,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const ended = await until("the cancelled run's end", () =>
      worker.events.find((e) => e.event.type === "ended" && e.event.runId === cancelled.runId),
    );
    expect(ended.event.state).toBe("cancelled");
    const claimed = await until("the next run claimed by the same worker", () =>
      worker.events.find((e) => e.event.type === "claimed" && e.event.runId === next.runId),
    );
    // The slot was freed: the same worker (one slot) claimed the next run. How soon is the bench's.
    expect(claimed.event.runId).toBe(next.runId);
    await until("the next run completed", () =>
      worker.events.find(
        (e) => e.event.type === "ended" && e.event.runId === next.runId && e.event.state === "completed",
      ),
    );
    expect((await w.dispatcher.show(cancelled.runId))?.state).toBe("cancelled");
    expect((await w.dispatcher.show(next.runId))?.state).toBe("completed");
  });
});
