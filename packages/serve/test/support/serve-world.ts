import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { Pod } from "@podkit/pod";
import { FsStore, type Store, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, type ProviderDoubleOptions, startProviderDouble } from "@podkit/testkit";
import { afterEach } from "vitest";
import { type PodkitServer, type PodSource, type ServeOptions, startServer } from "../../src/index.js";

/** A workspace whose manifest's model is the provider double, a store, and a server serving both. */
export interface ServeWorld {
  root: string;
  workspace: string;
  double: ProviderDouble;
  store: Store<Item>;
  server: PodkitServer;
  /** Absolute URL of `path` on the server. */
  url(path: string): string;
}

export interface ServeWorldSetup {
  /** The store to serve (default: the workspace's filesystem store). */
  store?: (workspace: string) => Store<Item>;
  manifestExtra?: string;
  server?: Partial<ServeOptions>;
  /** Provider double options (`respond` for a compaction worker). */
  double?: Omit<ProviderDoubleOptions, "wire">;
}

/** Pods of the workspace's manifest, their model the double (as `podkit serve` builds them). */
export function doublePods(workspace: string, double: ProviderDouble): PodSource {
  const options = (store: Store<Item>) => ({
    store,
    model: double.baseUrl,
    env: { ANTHROPIC_API_KEY: "test-key" },
    onWarning: () => {},
  });
  const loaded = () =>
    loadManifest({ env: { cwd: workspace, home: join(workspace, "..", "home"), env: {} } });
  return {
    create: async (store) => Pod.fromManifest(await loaded(), options(store)),
    restore: async (store, sessionId) => Pod.restore(await loaded(), sessionId, options(store)),
  };
}

/** Writes a scratch workspace with a `.podkit/manifest.toml`; returns its root and workspace. */
export async function scratchWorkspace(manifestExtra = ""): Promise<{ root: string; workspace: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-serve-")));
  const workspace = join(root, "ws");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await mkdir(join(root, "home"), { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    ['[pod]\nname = "served"', '[model]\nref = "anthropic/claude-sonnet-4-5"', manifestExtra, ""].join("\n"),
  );
  return { root, workspace };
}

/** Starts worlds for a test file and tears each down after its test. */
export function useServeWorlds(): (setup?: ServeWorldSetup) => Promise<ServeWorld> {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (setup = {}) => {
    const { root, workspace } = await scratchWorkspace(setup.manifestExtra);
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const double = await startProviderDouble({ wire: "anthropic", ...setup.double });
    cleanups.push(() => double.close());
    const store = setup.store?.(workspace) ?? new FsStore<Item>({ root: sessionsRoot(workspace) });
    cleanups.push(() => store.close());
    const server = await startServer({
      store,
      pods: doublePods(workspace, double),
      port: 0,
      ...setup.server,
    });
    cleanups.push(() => server.close());
    return { root, workspace, double, store, server, url: (path) => `${server.url}${path}` };
  };
}
