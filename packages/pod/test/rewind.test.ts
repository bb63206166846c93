import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  describeSession,
  type Entry,
  type MinimalItem,
  replay,
  restoreSession,
  SessionBusyError,
  SessionLog,
} from "@podkit/session-store";
import { parseFilesChanged } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import { PodUsageError } from "../src/errors.js";
import { INVOCATION_DOMAIN, recordedInvocation } from "../src/pod/invocation.js";
import { otherBranchesWarning } from "../src/pod/pod-restore.js";
import {
  InvalidFileChangeError,
  RewindPathBlockedError,
  RewindPendingError,
  RewindRefusedError,
} from "../src/rewind/errors.js";
import { type RewindReport, rewindSession } from "../src/rewind/rewind-session.js";
import { caught } from "./helpers.js";
import {
  FIVE_TURNS,
  INITIAL_FILES,
  leftovers,
  recordSession,
  recordTurns,
  STORE_KINDS,
  segmentEntries,
  sha,
  snapshot,
  useRewindWorlds,
} from "./rewind-harness.js";

// Issue 42: `rewindSession` takes a session back to turn N — the conversation forks after turn N
// in the same session, and every file the session changed after it goes back to its content
// then, from the store's blobs — all or nothing, refusing to overwrite edits made outside the pod.

const world = useRewindWorlds();

/** The history a replay of the original head gives at the end of `turn` (what the fork must hold). */
function historyAt(entries: readonly Entry<MinimalItem>[], turn: number): unknown[] {
  const end = entries.findIndex((entry) => entry.kind === "turn_end" && entry.turn === turn);
  return replay(entries.slice(0, end + 1)).history;
}

describe.each(STORE_KINDS)("rewindSession on the %s store", (kind) => {
  it("restores every file to its content at the end of turn N byte for byte, removes the files made later, and continues the conversation after turn N in the same session", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
    const original = await segmentEntries(w.store, log.sessionId, log.segmentId);

    const report = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 2,
      workspace: w.workspace,
    });

    expect(await snapshot(w.workspace)).toEqual(states.get(2));
    expect(await leftovers(w.workspace)).toEqual([]);
    expect(report.conversation).toMatchObject({ action: "fork", sourceSegmentId: log.segmentId });
    const byPath = Object.fromEntries(report.files.map((file) => [file.path, file]));
    expect(byPath["notes/new.txt"]).toEqual({
      path: "notes/new.txt",
      action: "delete",
      from: sha("created in turn three\n"),
      to: null,
    });
    expect(byPath["README.md"]).toMatchObject({ action: "write", from: null, to: sha("# project\n") });
    // Existed before the session, first changed in turn 4: back to what it was.
    expect(byPath["keep.txt"]).toMatchObject({ action: "write", to: sha("before the session\n") });
    expect(byPath["untracked.txt"]).toBeUndefined();

    // The conversation: a new head of the same session, forked after turn 2, its history the
    // original's at the end of turn 2, item for item (the cached prefix).
    const overview = await describeSession(w.store, log.sessionId);
    expect(overview.head.segmentId).toBe(report.conversation.headSegmentId);
    expect(overview.head.forkedFrom).toEqual({ segmentId: log.segmentId, atTurn: 2 });
    const restored = await restoreSession(w.store, log.sessionId);
    expect(restored.turn).toBe(2);
    expect(JSON.stringify(restored.history)).toBe(JSON.stringify(historyAt(original, 2)));
    expect(restored.systemPrompt).toBe("You edit files.");
    // The source segment is not rewritten: it only gained the rewind's claim, naming the new head.
    const after = await segmentEntries(w.store, log.sessionId, log.segmentId);
    expect(after.slice(0, original.length)).toEqual(original);
    expect(after.slice(original.length)).toEqual([
      expect.objectContaining({
        kind: "extension",
        domain: "session.rewind",
        payload: expect.objectContaining({ to_turn: 2, segment_id: overview.head.segmentId }),
      }),
    ]);
  });

  it("works from another machine: another checkout with the files copied, the contents only in the store", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
    const elsewhere = await w.tempDir("machine-b");
    await cp(w.workspace, elsewhere, { recursive: true, filter: (source) => !source.includes(".podkit") });
    const store = w.openStore();

    await rewindSession({ store, sessionId: log.sessionId, toTurn: 1, workspace: elsewhere });

    expect(await snapshot(elsewhere)).toEqual(states.get(1));
    // This machine's checkout was not touched.
    expect(await snapshot(w.workspace)).toEqual(states.get(5));
  });

  it("a file edited outside the pod makes it refuse, naming every such path; nothing changes; force overwrites them", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
    await writeFile(join(w.workspace, "src/a.ts"), "export const a = 'mine';\n");
    await rm(join(w.workspace, "keep.txt"));
    // Deleted outside the pod, but turn 2 did not have it either: nothing to overwrite, no refusal.
    await rm(join(w.workspace, "notes/new.txt"));
    const before = await snapshot(w.workspace);
    const segments = await w.store.listSegments(log.sessionId);
    const rewind = (force: boolean) =>
      rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 2, workspace: w.workspace, force });

    const error = await caught(rewind(false));
    expect(RewindRefusedError.isInstance(error)).toBe(true);
    expect((error as RewindRefusedError).refused).toEqual([
      {
        path: "src/a.ts",
        recorded: sha("export const a = 5;\n"),
        current: sha("export const a = 'mine';\n"),
      },
      { path: "keep.txt", recorded: sha("kept, changed\n"), current: null },
    ]);
    expect(error.message).toMatch(/\n {2}src\/a\.ts\n {2}keep\.txt \(deleted\)$/);
    expect((error as RewindRefusedError).hint).toMatch(/--force/);
    expect(await snapshot(w.workspace)).toEqual(before);
    expect(await w.store.listSegments(log.sessionId)).toEqual(segments);
    expect(await leftovers(w.workspace)).toEqual([]);

    await rewind(true);
    expect(await snapshot(w.workspace)).toEqual(states.get(2));
  });

  it("a dry run reports what would change and writes nothing: no file, no segment, no entry, no journal", async () => {
    const w = await world(kind);
    const { log } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
    await writeFile(join(w.workspace, "keep.txt"), "edited by hand\n");
    const files = await snapshot(w.workspace);
    const entries = await segmentEntries(w.store, log.sessionId, log.segmentId);
    const podkitDir = await readdir(join(w.workspace, ".podkit"));

    const report = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 3,
      workspace: w.workspace,
      dryRun: true,
    });

    expect(report).toMatchObject({
      dryRun: true,
      conversation: { action: "fork", sourceSegmentId: log.segmentId },
    });
    expect(report.conversation.headSegmentId).toBeUndefined();
    expect(report.files.map(({ path, action }) => [path, action]).sort()).toEqual(
      [
        ["deep/er/still/x.bin", "delete"],
        ["keep.txt", "write"],
        ["src/a.ts", "write"],
        ["src/lib/b.ts", "write"],
      ].sort(),
    );
    expect(report.refused).toEqual([
      { path: "keep.txt", recorded: sha("kept, changed\n"), current: sha("edited by hand\n") },
    ]);
    expect(await snapshot(w.workspace)).toEqual(files);
    expect(await w.store.listSegments(log.sessionId)).toEqual([log.segmentId]);
    expect(await segmentEntries(w.store, log.sessionId, log.segmentId)).toEqual(entries);
    expect(await readdir(join(w.workspace, ".podkit"))).toEqual(podkitDir);
  });

  it("files only: the files go back, the conversation stays; the session records it, so a later rewind finds no edit outside the pod", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);

    const report = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 3,
      workspace: w.workspace,
      filesOnly: true,
    });
    expect(report.conversation).toEqual({ action: "skipped", headSegmentId: log.segmentId });
    expect(await snapshot(w.workspace)).toEqual(states.get(3));
    expect((await restoreSession(w.store, log.sessionId)).turn).toBe(5);

    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace });
    expect(await snapshot(w.workspace)).toEqual(states.get(1));
  });

  it("conversation only: the files stay; the new head records them as they are, so the session can go on and be rewound again", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);

    const report = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 2,
      workspace: w.workspace,
      conversationOnly: true,
    });
    expect(report.files).toEqual([]);
    expect(await snapshot(w.workspace)).toEqual(states.get(5));
    const head = await SessionLog.open(w.store, log.sessionId);
    expect(head.segmentId).toBe(report.conversation.headSegmentId);
    expect(head.state.turn).toBe(2);

    // The session goes on from turn 2 with the files as they stood (turn 3 anew). Rewound to
    // turn 2 again, the files return to how they stood then; to turn 1, to turn 1's contents:
    // the conversation-only rewind's record in the new head says what the files were.
    const more = await recordTurns(w, head, [
      { input: "three again", files: { "src/a.ts": "a = 'again';\n" } },
    ]);
    expect(more.has(3)).toBe(true);
    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 2, workspace: w.workspace });
    expect(await snapshot(w.workspace)).toEqual(states.get(5));
    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace });
    expect(await snapshot(w.workspace)).toEqual(states.get(1));
  });

  it("a rewound session rewinds again, through its whole line: compaction and the earlier fork included", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS.slice(0, 3), INITIAL_FILES);
    // A compaction after turn 3 continues the line in a new segment.
    const compacted = await log.createCompactedSegment({
      history: [{ type: "message", role: "user", content: [{ type: "text", text: "[summary]" }] }],
    });
    for (const [turn, state] of await recordTurns(w, compacted, FIVE_TURNS.slice(3))) states.set(turn, state);

    // To turn 4: the compacted segment holds it, so the fork starts from there (the prefix the model saw last).
    const first = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 4,
      workspace: w.workspace,
    });
    expect(first.conversation.sourceSegmentId).toBe(compacted.segmentId);
    expect(await snapshot(w.workspace)).toEqual(states.get(4));
    // To turn 1, from the fork: back through the compaction into the first segment.
    const second = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 1,
      workspace: w.workspace,
    });
    expect(second.conversation.sourceSegmentId).toBe(log.segmentId);
    expect(await snapshot(w.workspace)).toEqual(states.get(1));
    expect((await restoreSession(w.store, log.sessionId)).turn).toBe(1);
    // And to turn 0: the files as they were before the session.
    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 0, workspace: w.workspace });
    expect(await snapshot(w.workspace)).toEqual(states.get(0));
  });

  it("a turn in flight (the process died during it) is cut away with its files", async () => {
    const w = await world(kind);
    const { log, states } = await recordSession(w, FIVE_TURNS.slice(0, 2), INITIAL_FILES);
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "crashes" },
    ]);
    const blobs = w.store.blobs as NonNullable<typeof w.store.blobs>;
    await writeFile(join(w.workspace, "half.txt"), "written before the crash\n");
    await log.append({
      kind: "extension",
      domain: "files.changed",
      payload: {
        call_id: "c",
        tool: "write_file",
        changes: [
          {
            path: "half.txt",
            before: null,
            after: await blobs.put(Buffer.from("written before the crash\n")),
          },
        ],
      },
    });

    const report = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 2,
      workspace: w.workspace,
    });
    expect(report.conversation.action).toBe("fork");
    expect(await snapshot(w.workspace)).toEqual(states.get(2));
    expect((await restoreSession(w.store, log.sessionId)).inFlight).toBeNull();
  });

  it("resuming after a rewind warns of no other branch: the branch it left ends in its claim (a drift branch still warns)", async () => {
    const w = await world(kind);
    const { log } = await recordSession(w, FIVE_TURNS.slice(0, 3), INITIAL_FILES);
    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace });
    const reopened = await SessionLog.open(w.store, log.sessionId);
    expect(reopened.otherBranches.map((branch) => branch.segmentId)).toEqual([log.segmentId]);
    expect(await otherBranchesWarning(w.store, log.sessionId, reopened)).toBeUndefined();
    // Positive control: a writer that knew the old head forks a live branch, and that one warns.
    const stale = await SessionLog.open(w.store, log.sessionId);
    const other = await SessionLog.open(w.store, log.sessionId);
    await other.append({ kind: "extension", domain: "test.other", payload: {} });
    const forked = await stale.append({ kind: "extension", domain: "test.stale", payload: {} });
    expect(forked.driftFork).not.toBeNull();
    const latest = await SessionLog.open(w.store, log.sessionId);
    expect(await otherBranchesWarning(w.store, log.sessionId, latest)).toContain("other live branches");
  });

  it("the new head keeps how the session was started (pod.invocation), so resume uses the same manifest", async () => {
    const w = await world(kind);
    const log = await SessionLog.create(w.store, { systemPrompt: "p", config: {} });
    await log.append({
      kind: "extension",
      domain: INVOCATION_DOMAIN,
      payload: { manifest: "other/pod.toml" },
    });
    await recordTurns(w, log, FIVE_TURNS.slice(0, 2));
    await rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace });
    expect(await recordedInvocation(w.store, log.sessionId)).toEqual({ manifest: "other/pod.toml" });
  });

  it("nothing to do at the last turn: no entry, no segment", async () => {
    const w = await world(kind);
    const { log } = await recordSession(w, FIVE_TURNS.slice(0, 2));
    const count = (await segmentEntries(w.store, log.sessionId, log.segmentId)).length;
    const report: RewindReport = await rewindSession({
      store: w.store,
      sessionId: log.sessionId,
      toTurn: 2,
      workspace: w.workspace,
    });
    expect(report.conversation).toEqual({ action: "unchanged", headSegmentId: log.segmentId });
    expect(report.files).toEqual([]);
    expect((await segmentEntries(w.store, log.sessionId, log.segmentId)).length).toBe(count);
  });
});

describe("rewindSession refuses what it must not do", () => {
  it("cannot race another writer: an append after the rewind read the session makes it SessionBusyError, and nothing changes", async () => {
    const w = await world("fs");
    const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
    const other = await SessionLog.open(w.openStore(), log.sessionId);
    let raced = false;
    const error = await caught(
      rewindSession({
        store: w.store,
        sessionId: log.sessionId,
        toTurn: 2,
        workspace: w.workspace,
        onProgress: (event) => {
          // The other writer appends while the rewind stages its files (before it claims the session).
          if (event.step === "staged" && !raced) {
            raced = true;
            void other.append({ kind: "system_item", item: { kind: "notification", body: "meanwhile" } });
          }
        },
      }),
    );
    expect(SessionBusyError.isInstance(error)).toBe(true);
    // Positive control: the other writer's entry did land, during the rewind.
    const entries = await segmentEntries(w.store, log.sessionId, log.segmentId);
    expect(entries.at(-1)).toMatchObject({ kind: "system_item" });
    expect(await snapshot(w.workspace)).toEqual(states.get(5));
    expect(await leftovers(w.workspace)).toEqual([]);
    expect(await w.store.listSegments(log.sessionId)).toEqual([log.segmentId]);
  });

  it("never follows a symbolic link out of the workspace (the positive control shows a plain write would)", async () => {
    const w = await world("fs");
    const outside = await w.tempDir("outside");
    await writeFile(join(outside, "victim.txt"), "outside\n");
    const { log } = await recordSession(w, [
      { input: "one", files: { "lib/file.txt": "one\n", "top.txt": "one\n" } },
      { input: "two", files: { "lib/file.txt": "two\n", "top.txt": "two\n" } },
    ]);
    // The directory on the way becomes a link to a directory outside the workspace.
    await rm(join(w.workspace, "lib"), { recursive: true });
    await symlink(outside, join(w.workspace, "lib"));
    await writeFile(join(outside, "file.txt"), "two\n");
    const rewind = (force: boolean) =>
      rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace, force });
    const blocked = await caught(rewind(true));
    expect(RewindPathBlockedError.isInstance(blocked)).toBe(true);
    expect(blocked.message).toContain("lib is a symbolic link");
    expect(await readFile(join(outside, "file.txt"), "utf8")).toBe("two\n");
    // Positive control: the same path written plainly lands outside.
    await writeFile(join(w.workspace, "lib/file.txt"), "escaped\n");
    expect(await readFile(join(outside, "file.txt"), "utf8")).toBe("escaped\n");

    // The file itself replaced by a link to a file outside: with force, the link is replaced, the target untouched.
    await rm(join(w.workspace, "lib"));
    await mkdir(join(w.workspace, "lib"));
    await writeFile(join(w.workspace, "lib/file.txt"), "two\n");
    await rm(join(w.workspace, "top.txt"));
    await symlink(join(outside, "victim.txt"), join(w.workspace, "top.txt"));
    const refused = await caught(rewind(false));
    expect((refused as RewindRefusedError).refused).toEqual([
      { path: "top.txt", recorded: sha("two\n"), current: "symlink" },
    ]);
    await rewind(true);
    expect(await readFile(join(w.workspace, "top.txt"), "utf8")).toBe("one\n");
    expect(await readFile(join(outside, "victim.txt"), "utf8")).toBe("outside\n");
  });

  it("a log naming a path in the session store, or a rewind record with a path that escapes, is refused as damaged", async () => {
    const w = await world("fs");
    const { log } = await recordSession(w, FIVE_TURNS.slice(0, 2));
    const blobs = w.store.blobs as NonNullable<typeof w.store.blobs>;
    const digest = await blobs.put(Buffer.from("x"));
    const segmentFile = `.podkit/sessions/${log.sessionId}/${log.segmentId}.jsonl`;
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({
      kind: "extension",
      domain: "files.changed",
      payload: {
        call_id: "c",
        tool: "write_file",
        changes: [{ path: segmentFile, before: digest, after: null }],
      },
    });
    await log.appendMany([{ kind: "turn_end", turn: 3 }]);
    const error = await caught(
      rewindSession({
        store: w.store,
        sessionId: log.sessionId,
        toTurn: 2,
        workspace: w.workspace,
        force: true,
      }),
    );
    expect(InvalidFileChangeError.isInstance(error)).toBe(true);
    expect(error.message).toContain("lies in the session store");
    // Positive control: the file-change schema itself lets the path through; only the rewind's rule stops it.
    const entries = await segmentEntries(w.store, log.sessionId, log.segmentId);
    const named = entries.find(
      (entry) =>
        entry.kind === "extension" &&
        entry.domain === "files.changed" &&
        JSON.stringify(entry).includes(segmentFile),
    );
    expect(parseFilesChanged((named as { payload: unknown }).payload)?.changes[0]?.path).toBe(segmentFile);
    expect((await readFile(join(w.workspace, segmentFile), "utf8")).length).toBeGreaterThan(0);

    const other = await recordSession(w, FIVE_TURNS.slice(0, 2));
    await other.log.append({ kind: "invoke", trigger: "user" });
    await other.log.append({
      kind: "extension",
      domain: "session.rewind",
      payload: {
        rewind_id: "r",
        to_turn: 1,
        changes: [{ path: "../../outside.txt", before: null, after: digest }],
      },
    });
    await other.log.append({ kind: "turn_end", turn: 3 });
    const escaping = await caught(
      rewindSession({
        store: w.store,
        sessionId: other.log.sessionId,
        toTurn: 2,
        workspace: w.workspace,
        force: true,
      }),
    );
    expect(InvalidFileChangeError.isInstance(escaping)).toBe(true);
    expect(escaping.message).toContain('".." part');
  });

  it("a journal of a rewind still running in a live process refuses a second one", async () => {
    const w = await world("fs");
    const { log } = await recordSession(w, FIVE_TURNS.slice(0, 2));
    await mkdir(join(w.workspace, ".podkit", "rewind"), { recursive: true });
    const journal = {
      version: 1,
      rewindId: "0123456789abcdef",
      sessionId: log.sessionId,
      toTurn: 1,
      pid: process.ppid, // alive, on this machine, not this process
      host: (await import("node:os")).hostname(),
      claim: {
        segmentId: log.segmentId,
        index: 99,
        entry: { kind: "extension", ts: 1, domain: "x", payload: {} },
      },
      fork: null,
      operations: [],
      createdDirs: [],
    };
    await writeFile(
      join(w.workspace, ".podkit", "rewind", `${log.sessionId}.journal.json`),
      JSON.stringify(journal),
    );
    const error = await caught(
      rewindSession({ store: w.store, sessionId: log.sessionId, toTurn: 1, workspace: w.workspace }),
    );
    expect(RewindPendingError.isInstance(error)).toBe(true);
    expect((error as RewindPendingError).running).toBe(true);
  });

  it("a turn the session does not have, or both only-options, is a usage error", async () => {
    const w = await world("fs");
    const { log } = await recordSession(w, FIVE_TURNS.slice(0, 2));
    const base = { store: w.store, sessionId: log.sessionId, workspace: w.workspace };
    const late = await caught(rewindSession({ ...base, toTurn: 3 }));
    expect(PodUsageError.isInstance(late)).toBe(true);
    expect(late.message).toContain("has 2 finished turns");
    expect(PodUsageError.isInstance(await caught(rewindSession({ ...base, toTurn: -1 })))).toBe(true);
    expect(
      PodUsageError.isInstance(
        await caught(rewindSession({ ...base, toTurn: 1, filesOnly: true, conversationOnly: true })),
      ),
    ).toBe(true);
  });
});
