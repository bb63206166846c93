import assert from "node:assert/strict";
import { CorruptEntryError, UnsupportedFormatError } from "../errors.js";
import { newId } from "../ids.js";
import { restoreSession, SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { readEntries, readFromIndex } from "./helpers.js";

function startText(sessionId: string, segmentId: string, v: number): string {
  return JSON.stringify({
    kind: "segment_start",
    ts: 1_760_000_000_000,
    v,
    session_id: sessionId,
    segment_id: segmentId,
    system_prompt: null,
    config: {},
    history: [],
  });
}

/**
 * A committed entry that is not valid is a typed error, never skipped; a log from a newer writer
 * (a format version, or an entry kind this code does not know) is `UnsupportedFormatError`.
 */
export function corruptionCases({ it }: CaseContext): void {
  const invalid: [string, string][] = [
    ["not JSON", '{"kind":"user_input","ts":1,"text":'],
    ["a known kind missing a field", '{"kind":"user_input","ts":1}'],
    [
      "a known kind with a value no format has",
      '{"kind":"run_completed","ts":1,"result":"vanished","interrupted":false}',
    ],
  ];
  for (const [what, text] of invalid) {
    it(`a committed entry that is ${what} is CorruptEntryError, never skipped`, async ({
      store,
      writeRaw,
    }) => {
      const ref = { sessionId: newId(), segmentId: newId() };
      const good = '{"kind":"user_input","ts":1,"text":"fine"}';
      await writeRaw(ref, [startText(ref.sessionId, ref.segmentId, 2), good, text, good]);
      const corrupt = (error: unknown) => CorruptEntryError.isInstance(error) && error.line === 3;
      await assert.rejects(readEntries(store, ref), corrupt);
      await assert.rejects(readFromIndex(store, ref, 1), corrupt);
      await assert.rejects(readFromIndex(store, ref, 2), corrupt);
      assert.equal((await readFromIndex(store, ref, 3)).length, 1); // the entries after it
      await assert.rejects(SessionLog.openSegment(store, ref), corrupt);
      await assert.rejects(restoreSession(store, ref.sessionId), corrupt);
    });
  }

  it("a segment in a format version this code does not know is UnsupportedFormatError", async ({
    store,
    writeRaw,
  }) => {
    const ref = { sessionId: newId(), segmentId: newId() };
    await writeRaw(ref, [
      startText(ref.sessionId, ref.segmentId, 99),
      '{"kind":"user_input","ts":1,"text":"x"}',
    ]);
    const unsupported = (error: unknown) =>
      UnsupportedFormatError.isInstance(error) &&
      error.version === 99 &&
      error.line === 1 &&
      /written by a newer podkit \(format 99\)/.test(error.message);
    await assert.rejects(readEntries(store, ref), unsupported);
    await assert.rejects(restoreSession(store, ref.sessionId), unsupported);
  });

  for (const v of [2, 3]) {
    it(`an intact entry of a kind this code does not know, in a v${v} segment, is UnsupportedFormatError naming it`, async ({
      store,
      writeRaw,
    }) => {
      const ref = { sessionId: newId(), segmentId: newId() };
      const good = '{"kind":"user_input","ts":1,"text":"fine"}';
      await writeRaw(ref, [
        startText(ref.sessionId, ref.segmentId, v),
        good,
        '{"kind":"teleport","ts":2}',
        good,
      ]);
      const unsupported = (error: unknown) =>
        UnsupportedFormatError.isInstance(error) &&
        !CorruptEntryError.isInstance(error) &&
        error.kind === "teleport" &&
        error.line === 3 &&
        /newer podkit: entry kind "teleport" is not in format \d+/.test(error.message);
      await assert.rejects(readEntries(store, ref), unsupported);
      await assert.rejects(readFromIndex(store, ref, 2), unsupported);
      assert.equal((await readFromIndex(store, ref, 3)).length, 1); // the entries after it
      await assert.rejects(SessionLog.openSegment(store, ref), unsupported);
      await assert.rejects(restoreSession(store, ref.sessionId), unsupported);
    });
  }
}
