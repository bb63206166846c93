import { rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { FsStore, SessionLog, type Store } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { afterEach, describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { ageBlob } from "../../store-postgres/test/helpers/blob-age.js";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit store gc` on the store the workspace's manifest selects: real child processes, real
// stores (docs/rewind.md, "Garbage collection").

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";
const HOUR = 60 * 60 * 1000;
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/**
 * Three blobs in `store`: one a session names, one nobody names (both stored two hours ago), and
 * one nobody names stored just now. `age` makes a blob look stored that long ago.
 */
async function threeBlobs(store: Store, age: (digest: string, ms: number) => Promise<void>) {
  const blobs = store.blobs;
  if (blobs === undefined) throw new Error("the store has no blobs");
  const named = await blobs.put(Buffer.from("export const a = 1;\n"));
  const unnamed = await blobs.put(Buffer.from("export const a = 0;\n"));
  const young = await blobs.put(Buffer.from("export const a = 2;\n"));
  await age(named, 2 * HOUR);
  await age(unnamed, 2 * HOUR);
  const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
  await log.append({
    kind: "extension",
    domain: "files.changed",
    payload: { tool: "edit_file", changes: [{ path: "src/a.ts", before: null, after: named }] },
  });
  return { named, unnamed, young };
}

/** Runs gc with --dry-run, then for real, then again; checks the output and the store after each. */
async function collect(
  podkit: (args: string[]) => ReturnType<typeof runBin>,
  store: Store,
  blobs: { named: string; unnamed: string; young: string },
) {
  const has = (digest: string) => store.blobs?.has(digest);
  const dry = await podkit(["store", "gc", "--dry-run"]);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain(
    `would remove 1 blob(s) no session names, stored more than 1 hour ago:\n  ${blobs.unnamed}\n`,
  );
  expect(dry.stdout).toContain("kept 1 blob(s)");
  expect(dry.stdout).not.toContain(blobs.named);
  expect(dry.stdout).not.toContain(blobs.young);
  expect(await has(blobs.unnamed)).toBe(true);

  const real = await podkit(["store", "gc", "--json"]);
  expect(real.code, real.stderr).toBe(0);
  expect(JSON.parse(real.stdout)).toEqual({ removed: [blobs.unnamed], kept: 1, debris: [], dryRun: false });
  expect(await has(blobs.unnamed)).toBe(false);
  expect(await has(blobs.named)).toBe(true);
  expect(await has(blobs.young)).toBe(true);

  const again = await podkit(["store", "gc"]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toMatch(/^no blob to remove/);
}

describe("podkit store gc", () => {
  it("on the filesystem store: --dry-run names the unnamed old blob and removes nothing; then it goes, the named and the young stay", async () => {
    const ws = await doubleWorkspace("http://127.0.0.1:9");
    roots.push(ws.root);
    const root = join(ws.workspace, ".podkit", "sessions");
    const store = new FsStore({ root });
    const blobs = await threeBlobs(store, async (digest, ms) => {
      const hex = digest.slice("sha256:".length);
      const then = new Date(Date.now() - ms);
      await utimes(join(root, ".blobs", "sha256", hex.slice(0, 2), hex.slice(2)), then, then);
    });
    const env = { HOME: ws.home };
    await collect((args) => runBin(args, { cwd: ws.workspace, env }), store, blobs);
    await store.close();
  });

  it("on the PostgreSQL store the manifest selects", async () => {
    const ws = await doubleWorkspace(
      "http://127.0.0.1:9",
      `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
    );
    roots.push(ws.root);
    const url = await database();
    const store = new PostgresStore({ url });
    try {
      const blobs = await threeBlobs(store, (digest, ms) => ageBlob(url, digest, ms));
      const env = { HOME: ws.home, [URL_VARIABLE]: url };
      await collect((args) => runBin(args, { cwd: ws.workspace, env }), store, blobs);
    } finally {
      await store.close();
    }
  });
});
