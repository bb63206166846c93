import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { Pod, type PodEvent, type PodWarning } from "@podkit/pod";
import { type Entry, FsStore, replay, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, expect } from "vitest";

type PodOptions = NonNullable<Parameters<typeof Pod.fromManifest>[1]>;

import { clock, MODEL_REF, useTempDirs, writeFiles } from "./helpers.js";

export interface PodWorld {
  workspace: string;
  double: ProviderDouble;
  /** A pod on the workspace's manifest, against the double; closed after the test. */
  pod(options?: PodOptions): Promise<Pod>;
  /** Every pod event (runs and background jobs) of the pods made here. */
  events: PodEvent[];
  /** Every warning of the pods made here (their one channel, `onWarning`). */
  warnings: PodWarning[];
  /** The entries of a pod's head segment. */
  entries(pod: Pod): Promise<Entry<Item>[]>;
  /** A pod restored from session `sessionId`, against the double; closed after the test. */
  restore(sessionId: string, options?: PodOptions): Promise<Pod>;
}

/**
 * The pod harness's after-test check (packages/pod/test/pod-harness.ts): every session log of the
 * workspace replays, and every `invoke` is closed by a `run_*` — memory's after-turn jobs append
 * through the pod's writer and must never leave a turn open or a log that does not replay.
 */
export async function assertLogsSound(workspace: string): Promise<void> {
  const root = sessionsRoot(workspace);
  const store = new FsStore<Item>({ root });
  try {
    const sessions = await readdir(root).catch(() => [] as string[]);
    for (const sessionId of sessions) {
      for (const file of await readdir(join(root, sessionId))) {
        if (!file.endsWith(".jsonl")) continue;
        const segment = `${sessionId}/${file}`;
        const entries: Entry<Item>[] = [];
        for await (const entry of store.readAll({ sessionId, segmentId: file.slice(0, -".jsonl".length) }))
          entries.push(entry);
        expect(replay(entries).inFlight ?? null, `${segment}: an invoke was never closed`).toBeNull();
        let open = false;
        for (const entry of entries) {
          if (entry.kind === "invoke") {
            expect(open, `${segment}: invoke while another is open`).toBe(false);
            open = true;
          } else if (entry.kind === "run_completed" || entry.kind === "run_errored") open = false;
        }
        expect(open, `${segment}: invoke left open`).toBe(false);
      }
    }
  } finally {
    await store.close();
  }
}

/** A temp workspace whose manifest has `memory` as the `[memory]` table (and more), pods against a double. */
export function usePodWorlds(): (manifestExtra: string) => Promise<PodWorld> {
  const tempDir = useTempDirs();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    const pending = cleanups.splice(0).reverse();
    // Close everything even when a check fails, then report the first failure.
    let failure: unknown;
    for (const cleanup of pending) await cleanup().catch((error: unknown) => (failure ??= error));
    if (failure !== undefined) throw failure;
  });
  return async (manifestExtra) => {
    const root = await tempDir("pod");
    const workspace = join(root, "project");
    const manifest = [
      `[pod]\nname = "memory-pod"`,
      `[model]\nref = "${MODEL_REF}"`,
      `[worker]\nsystem_prompt = "You help."\nlanguage = "English"`,
      manifestExtra,
    ].join("\n");
    await writeFiles(root, { "project/.podkit/manifest.toml": `${manifest}\n` });
    // Runs last (cleanups run in reverse), once every pod of the world is closed.
    cleanups.push(() => assertLogsSound(workspace));
    const double = await startProviderDouble({ wire: "anthropic" });
    cleanups.push(() => double.close());
    const events: PodEvent[] = [];
    const warnings: PodWarning[] = [];
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
    cleanups.push(() => store.close());
    return {
      workspace,
      double,
      events,
      warnings,
      async pod(options = {}) {
        const pod = await Pod.fromManifest(loaded, {
          model: double.baseUrl,
          env: { ANTHROPIC_API_KEY: "test-key" },
          clock,
          // The tests attach memory themselves, with their clock (auto-attach: auto-attach.test.ts).
          attachMemory: false,
          onWarning: (warning) => warnings.push(warning),
          ...options,
        });
        pod.subscribe((event) => events.push(event));
        cleanups.push(() => pod.close());
        return pod;
      },
      async restore(sessionId, options = {}) {
        const pod = await Pod.restore(loaded, sessionId, {
          model: double.baseUrl,
          env: { ANTHROPIC_API_KEY: "test-key" },
          clock,
          attachMemory: false,
          onWarning: () => {},
          ...options,
        });
        pod.subscribe((event) => events.push(event));
        cleanups.push(() => pod.close());
        return pod;
      },
      async entries(pod) {
        const out: Entry<Item>[] = [];
        for await (const e of store.readAll({
          sessionId: pod.sessionId ?? "",
          segmentId: pod.segmentId ?? "",
        }))
          out.push(e);
        return out;
      },
    };
  };
}

/** Memory's job_progress events seen, as `job:status` (`memory_extract` shown as `extract`). */
export const jobEvents = (events: readonly PodEvent[]) =>
  events.flatMap((e) =>
    e.type === "job_progress" && e.job.startsWith("memory_")
      ? [`${e.job.slice("memory_".length)}:${e.status}`]
      : [],
  );
