import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CorruptEntryError,
  type Entry,
  FsStore,
  restoreSession,
  SessionLog,
  type Store,
  sessionsRoot,
  UnsupportedFormatError,
} from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { Pod } from "../src/pod/pod.js";
import { openSessionStore } from "../src/pod/store-selection.js";
import { type Corruption, corruptionOf, type RawEntry, wellFormedLog } from "./corrupt-log-cases.js";
import { caught, useTempDirs } from "./helpers.js";
import { installStorePackage, workspaceWith } from "./store-workspace.js";

const tempDir = useTempDirs();
const database = usePostgresDatabases();
const BASE = wellFormedLog("session", "segment");
const FIXTURES = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "session-store",
  "test",
  "fixtures",
);

/** `log` under fresh ids (a corruption never touches the ids of its `segment_start`). */
function withIds(
  log: readonly RawEntry[],
  n: number,
): { log: RawEntry[]; sessionId: string; segmentId: string } {
  const sessionId = `s-${n}-${Date.now().toString(36)}`;
  const segmentId = `g-${n}`;
  const copy = structuredClone(log) as RawEntry[];
  Object.assign(copy[0] as RawEntry, { session_id: sessionId, segment_id: segmentId });
  return { log: copy, sessionId, segmentId };
}

/**
 * Writes `log` as a segment through `lax`, a store with only its own minimal schemas: it frames
 * and checksums the lines as any writer would, so a read fails on what an entry says.
 */
async function plant(lax: Store<unknown>, log: readonly RawEntry[], sessionId: string, segmentId: string) {
  await lax.createSegment({ sessionId, segmentId }, log as unknown as Entry<unknown>[]);
}

/** Entries `readAll` hands out before it fails (the ones before the bad line). */
async function readUntilError(store: Store<unknown>, ref: { sessionId: string; segmentId: string }) {
  const entries: Entry<unknown>[] = [];
  const error = await (async () => {
    for await (const entry of store.readAll(ref)) entries.push(entry);
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { entries, error };
}

/**
 * Checks one corrupted log on `strict` (opened as a pod opens it) against `lax` (the store's own
 * minimal schemas): the lax store restores it — the corruption gets through without the worker's
 * schemas — while the strict one fails with `CorruptEntryError` naming `file` and the line, after
 * handing out every entry before it.
 */
async function expectRefused(
  strict: Store<unknown>,
  lax: Store<unknown>,
  sessionId: string,
  segmentId: string,
  file: string,
  corruption: Corruption,
): Promise<void> {
  const what = `${corruption.category}: ${corruption.change}`;
  expect((await restoreSession(lax, sessionId)).sessionId, what).toBe(sessionId);
  const error = await caught(restoreSession(strict, sessionId));
  expect(CorruptEntryError.isInstance(error), `${what}: ${error.message}`).toBe(true);
  expect(error, what).toMatchObject({ file, line: corruption.index + 1 });
  expect(error.message, what).toMatch(
    new RegExp(`^${escapeRegExp(file)}:${corruption.index + 1}: corrupt session log entry: `),
  );
  const before = await readUntilError(strict, { sessionId, segmentId });
  expect(CorruptEntryError.isInstance(before.error), what).toBe(true);
  expect(before.entries.length, what).toBe(corruption.index);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("a session log read back is untrusted input (issue 22 §1)", () => {
  it("every fuzzed corruption of a filesystem log is CorruptEntryError naming the file and line", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, "");
    const strict = (await openSessionStore(loaded, { env: {} })) as Store<unknown>;
    const lax = new FsStore({ root: sessionsRoot(workspace) }) as Store<unknown>;
    const categories = new Set<string>();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(corruptionOf(BASE), async ({ log, corruption }) => {
        const { log: written, sessionId, segmentId } = withIds(log, n++);
        await plant(lax, written, sessionId, segmentId);
        const file = join(sessionsRoot(workspace), sessionId, `${segmentId}.jsonl`);
        await expectRefused(strict, lax, sessionId, segmentId, file, corruption);
        categories.add(corruption.category);
      }),
      { numRuns: 150 },
    );
    expect([...categories].sort()).toEqual(["config type", "item shape", "item type"]);
    await strict.close();
    await lax.close();
  });

  it("every fuzzed corruption of a PostgreSQL log is CorruptEntryError naming the session, segment and seq", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, `[session]\nstore = "postgres"\n`);
    await installStorePackage(workspace);
    const url = await database();
    const strict = (await openSessionStore(loaded, { env: { PODKIT_DATABASE_URL: url } })) as Store<unknown>;
    const lax = new PostgresStore({ url }) as Store<unknown>;
    const categories = new Set<string>();
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(corruptionOf(BASE), async ({ log, corruption }) => {
          const { log: written, sessionId, segmentId } = withIds(log, n++);
          await plant(lax, written, sessionId, segmentId);
          await expectRefused(
            strict,
            lax,
            sessionId,
            segmentId,
            `postgres:public/${sessionId}/${segmentId}`,
            corruption,
          );
          categories.add(corruption.category);
        }),
        { numRuns: 50 },
      );
      expect([...categories].sort()).toEqual(["config type", "item shape", "item type"]);
    } finally {
      await strict.close();
      await lax.close();
    }
  });

  it("Pod.restore of a corrupted log fails with CorruptEntryError, never an internal error", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, "");
    const lax = new FsStore({ root: sessionsRoot(workspace) }) as Store<unknown>;
    const cases = fc.sample(corruptionOf(BASE), { numRuns: 3, seed: 22 });
    for (const [i, { log, corruption }] of cases.entries()) {
      const { log: written, sessionId, segmentId } = withIds(log, i);
      await plant(lax, written, sessionId, segmentId);
      const file = join(sessionsRoot(workspace), sessionId, `${segmentId}.jsonl`);
      const error = await caught(Pod.restore(loaded, sessionId, { env: {} }));
      expect(CorruptEntryError.isInstance(error), `${corruption.change}: ${error.message}`).toBe(true);
      expect(error).toMatchObject({ file, line: corruption.index + 1 });
    }
    // Positive control: the log before its corruption restores into a pod.
    const { log: good, sessionId, segmentId } = withIds(BASE, 99);
    await plant(lax, good, sessionId, segmentId);
    const pod = await Pod.restore(loaded, sessionId, { env: {} });
    expect(pod.sessionId).toBe(sessionId);
    await pod.close();
  });

  it("every log of the frozen fixture corpus still restores under the worker's schemas", async () => {
    const { workspace, loaded } = await workspaceWith(tempDir, "");
    const store = await openSessionStore(loaded, { env: {} });
    const restored: string[] = [];
    for (const version of readdirSync(FIXTURES)) {
      for (const name of readdirSync(join(FIXTURES, version))) {
        const text = readFileSync(join(FIXTURES, version, name), "utf8");
        const start = JSON.parse(text.slice(0, text.indexOf("\n"))) as {
          session_id: string;
          segment_id: string;
        };
        const file = join(sessionsRoot(workspace), start.session_id, `${start.segment_id}.jsonl`);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, text);
        const opening = SessionLog.openSegment(store, {
          sessionId: start.session_id,
          segmentId: start.segment_id,
        });
        // `future-*`: a log from a newer podkit, refused as such (never as corrupt).
        if (name.startsWith("future-")) {
          const error = await caught(opening);
          expect(UnsupportedFormatError.isInstance(error), `${version}/${name}`).toBe(true);
          continue;
        }
        expect((await opening).entryCount).toBe(text.split("\n").length - 1);
        restored.push(`${version}/${name}`);
      }
    }
    expect(restored.length).toBeGreaterThanOrEqual(23);
    await store.close();
  });
});
