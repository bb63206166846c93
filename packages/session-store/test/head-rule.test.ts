import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { describeSession } from "../src/log/session-head.js";
import type { AppendResult } from "../src/log/session-log.js";
import { SessionLog } from "../src/log/session-log.js";
import { type Child, spawnChild } from "./helpers/children.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

/** Texts of the user messages of a history. */
function userTexts(history: readonly Record<string, unknown>[]): string[] {
  return history
    .filter((item) => item.role === "user")
    .map((item) => (item.content as { text: string }[])[0]?.text as string);
}

/** Waits until the wall clock has passed the newest `ts` in a segment file, so later entries are strictly newer. */
async function clockPast(path: string): Promise<void> {
  const newest = Math.max(
    ...(await readFile(path, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { ts: number }).ts),
  );
  while (Date.now() <= newest) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("the session head (two real writers)", () => {
  it("restore continues the branch written last and lists the other one, whichever writer that is", {
    timeout: 60_000,
  }, async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const log = await SessionLog.create(store, { systemPrompt: "race", config: {} });
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "before the race" });
    await log.append({ kind: "turn_end", turn: 1 });
    await log.append({ kind: "run_completed", result: "finished", interrupted: false });
    await store.close();
    const source = log.segmentId;
    const writers: Child[] = ["red", "blue"].map(() =>
      spawnChild("command-child.mjs", [root, log.sessionId]),
    );
    try {
      for (const writer of writers) expect(await writer.next()).toBe("ready");
      for (const writer of writers) expect(await writer.ask(`open ${source}`)).toEqual({ opened: source });

      // The race: both append at once; one keeps the segment, the other drifts into a fork.
      for (const [i, writer] of writers.entries()) writer.send(`append racer-${i}`);
      const results = (await Promise.all(
        writers.map(async (w) => JSON.parse(await w.next())),
      )) as AppendResult[];
      const winnerAt = results.findIndex((result) => result.driftFork === null);
      expect(results.filter((result) => result.driftFork !== null)).toHaveLength(1);
      const winner = writers[winnerAt] as Child;
      const loser = writers[1 - winnerAt] as Child;
      const fork = (results[1 - winnerAt] as AppendResult).segmentId;
      expect(fork).not.toBe(source);
      // Positive control: by id the fork is the newest segment, so "restore the newest segment"
      // would continue the loser's fork and hide everything the winner writes next.
      expect((await store.listSegments(log.sessionId))[0]).toBe(fork);

      // The winner keeps writing the original segment after the fork exists.
      await clockPast(store.segmentPath({ sessionId: log.sessionId, segmentId: fork }));
      for (const n of [1, 2]) {
        expect(await winner.ask(`append winner-later-${n}`)).toMatchObject({
          segmentId: source,
          driftFork: null,
        });
      }
      const first = await SessionLog.open(new FsStore({ root }), log.sessionId);
      expect(first.segmentId).toBe(source);
      expect(userTexts(first.state.history).slice(-2)).toEqual(["winner-later-1", "winner-later-2"]);
      expect(first.otherBranches).toEqual([
        expect.objectContaining({
          segmentId: fork,
          role: "branch",
          forkedFrom: { segmentId: source, atTurn: 1 },
        }),
      ]);

      // Then the loser continues its fork: now that is the branch written last.
      await clockPast(store.segmentPath(log.ref));
      expect(await loser.ask("append loser-later")).toMatchObject({ segmentId: fork, driftFork: null });
      const second = await SessionLog.open(new FsStore({ root }), log.sessionId);
      expect(second.segmentId).toBe(fork);
      expect(userTexts(second.state.history).at(-1)).toBe("loser-later");
      expect(second.otherBranches.map((branch) => [branch.segmentId, branch.role])).toEqual([
        [source, "branch"],
      ]);
      const overview = await describeSession(new FsStore({ root }), log.sessionId);
      expect(overview.head).toMatchObject({ segmentId: fork, role: "head" });
      expect(overview.head.lastEntryAt).toBeGreaterThan(overview.otherBranches[0]?.lastEntryAt as number);
    } finally {
      for (const writer of writers) writer.send("exit");
      await Promise.all(writers.map((writer) => writer.exited));
    }
  });
});
