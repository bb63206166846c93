// Shared set-up of the dispatch benches: a database (PODKIT_TEST_DATABASE_URL, else a throwaway
// cluster), a store and a dispatch schema of their own, the bench workspace and tool, submitting
// runs, and worker processes (bench/lib/dispatch-worker.mjs) whose events arrive as JSON lines.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { submitRun } from "../../packages/dispatch/dist/index.js";
import { PgDispatcher } from "../../packages/dispatch-pg/dist/index.js";
import { Pod } from "../../packages/pod/dist/index.js";
import { PostgresStore } from "../../packages/store-postgres/dist/index.js";
import { startCluster } from "../../scripts/pg-cluster.mjs";
import { toolPackage, workspaceWithManifest } from "./pod-bench-workspace.mjs";

const pg = createRequire(new URL("../../packages/store-postgres/package.json", import.meta.url))("pg");
const WORKER = fileURLToPath(new URL("./dispatch-worker.mjs", import.meta.url));

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const spread = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

/** The database, or undefined (with a note) when PostgreSQL cannot be had. */
export async function benchDatabase(name) {
  if (process.env.PODKIT_TEST_DATABASE_URL) return { url: process.env.PODKIT_TEST_DATABASE_URL, stop() {} };
  try {
    const cluster = await startCluster();
    return { url: cluster.url, stop: () => cluster.stop() };
  } catch (error) {
    console.log(`# ${name} bench not run: ${error.message}`);
    return undefined;
  }
}

/** Schemas, store, dispatcher and workspace of one bench; `close()` drops what it made. */
export async function dispatchBench(url, baseUrl) {
  const storeSchema = `bench_s_${randomBytes(4).toString("hex")}`;
  const dispatchSchema = `bench_q_${randomBytes(4).toString("hex")}`;
  const store = new PostgresStore({ url, schema: storeSchema, maxConnections: 8 });
  const dispatcher = new PgDispatcher({ url, schema: dispatchSchema });
  const { root, loaded } = await workspaceWithManifest("podkit-dispatch-bench-");
  const podOptions = {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "bench" },
    onWarning: () => {},
    toolPackages: [toolPackage],
  };
  const workers = [];
  return {
    store,
    dispatcher,
    loaded,
    podOptions,
    env: {
      PODKIT_BENCH_URL: url,
      PODKIT_BENCH_STORE_SCHEMA: storeSchema,
      PODKIT_BENCH_DISPATCH_SCHEMA: dispatchSchema,
      PODKIT_BENCH_MODEL: baseUrl,
      PODKIT_BENCH_WORKSPACE: loaded.workspace,
    },
    async newSession() {
      const pod = await Pod.fromManifest(loaded, { ...podOptions, store });
      try {
        return await pod.startSession();
      } finally {
        await pod.close();
      }
    },
    submit(input, session) {
      return submitRun(dispatcher, store, {
        pod: "bench",
        session: session === undefined ? { create: () => this.newSession() } : { id: session },
        input,
        maxAttempts: 10,
      });
    },
    /** A worker process; resolves once it serves. */
    async worker(concurrency = 1) {
      const child = spawn(process.execPath, [WORKER, String(concurrency)], {
        env: { ...process.env, ...this.env },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const events = [];
      const listeners = new Set();
      let buffered = "";
      child.stdout.on("data", (chunk) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          if (line.trim() === "") continue;
          const event = { at: performance.now(), ...JSON.parse(line) };
          events.push(event);
          for (const listener of listeners) listener(event);
        }
      });
      const worker = {
        child,
        events,
        /** Resolves with the first event (past or future) matching `predicate`. */
        next(predicate) {
          const found = events.find(predicate);
          if (found) return Promise.resolve(found);
          return new Promise((resolve) => {
            const listener = (event) => {
              if (!predicate(event)) return;
              listeners.delete(listener);
              resolve(event);
            };
            listeners.add(listener);
          });
        },
      };
      workers.push(worker);
      await worker.next((event) => event.type === "serving");
      return worker;
    },
    async close() {
      for (const { child } of workers) child.kill("SIGKILL");
      await dispatcher.close();
      await store.close();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${storeSchema}" CASCADE`);
      await admin.query(`DROP SCHEMA IF EXISTS "${dispatchSchema}" CASCADE`);
      await admin.end();
      const { rm } = await import("node:fs/promises");
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls until every run of `runIds` is completed; the time it was seen. */
export async function allCompleted(dispatcher, runIds) {
  const open = new Set(runIds);
  for (;;) {
    for (const run of await dispatcher.list({ limit: 10_000, states: ["completed"] })) open.delete(run.runId);
    if (open.size === 0) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
