import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ItemSchema, type RequestConfigSchema, textMessage } from "@podkit/llm-worker";
import { FORMAT_VERSION, FsStore, restoreSession, SessionLog, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { Pod } from "../src/pod/pod.js";
import { openSessionStore } from "../src/pod/store-selection.js";
import {
  SessionStorePackageInvalidError,
  SessionStoreUrlUnsetError,
} from "../src/pod/store-selection-errors.js";
import { caught, useTempDirs, writeFiles } from "./helpers.js";
import { installStorePackage, workspaceWith } from "./store-workspace.js";

const run = promisify(execFile);
const tempDir = useTempDirs();
const database = usePostgresDatabases();
const podDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifestDist = join(podDir, "node_modules", "@podkit", "manifest", "dist", "index.js");

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
  if (error.hint !== undefined) outcome += " | hint: " + error.hint;
}
const pgLoaded = Object.keys(createRequire(import.meta.url).cache).some((f) => /[\\\\/]pg[\\\\/]lib[\\\\/]/.test(f));
console.log(JSON.stringify({ outcome, pgLoaded }));
`,
  });
  // Without the NODE_PATH pnpm's bin shims give the test runner (it lists the monorepo's virtual
  // store, where every workspace package is found): resolution as in a user's project.
  const { NODE_PATH: _, ...processEnv } = process.env;
  const { stdout } = await run(process.execPath, [script], { cwd: dir, env: processEnv });
  return JSON.parse(stdout) as { outcome: string; pgLoaded: boolean };
}

describe("openSessionStore: the store [session] selects", () => {
  it("opens the filesystem store under <workspace>/.podkit/sessions by default", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, "");
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
    const { loaded } = await workspaceWith(
      tempDir,
      `[session]\nstore = "postgres"\nurl_env = "TEAM_PG_URL"\n`,
    );
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
    const { loaded } = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
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
    const fs = await workspaceWith(tempDir, "");
    const pgWorkspace = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
    await installStorePackage(pgWorkspace.workspace);
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

  it("finds @podkit/store-postgres where the manifest is, and names it with where it looked when it is not there", async () => {
    const { root, workspace } = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
    const dir = await tempDir("probe");
    const podEntry = join(podDir, "dist", "index.js");
    const url = { PODKIT_DATABASE_URL: "postgres://podkit@127.0.0.1:9/podkit" };
    const missing = await probe(dir, podEntry, workspace, url);
    expect(missing.outcome).toMatch(/^package missing: /);
    expect(missing.outcome).toContain(
      "needs the package @podkit/store-postgres, which is not installed where the manifest is",
    );
    expect(missing.outcome).toContain(join(workspace, "node_modules", "@podkit", "store-postgres"));
    expect(missing.outcome).toContain("manifest.toml:6");
    expect(missing.outcome).toContain(
      `hint: install it in the workspace: cd ${workspace} && npm install @podkit/store-postgres (or pnpm add @podkit/store-postgres)`,
    );
    expect(missing.pgLoaded).toBe(false);

    // Positive control: installed in a node_modules above the workspace (as in a monorepo), the
    // same probe finds it there and opens it.
    await installStorePackage(root);
    expect(await probe(dir, podEntry, workspace, url)).toEqual({ outcome: "PostgresStore", pgLoaded: true });
  });

  it("uses the store package the application passes, with the worker's schemas, instead of resolving one", async () => {
    const { loaded } = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
    const opened: unknown[] = [];
    const fake = {
      openStore: (options: unknown) => {
        opened.push(options);
        return { close: async () => {} };
      },
    };
    const env = { PODKIT_DATABASE_URL: "postgres://app@db/podkit" };
    await openSessionStore(loaded, { env, storePackages: { "@podkit/store-postgres": async () => fake } });
    expect(opened).toHaveLength(1);
    const { url, itemSchema, configSchema } = opened[0] as {
      url: string;
      itemSchema: unknown;
      configSchema: typeof RequestConfigSchema;
    };
    expect({ url, itemSchema }).toEqual({ url: "postgres://app@db/podkit", itemSchema: ItemSchema });
    // The worker's request config: its keys typed, keys of other versions let through.
    expect(configSchema.safeParse({ max_tokens: 5, model: "written by an older podkit" }).success).toBe(true);
    expect(configSchema.safeParse({ max_tokens: "lots" }).success).toBe(false);

    const invalid = await caught(
      openSessionStore(loaded, {
        env,
        storePackages: { "@podkit/store-postgres": async () => ({ PostgresStore: 1 }) },
      }),
    );
    expect(SessionStorePackageInvalidError.isInstance(invalid)).toBe(true);
    expect(invalid.message).toContain("@podkit/store-postgres does not export openStore");
  });

  it("opens a real database through the package installed in the workspace and restores what it wrote", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
    await installStorePackage(workspace);
    const url = await database();
    const store = await openSessionStore(loaded, { env: { PODKIT_DATABASE_URL: url } });
    try {
      const log = await SessionLog.create(store, { systemPrompt: "resolved", config: { max_tokens: 5 } });
      await log.append({ kind: "user_input", text: "through the workspace's store package" });
      const restored = await restoreSession(store, log.sessionId);
      expect(restored.history).toEqual([textMessage("user", "through the workspace's store package")]);
    } finally {
      await store.close();
    }
  });

  it("@podkit/pod has no dependency on @podkit/store-postgres and its build never imports it", async () => {
    const manifest = JSON.parse(await readFile(join(podDir, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      expect(Object.keys((manifest[field] as Record<string, string> | undefined) ?? {})).not.toContain(
        "@podkit/store-postgres",
      );
    }
    const dist = join(podDir, "dist");
    const files = (await readdir(dist, { recursive: true })).filter((file) => String(file).endsWith(".js"));
    expect(files.length).toBeGreaterThan(10);
    // Positive control: the pattern does find an import of it.
    expect('const m = await import("@podkit/store-postgres");').toMatch(
      /(?:from|import)\s*\(?\s*["']@podkit\/store-postgres["']/,
    );
    for (const file of files) {
      expect(await readFile(join(dist, String(file)), "utf8"), String(file)).not.toMatch(
        /(?:from|import)\s*\(?\s*["']@podkit\/store-postgres["']/,
      );
    }
  });
});
