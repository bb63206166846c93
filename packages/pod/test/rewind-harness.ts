import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  type Entry,
  FsStore,
  type MinimalItem,
  SessionLog,
  type Store,
  sessionsRoot,
} from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { afterEach } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { useTempDirs } from "./helpers.js";

// Sessions for the rewind tests, built the way a pod records them: real logs in a real store
// (the workspace's filesystem store, or PostgreSQL), the files' contents put in the store's blobs
// before the `files.changed` entry naming them, and the workspace's files written as a tool would.

export type StoreKind = "fs" | "postgres";
export const STORE_KINDS: readonly StoreKind[] = ["fs", "postgres"];

/** A workspace and a store, with a way to open the store again (another process or machine). */
export interface RewindWorld {
  kind: StoreKind;
  workspace: string;
  store: Store<MinimalItem>;
  /** How a child process opens the same store: `fs <root>` or `postgres <url>`. */
  storeArgs: [StoreKind, string];
  openStore(): Store<MinimalItem>;
  /** Another empty directory (another machine's checkout). */
  tempDir(label?: string): Promise<string>;
}

/** Fresh worlds per test, both store kinds; every store opened is closed after the test. */
export function useRewindWorlds(): (kind: StoreKind) => Promise<RewindWorld> {
  const tempDir = useTempDirs();
  const database = usePostgresDatabases();
  const opened: Store<MinimalItem>[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return async (kind) => {
    const workspace = await realpath(await tempDir("rewind"));
    await mkdir(join(workspace, ".podkit"), { recursive: true });
    const where = kind === "fs" ? sessionsRoot(workspace) : await database();
    const openStore = () => {
      const store: Store<MinimalItem> =
        kind === "fs" ? new FsStore({ root: where }) : new PostgresStore({ url: where });
      opened.push(store);
      return store;
    };
    return { kind, workspace, store: openStore(), storeArgs: [kind, where], openStore, tempDir };
  };
}

export const sha = (bytes: string | Uint8Array) =>
  `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** One turn of a scripted session: the user's input and the files its tools change (null: deleted). */
export interface TurnScript {
  input: string;
  files?: Record<string, string | Uint8Array | null>;
  /** Which tool reports the changes (default `write_file`; `bash` reports several at once). */
  tool?: string;
}

/** Files of a workspace (everything but `.podkit/`), path → bytes. */
export type Snapshot = Map<string, string>;

/** Every file under `root` but `.podkit/`, as hex of its bytes (symbolic links as `link:<target>`). */
export async function snapshot(root: string, dir = ""): Promise<Snapshot> {
  const files: Snapshot = new Map();
  for (const name of (await readdir(join(root, dir))).sort()) {
    const path = dir === "" ? name : `${dir}/${name}`;
    if (path === ".podkit") continue;
    const stat = await lstat(join(root, path));
    if (stat.isDirectory()) for (const [p, v] of await snapshot(root, path)) files.set(p, v);
    else files.set(path, (await readFile(join(root, path))).toString("hex"));
  }
  return files;
}

/**
 * Records `turns` into `log` as a pod would: for each turn its invoke and input, one tool call
 * per file (or one `bash` call for all), each file written in the workspace, its contents put in
 * the blobs, then its `files.changed` entry and the result; then the answer and the turn's end.
 * Returns the workspace's snapshot after each turn, indexed by turn number.
 */
export async function recordTurns(
  world: RewindWorld,
  log: SessionLog<MinimalItem>,
  turns: readonly TurnScript[],
): Promise<Map<number, Snapshot>> {
  const states = new Map<number, Snapshot>();
  const blobs = world.store.blobs as NonNullable<Store["blobs"]>;
  for (const script of turns) {
    const turn = log.state.turn + 1;
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: script.input },
    ]);
    const entries = Object.entries(script.files ?? {});
    const groups = script.tool === "bash" ? [entries] : entries.map((entry) => [entry]);
    for (const [index, group] of groups.entries()) {
      if (group.length === 0) continue;
      const callId = `call_${turn}_${index}`;
      const tool = script.tool ?? "write_file";
      const changes = [];
      for (const [path, content] of group) {
        const file = join(world.workspace, path);
        const before = await readFile(file).catch(() => null);
        if (content === null) await rm(file);
        else {
          await mkdir(dirname(file), { recursive: true });
          await writeFile(file, content);
        }
        const beforeDigest = before === null ? null : await blobs.put(before);
        const afterDigest = content === null ? null : await blobs.put(Buffer.from(content));
        changes.push({ path, before: beforeDigest, after: afterDigest });
      }
      await log.append({
        kind: "assistant_item",
        item: { type: "tool_call", call_id: callId, name: tool, arguments: "{}" },
      });
      await log.append({
        kind: "extension",
        domain: "files.changed",
        payload: { call_id: callId, tool, changes },
      });
      await log.append({
        kind: "tool_result",
        item: { type: "tool_result", call_id: callId, summary: "ok" },
      });
    }
    await log.appendMany([
      {
        kind: "assistant_item",
        item: { type: "message", role: "assistant", content: [{ type: "text", text: `done ${turn}` }] },
      },
      { kind: "turn_end", turn },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    states.set(turn, await snapshot(world.workspace));
  }
  return states;
}

/** A new session with `turns` recorded; its state before the first turn is turn 0. */
export async function recordSession(
  world: RewindWorld,
  turns: readonly TurnScript[],
  initial: Record<string, string> = {},
): Promise<{ log: SessionLog<MinimalItem>; states: Map<number, Snapshot> }> {
  for (const [path, content] of Object.entries(initial)) {
    await mkdir(dirname(join(world.workspace, path)), { recursive: true });
    await writeFile(join(world.workspace, path), content);
  }
  const log = await SessionLog.create(world.store, { systemPrompt: "You edit files.", config: {} });
  const states = new Map([[0, await snapshot(world.workspace)]]);
  for (const [turn, state] of await recordTurns(world, log, turns)) states.set(turn, state);
  return { log, states };
}

/** Five turns over nine files: creations, edits, deletions, a bash call changing several, binary bytes. */
export const FIVE_TURNS: readonly TurnScript[] = [
  { input: "one", files: { "src/a.ts": "export const a = 1;\n", "README.md": "# project\n" } },
  { input: "two", files: { "src/a.ts": "export const a = 2;\n", "src/lib/b.ts": "export const b = 1;\n" } },
  {
    input: "three",
    tool: "bash",
    files: {
      "src/a.ts": "export const a = 3;\n",
      "README.md": null,
      "notes/new.txt": "created in turn three\n",
      "src/lib/b.ts": "export const b = 3;\n",
    },
  },
  {
    input: "four",
    files: {
      "deep/er/still/x.bin": Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff),
      "keep.txt": "kept\n",
      "src/lib/b.ts": null,
    },
  },
  { input: "five", files: { "src/a.ts": "export const a = 5;\n", "keep.txt": "kept, changed\n" } },
];

/** The workspace at the start: files no turn records, and one the session will overwrite. */
export const INITIAL_FILES = { "untracked.txt": "nobody records me\n", "keep.txt": "before the session\n" };

/** Every entry of the session's segment `segmentId`. */
export async function segmentEntries(
  store: Store<MinimalItem>,
  sessionId: string,
  segmentId: string,
): Promise<Entry<MinimalItem>[]> {
  const entries: Entry<MinimalItem>[] = [];
  for await (const batch of store.readFrom({ sessionId, segmentId }, 0)) entries.push(...batch);
  return entries;
}

/** Names under the workspace that a rewind stages or journals (none must be left behind). */
export async function leftovers(root: string, dir = ""): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(join(root, dir))) {
    const path = dir === "" ? name : `${dir}/${name}`;
    if (name.includes(".podkit-rewind-") || name.endsWith(".journal.json") || name.endsWith(".tmp"))
      found.push(path);
    const stat = await lstat(join(root, path));
    if (stat.isDirectory() && path !== ".podkit/sessions") found.push(...(await leftovers(root, path)));
  }
  return found;
}
