import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunWorker, type RunWorkerEvent, submitRun } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { Pod, type PodOptions } from "@podkit/pod";
import { PostgresStore } from "@podkit/store-postgres";
import { type ProviderDouble, type ProviderDoubleOptions, startProviderDouble } from "@podkit/testkit";
import { afterEach } from "vitest";
import {
  databaseUrl,
  dropSchema,
  uniqueSchema,
  useAdminPool,
} from "../../../store-postgres/test/helpers/database.js";
import { PgDispatcher, type PgDispatcherOptions } from "../../src/index.js";

export interface PgWorld {
  loaded: LoadedManifest;
  double: ProviderDouble;
  storeSchema: string;
  dispatchSchema: string;
  admin: () => import("pg").Pool;
  events: RunWorkerEvent[];
  /** A store and a dispatcher on `url` (default the test database), closed after the test. */
  connect(
    url?: string,
    options?: Partial<PgDispatcherOptions>,
  ): { store: PostgresStore<Item>; dispatcher: PgDispatcher };
  podOptions(): PodOptions;
  /** Submits `input` to a new session through `connect()`'s parts. */
  submit(input: string, maxAttempts?: number): ReturnType<typeof submitRun>;
  /** A started worker on its own store and dispatcher (on `url`), stopped after the test. */
  worker(url?: string): RunWorker;
  /** Polls `show` until the run is final (or awaiting approval). */
  settled(runId: string, ms?: number): Promise<import("@podkit/dispatch").RunInfo>;
}

/** A pod workspace, a provider double, a store and a dispatch schema of its own per test. */
export function usePgWorlds(): (options?: {
  double?: Omit<ProviderDoubleOptions, "wire">;
  manifestExtra?: string;
}) => Promise<PgWorld> {
  const admin = useAdminPool();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  return async (options = {}) => {
    const root = await mkdtemp(join(tmpdir(), "podkit-dispatch-pg-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, ".podkit"), { recursive: true });
    await writeFile(
      join(root, ".podkit", "manifest.toml"),
      `[pod]\nname = "reviewer"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[tools]\nbuiltin = []\n${options.manifestExtra ?? ""}\n`,
    );
    const loaded = await loadManifest({ env: { cwd: root, home: join(root, "home"), env: {} } });
    const double = await startProviderDouble({ wire: "anthropic", ...options.double });
    cleanups.push(() => double.close());
    const storeSchema = uniqueSchema("s");
    const dispatchSchema = uniqueSchema("q");
    cleanups.push(async () => {
      await dropSchema(admin(), storeSchema);
      await dropSchema(admin(), dispatchSchema);
    });
    const events: RunWorkerEvent[] = [];
    const world: PgWorld = {
      loaded,
      double,
      storeSchema,
      dispatchSchema,
      admin,
      events,
      connect(url = databaseUrl(), extra = {}) {
        const store = new PostgresStore<Item>({ url, schema: storeSchema, maxConnections: 3 });
        const dispatcher = new PgDispatcher({
          url,
          schema: dispatchSchema,
          maxConnections: 4,
          superviseSeconds: 1,
          onWarning: (message) => events.push({ type: "warning", message }),
          ...extra,
        });
        cleanups.push(async () => {
          await dispatcher.close();
          await store.close();
        });
        return { store, dispatcher };
      },
      podOptions: () => ({
        model: double.baseUrl,
        env: { ANTHROPIC_API_KEY: "test-key" },
        onWarning: () => {},
      }),
      submit(input, maxAttempts) {
        const { store, dispatcher } = world.connect();
        return submitRun(dispatcher, store, {
          pod: "reviewer",
          session: {
            create: async () => {
              const pod = await Pod.fromManifest(loaded, { ...world.podOptions(), store });
              try {
                return await pod.startSession();
              } finally {
                await pod.close();
              }
            },
          },
          input,
          ...(maxAttempts === undefined ? {} : { maxAttempts }),
        });
      },
      worker(url) {
        const { store, dispatcher } = world.connect(url);
        const worker = new RunWorker({
          dispatcher,
          store,
          manifests: [loaded],
          podOptions: () => world.podOptions(),
          onEvent: (event) => events.push(event),
        });
        const done = worker.start();
        cleanups.push(async () => {
          worker.stop();
          await done;
        });
        return worker;
      },
      async settled(runId, ms = 60_000) {
        const { dispatcher } = world.connect();
        const deadline = Date.now() + ms;
        for (;;) {
          const run = await dispatcher.show(runId);
          if (
            run !== undefined &&
            ["completed", "dead", "cancelled", "awaiting_approval"].includes(run.state)
          )
            return run;
          if (Date.now() > deadline) throw new Error(`run ${runId} still ${run?.state} after ${ms} ms`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      },
    };
    return world;
  };
}
