import { appendFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { frameLine } from "../src/entry/line-frame.js";
import { CorruptEntryError, UnsupportedFormatError } from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { restoreSession, SessionLog } from "../src/log/session-log.js";
import {
  EXPECTED_STATES,
  FIXTURES,
  FUTURE_FIXTURES,
  fixtureLines,
  fixtureNames,
  isFutureFixture,
  plantFixtures,
} from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Every build reads every released format: each fixture restores to its exact state, and a log
// from a newer podkit is refused as such. packages/store-postgres runs the same corpus on
// PostgreSQL, and the pod's tests restore it under llm-worker's strict schemas.
const tempDir = useTempDirs();

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("the fixture corpus across format versions", () => {
  it("holds a folder for every format this build reads, and the logs from a newer podkit it names", async () => {
    const versions = (await readdir(FIXTURES)).filter((name) => /^v\d+$/.test(name)).sort();
    expect(versions).toEqual(["v1", "v2", "v3"]);
    const names = fixtureNames();
    expect(names.filter(isFutureFixture).sort()).toEqual(Object.keys(FUTURE_FIXTURES).sort());
    expect(names.length).toBeGreaterThanOrEqual(25);
  });

  it("every fixture of every format version restores to its exact expected state", async () => {
    const restored: string[] = [];
    for (const name of fixtureNames().filter((name) => !isFutureFixture(name))) {
      const expected = EXPECTED_STATES[name];
      expect(expected, `${name} has no expected state in test/helpers/fixture-states.ts`).toBeDefined();
      const store = new FsStore({ root: await tempDir() });
      const [ref] = await plantFixtures(store.root, name);
      expect((await SessionLog.openSegment(store, ref as NonNullable<typeof ref>)).state, name).toEqual(
        expected,
      );
      expect(await restoreSession(store, (ref as NonNullable<typeof ref>).sessionId), name).toEqual(expected);
      await store.close();
      restored.push(name);
    }
    expect(restored).toEqual(Object.keys(EXPECTED_STATES).sort());
  });

  it("a log from a newer podkit is UnsupportedFormatError naming what this podkit lacks, never corruption", async () => {
    for (const [name, future] of Object.entries(FUTURE_FIXTURES)) {
      const store = new FsStore({ root: await tempDir() });
      const [ref] = (await plantFixtures(store.root, name)) as [{ sessionId: string; segmentId: string }];
      const read: unknown[] = [];
      const error = await caught(
        (async () => {
          for await (const entry of store.readAll(ref)) read.push(entry);
        })(),
      );
      expect(UnsupportedFormatError.isInstance(error), name).toBe(true);
      expect(CorruptEntryError.isInstance(error), name).toBe(false);
      expect(error, name).toMatchObject({ line: future.line, kind: future.kind, version: future.version });
      expect((error as Error).message, name).toMatch(/written by a newer podkit/);
      expect((error as UnsupportedFormatError).hint, name).toMatch(/upgrade @podkit\/cli/);
      // The lines before it are intact entries, handed out first.
      expect(read, name).toHaveLength(future.line - 1);
      for (const opening of [SessionLog.openSegment(store, ref), restoreSession(store, ref.sessionId)]) {
        const again = await caught(opening);
        expect(UnsupportedFormatError.isInstance(again) && again.line === future.line, name).toBe(true);
      }
      await store.close();
    }
  });

  it("in a v1 segment (no frame to vouch for the line) an unknown kind stays corruption; framed it is a newer writer's", async () => {
    const future = '{"kind":"checkpoint","ts":1760000000000}';
    const v1 = new FsStore({ root: await tempDir() });
    const [plain] = (await plantFixtures(v1.root, "v1/plain.jsonl")) as [
      { sessionId: string; segmentId: string },
    ];
    await appendFile(v1.segmentPath(plain), `${future}\n`);
    const corrupt = await caught(SessionLog.openSegment(v1, plain));
    expect(CorruptEntryError.isInstance(corrupt)).toBe(true);
    expect(corrupt).toMatchObject({
      line: 17,
      reason: expect.stringMatching(/unknown entry kind "checkpoint"/),
    });
    await v1.close();

    // The same entry, framed as the 17th line of the same log in v2: intact, so from a newer podkit.
    const v2 = new FsStore({ root: await tempDir() });
    const [framed] = (await plantFixtures(v2.root, "v2/plain.jsonl")) as [
      { sessionId: string; segmentId: string },
    ];
    expect(fixtureLines("v2/plain.jsonl")).toHaveLength(16);
    await appendFile(v2.segmentPath(framed), `${frameLine(future, 16)}\n`);
    const unsupported = await caught(SessionLog.openSegment(v2, framed));
    expect(UnsupportedFormatError.isInstance(unsupported)).toBe(true);
    expect(unsupported).toMatchObject({ line: 17, kind: "checkpoint" });
    // A damaged frame on that line is still corruption: the kind is only trusted on an intact line.
    const damaged = new FsStore({ root: await tempDir() });
    const [bad] = (await plantFixtures(damaged.root, "v2/plain.jsonl")) as [
      { sessionId: string; segmentId: string },
    ];
    await appendFile(
      damaged.segmentPath(bad),
      `${frameLine(future, 16).replace("checkpoint", "checkpoinT")}\n`,
    );
    expect(CorruptEntryError.isInstance(await caught(SessionLog.openSegment(damaged, bad)))).toBe(true);
    await v2.close();
    await damaged.close();
  });
});
