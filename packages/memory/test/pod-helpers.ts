import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { Pod, type PodEvent } from "@podkit/pod";
import { type Entry, FsStore, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach } from "vitest";

type PodOptions = NonNullable<Parameters<typeof Pod.fromManifest>[1]>;

import { clock, MODEL_REF, useTempDirs, writeFiles } from "./helpers.js";

export interface PodWorld {
  workspace: string;
  double: ProviderDouble;
  /** A pod on the workspace's manifest, against the double; closed after the test. */
  pod(options?: { telemetry?: PodOptions["telemetry"] }): Promise<Pod>;
  /** Every pod event (runs and background jobs) of the pods made here. */
  events: PodEvent[];
  /** The entries of a pod's head segment. */
  entries(pod: Pod): Promise<Entry<Item>[]>;
}

/** A temp workspace whose manifest has `memory` as the `[memory]` table (and more), pods against a double. */
export function usePodWorlds(): (manifestExtra: string) => Promise<PodWorld> {
  const tempDir = useTempDirs();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
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
    const double = await startProviderDouble({ wire: "anthropic" });
    cleanups.push(() => double.close());
    const events: PodEvent[] = [];
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
    cleanups.push(() => store.close());
    return {
      workspace,
      double,
      events,
      async pod(options = {}) {
        const pod = await Pod.fromManifest(loaded, {
          model: double.baseUrl,
          env: { ANTHROPIC_API_KEY: "test-key" },
          clock,
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

/** The memory_job events seen, as `job:status`. */
export const jobEvents = (events: readonly PodEvent[]) =>
  events.flatMap((e) => (e.type === "memory_job" ? [`${e.job}:${e.status}`] : []));
