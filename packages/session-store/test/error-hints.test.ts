import { appendFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { frameLine } from "../src/entry/line-frame.js";
import {
  AppendFailedError,
  BlobCorruptError,
  CorruptEntryError,
  InvalidEntryError,
  LockTimeoutError,
  NotFoundError,
  ReplayError,
  SessionStoreError,
  SessionStoreUsageError,
  UnsupportedFormatError,
} from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { newId } from "../src/ids.js";
import { SessionLog } from "../src/log/session-log.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Each error class that has something to tell a person sets its own `hint` (the CLI prints it
// under the message); no other package keeps a table of them.
const tempDir = useTempDirs();

describe("the hints session-store errors carry", () => {
  it.each([
    [
      "a corrupt line",
      new CorruptEntryError({ file: "/s/a.jsonl", line: 3, reason: "not JSON" }),
      /lines before it are intact: `podkit session fork <session> --at-turn <n>`/,
    ],
    [
      "a newer format",
      new UnsupportedFormatError({ file: "/s/a.jsonl", line: 1, version: 9 }),
      /written by a newer podkit; upgrade @podkit\/cli/,
    ],
    [
      "an entry kind of a newer format",
      new UnsupportedFormatError({ file: "/s/a.jsonl", line: 4, kind: "checkpoint" }),
      /written by a newer podkit; upgrade @podkit\/cli/,
    ],
    [
      "a held lock",
      new LockTimeoutError({ lockFile: "/s/a.lock", holderPid: 42, waitedMs: 5000 }),
      /another podkit process is writing this session; wait for it/,
    ],
    [
      "an unknown session",
      new NotFoundError({ what: "session", id: "x", where: "/s" }),
      /`podkit session list` shows this workspace's sessions/,
    ],
    [
      "a missing blob",
      new NotFoundError({ what: "blob", id: `sha256:${"a".repeat(64)}`, where: "/s/.blobs/sha256" }),
      /`podkit store gc` removes only blobs no session names; was the store copied or restored without its blobs/,
    ],
    [
      "a corrupt blob",
      new BlobCorruptError({
        digest: `sha256:${"a".repeat(64)}`,
        where: "/s/.blobs/sha256/aa/a",
        reason: "x",
      }),
      /the stored copy of this content is damaged: restore the store's blobs from a backup/,
    ],
  ])("%s", (_what, error, hint) => {
    expect(error.hint).toMatch(hint);
  });

  it("has no hint where there is nothing for a person to do", () => {
    for (const error of [
      new SessionStoreError("base"),
      new SessionStoreUsageError("bad id"),
      new InvalidEntryError({ kind: "x", issues: "y" }),
      new AppendFailedError({ file: "/s/a.jsonl", detail: "ENOSPC" }),
      new ReplayError({ entryIndex: 0, reason: "no segment_start" }),
    ]) {
      expect(error.hint, error.name).toBeUndefined();
    }
  });

  it("the errors a real store throws carry them: a corrupt committed line, a newer writer's entry, an unknown session", async () => {
    const store = new FsStore({ root: await tempDir() });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    await appendFile(store.segmentPath(log.ref), '{"kind":"turn_end","ts":2\n');
    const corrupt = await SessionLog.open(store, log.ref.sessionId).catch((error: unknown) => error);
    expect(CorruptEntryError.isInstance(corrupt) && corrupt.hint).toMatch(/podkit session fork/);
    const other = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    await appendFile(store.segmentPath(other.ref), `${frameLine('{"kind":"checkpoint","ts":2}', 1)}\n`);
    const newer = await SessionLog.open(store, other.ref.sessionId).catch((error: unknown) => error);
    expect(UnsupportedFormatError.isInstance(newer) && newer.hint).toMatch(/written by a newer podkit/);
    expect((newer as Error).message).toMatch(/:2: .*entry kind "checkpoint" is not in format 3/);
    const missing = await SessionLog.open(store, newId()).catch((error: unknown) => error);
    expect(NotFoundError.isInstance(missing) && missing.hint).toMatch(/podkit session list/);
    await store.close();
  });
});
