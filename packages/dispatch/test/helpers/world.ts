import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import type { PodOptions } from "@podkit/pod";
import { type Entry, FsStore, replay, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, type ProviderDoubleOptions, startProviderDouble } from "@podkit/testkit";
import { definePodkitToolPackage, type PodkitToolPackage } from "@podkit/tools";
import { afterEach } from "vitest";
import { assertSegmentSound } from "../../../../test-support/log-soundness.js";
import type { InProcessQueueOptions } from "../../src/index.js";
import { InProcessQueue, RunWorker, type RunWorkerEvent, type RunWorkerOptions } from "../../src/index.js";

export const FIXED_CLOCK = () => new Date("2026-04-15T09:30:00Z");

/** A tool package: `count` appends its call id to a file, `block` waits until its run is aborted. */
export function testTools(counterFile: string, started: () => void = () => {}): PodkitToolPackage {
  return definePodkitToolPackage({
    name: "dispatch-test-tools",
    tools: () => [
      () => ({
        name: "count",
        description: "counts one side effect",
        inputSchema: { type: "object", properties: {}, additionalProperties: true },
        async execute(_args: unknown, { callId }: { callId: string }) {
          const { appendFile } = await import("node:fs/promises");
          await appendFile(counterFile, `${callId}\n`);
          return { summary: "counted" };
        },
      }),
      () => ({
        name: "block",
        description: "waits until the run is aborted",
        inputSchema: { type: "object", properties: {}, additionalProperties: true },
        execute: (_args: unknown, { signal }: { signal: AbortSignal }) =>
          new Promise<{ summary: string }>((resolve) => {
            started();
            signal.addEventListener("abort", () => resolve({ summary: "stopped" }), { once: true });
          }),
      }),
    ],
  });
}

export interface World {
  workspace: string;
  counterFile: string;
  loaded: LoadedManifest;
  store: FsStore<Item>;
  double: ProviderDouble;
  queue: InProcessQueue;
  events: RunWorkerEvent[];
  podOptions(): PodOptions;
  /** A worker on its own connection to the queue, started; stopped after the test. */
  worker(extra?: Partial<RunWorkerOptions>): { worker: RunWorker; done: Promise<void> };
  /** Resolves when `started()` of the block tool was called. */
  blockStarted(): Promise<void>;
  /** Every entry of every segment of `sessionId`, by segment id. */
  segments(sessionId: string): Promise<Map<string, Entry<Item>[]>>;
}

/** Real temp workspaces, a provider double, an in-process queue; workers stopped and logs checked after each test. */
export function useWorlds(): (options?: {
  double?: Omit<ProviderDoubleOptions, "wire">;
  queue?: InProcessQueueOptions;
  manifestExtra?: string;
}) => Promise<World> {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (options = {}) => {
    const root = await mkdtemp(join(tmpdir(), "podkit-dispatch-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const workspace = join(root, "project");
    const manifest = [
      '[pod]\nname = "reviewer"',
      '[model]\nref = "anthropic/claude-sonnet-4-5"',
      '[worker]\nsystem_prompt = "date={{ date }} tools={{ tools | join(\\",\\") }}"',
      options.manifestExtra ?? "",
    ].join("\n");
    await mkdir(join(workspace, ".podkit"), { recursive: true });
    await writeFile(join(workspace, ".podkit", "manifest.toml"), `${manifest}\n`);
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const double = await startProviderDouble({ wire: "anthropic", ...options.double });
    const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
    const queue = new InProcessQueue(options.queue);
    const counterFile = join(root, "counter.txt");
    let blockStarted!: () => void;
    let blocked = new Promise<void>((resolve) => {
      blockStarted = resolve;
    });
    const tools = testTools(counterFile, () => {
      blockStarted();
      blocked = Promise.resolve();
    });
    const events: RunWorkerEvent[] = [];
    const workers: RunWorker[] = [];
    cleanups.push(async () => {
      for (const worker of workers) worker.stop();
      await double.close();
      await store.close();
    });
    const world: World = {
      workspace,
      counterFile,
      loaded,
      store,
      double,
      queue,
      events,
      podOptions: () => ({
        model: double.baseUrl,
        env: { ANTHROPIC_API_KEY: "test-key" },
        clock: FIXED_CLOCK,
        onWarning: () => {},
        toolPackages: [tools],
      }),
      worker(extra = {}) {
        const worker = new RunWorker({
          store,
          manifests: [loaded],
          podOptions: () => world.podOptions(),
          onEvent: (event) => events.push(event),
          ...extra,
          // Only a connection the worker uses: another one would run heartbeats of its own.
          dispatcher: extra.dispatcher ?? queue.connect(),
        });
        workers.push(worker);
        return { worker, done: worker.start() };
      },
      blockStarted: () => blocked,
      async segments(sessionId) {
        const found = new Map<string, Entry<Item>[]>();
        for (const segmentId of await store.listSegments(sessionId)) {
          const entries: Entry<Item>[] = [];
          for await (const entry of store.readAll({ sessionId, segmentId })) entries.push(entry);
          found.set(segmentId, entries);
        }
        return found;
      },
    };
    return world;
  };
}

/**
 * The log-integrity check of the pod tests (packages/pod/test/pod-harness.ts `assertLogsSound`),
 * on one session: every segment replays, no `invoke` is left open, none opens inside another.
 */
export function assertSessionSound(segments: ReadonlyMap<string, readonly Entry<Item>[]>): void {
  for (const [segment, entries] of segments) assertSegmentSound(segment, entries, replay([...entries]));
}

/** Writes a file, creating its directory. */
export async function writeFileIn(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
}

/** Waits until `check` returns a value, polling every 20 ms, failing after `ms`. */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
