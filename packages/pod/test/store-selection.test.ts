import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, realpath, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadManifest } from "@podkit/manifest";
import { FORMAT_VERSION, FsStore, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { Pod } from "../src/pod/pod.js";
import { openSessionStore } from "../src/pod/store-selection.js";
import { SessionStoreUrlUnsetError } from "../src/pod/store-selection-errors.js";
import { caught, useTempDirs, writeFiles } from "./helpers.js";
import { MODEL_REF } from "./pod-harness.js";

const run = promisify(execFile);
const tempDir = useTempDirs();
const podDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifestDist = join(podDir, "node_modules", "@podkit", "manifest", "dist", "index.js");

/** A workspace whose manifest has `session` as its `[session]` table; returns it loaded. */
async function workspaceWith(session: string) {
  const root = await tempDir("store");
  await writeFiles(root, {
    "project/.podkit/manifest.toml": `[pod]\nname = "p"\n[model]\nref = "${MODEL_REF}"\n${session}`,
  });
  const workspace = join(root, "project");
  const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
  return { root, workspace, loaded };
}

/**
 * Runs `node probe.mjs` in `dir`: it loads the manifest of `workspace`, opens its session store
 * with `env`, and prints the outcome and whether the `pg` driver was loaded into the process.
 */
async function probe(dir: string, podEntry: string, workspace: string, env: Record<string, string>) {
  const script = join(dir, "probe.mjs");
  await writeFiles(dir, {
    "probe.mjs": `
import { createRequire } from "node:module";
const { loadManifest } = await import(${JSON.stringify(manifestDist)});
const { openSessionStore, SessionStorePackageMissingError } = await import(${JSON.stringify(podEntry)});
const loaded = await loadManifest({ env: { cwd: ${JSON.stringify(workspace)}, home: ${JSON.stringify(dir)}, env: {} } });
let outcome;
try {
  const store = await openSessionStore(loaded, { env: ${JSON.stringify(env)} });
  outcome = store.constructor.name;
  await store.close();
} catch (error) {
  outcome = (SessionStorePackageMissingError.isInstance(error) ? "package missing: " : "other error: ") + error.message;
}
const pgLoaded = Object.keys(createRequire(import.meta.url).cache).some((f) => /[\\\\/]pg[\\\\/]lib[\\\\/]/.test(f));
console.log(JSON.stringify({ outcome, pgLoaded }));
`,
  });
  const { stdout } = await run(process.execPath, [script], { cwd: dir });
  return JSON.parse(stdout) as { outcome: string; pgLoaded: boolean };
}

describe("openSessionStore: the store [session] selects", () => {
  it("opens the filesystem store under <workspace>/.podkit/sessions by default", async () => {
    const { workspace, loaded } = await workspaceWith("");
    const store = await openSessionStore(loaded, { env: {} });
    expect(store).toBeInstanceOf(FsStore);
    const ref = { sessionId: "s1", segmentId: "g1" };
    await store.createSegment(ref, [
      {
        kind: "segment_start",
        ts: 1,
        v: FORMAT_VERSION,
        session_id: "s1",
        segment_id: "g1",
        system_prompt: null,
        config: {},
        history: [],
      },
    ]);
    await store.close();
    expect(existsSync(join(sessionsRoot(workspace), "s1", "g1.jsonl"))).toBe(true);
  });

  it("names the variable, and the manifest line that chose it, when the URL is unset or empty", async () => {
    const { loaded } = await workspaceWith(`[session]\nstore = "postgres"\nurl_env = "TEAM_PG_URL"\n`);
    const unset = await caught(openSessionStore(loaded, { env: { PODKIT_DATABASE_URL: "postgres://x" } }));
    expect(SessionStoreUrlUnsetError.isInstance(unset)).toBe(true);
    expect((unset as SessionStoreUrlUnsetError).variable).toBe("TEAM_PG_URL");
    expect(unset.message).toContain("$TEAM_PG_URL");
    expect(unset.message).toContain("manifest.toml:7");
    expect(unset.message).toContain("not set");
    expect((unset as SessionStoreUrlUnsetError).hint).toContain("export TEAM_PG_URL=postgres://");

    const empty = await caught(openSessionStore(loaded, { env: { TEAM_PG_URL: " " } }));
    expect(SessionStoreUrlUnsetError.isInstance(empty)).toBe(true);
    expect(empty.message).toContain("TEAM_PG_URL is empty");
  });

  it("Pod.fromManifest and Pod.restore open the selected store, failing before any tool starts", async () => {
    const { loaded } = await workspaceWith(`[session]\nstore = "postgres"\n`);
    let toolsLoaded = false;
    const toolPackages = [
      {
        name: "probe",
        tools: () => {
          toolsLoaded = true;
          return [];
        },
      },
    ];
    const fromManifest = await caught(Pod.fromManifest(loaded, { env: {}, toolPackages }));
    expect(SessionStoreUrlUnsetError.isInstance(fromManifest)).toBe(true);
    expect(fromManifest.message).toContain("$PODKIT_DATABASE_URL");
    const restore = await caught(Pod.restore(loaded, "some-session", { env: {}, toolPackages }));
    expect(SessionStoreUrlUnsetError.isInstance(restore)).toBe(true);
    expect(toolsLoaded).toBe(false);
  });

  it("never loads the database driver for the filesystem store (and does for PostgreSQL)", async () => {
    const fs = await workspaceWith("");
    const pgWorkspace = await workspaceWith(`[session]\nstore = "postgres"\n`);
    const dir = await tempDir("probe");
    const podEntry = join(podDir, "dist", "index.js");
    expect(await probe(dir, podEntry, fs.workspace, {})).toEqual({ outcome: "FsStore", pgLoaded: false });
    // Positive control: the same probe with PostgreSQL selected does load it (no connection is made).
    const url = { PODKIT_DATABASE_URL: "postgres://podkit@127.0.0.1:9/podkit" };
    expect(await probe(dir, podEntry, pgWorkspace.workspace, url)).toEqual({
      outcome: "PostgresStore",
      pgLoaded: true,
    });
  });

  it("names @podkit/store-postgres when it is not installed next to @podkit/pod", async () => {
    const { workspace } = await workspaceWith(`[session]\nstore = "postgres"\n`);
    // An installation of @podkit/pod with its dependencies but without the optional peer.
    const dir = await tempDir("install");
    const installed = join(dir, "node_modules", "@podkit", "pod");
    await mkdir(join(installed, "node_modules", "@podkit"), { recursive: true });
    await cp(join(podDir, "package.json"), join(installed, "package.json"));
    await cp(join(podDir, "dist"), join(installed, "dist"), { recursive: true });
    await cp(join(podDir, "resources"), join(installed, "resources"), { recursive: true });
    for (const name of await readdir(join(podDir, "node_modules"))) {
      const scoped = name.startsWith("@") ? await readdir(join(podDir, "node_modules", name)) : [""];
      for (const inner of scoped) {
        const dep = inner === "" ? name : `${name}/${inner}`;
        if (dep === "@podkit/store-postgres" || dep === "@podkit/testkit" || dep.startsWith(".")) continue;
        if (dep.startsWith("@types")) continue;
        await mkdir(dirname(join(installed, "node_modules", dep)), { recursive: true });
        await symlink(
          await realpath(join(podDir, "node_modules", dep)),
          join(installed, "node_modules", dep),
        );
      }
    }
    const podEntry = join(installed, "dist", "index.js");
    const url = { PODKIT_DATABASE_URL: "postgres://podkit@127.0.0.1:9/podkit" };
    const missing = await probe(dir, podEntry, workspace, url);
    expect(missing.outcome).toMatch(/^package missing: /);
    expect(missing.outcome).toContain("needs the package @podkit/store-postgres, which is not installed");
    expect(missing.pgLoaded).toBe(false);

    // Positive control: installed beside @podkit/pod (a flat node_modules), the same probe opens it.
    const real = await realpath(join(podDir, "node_modules", "@podkit", "store-postgres"));
    await symlink(real, join(dir, "node_modules", "@podkit", "store-postgres"));
    expect(await probe(dir, podEntry, workspace, url)).toEqual({ outcome: "PostgresStore", pgLoaded: true });
  });
});
