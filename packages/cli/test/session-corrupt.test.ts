import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type Entry, FsStore, sessionsRoot } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
// The corruptions are the ones the pod's store tests fuzz with (shared, not copied).
import {
  type Corruption,
  type RawEntry,
  sampleCorruptions,
  wellFormedLog,
} from "../../pod/test/corrupt-log-cases.js";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// A session log that is valid JSON but says something the worker cannot take — a hand-edited item,
// a config value of the wrong type, an item type nobody knows — through the real `podkit` binary:
// every command names the file and line (exit 1, never the internal-error exit 70), and the
// `session fork --at-turn` the hint names recovers the turns before the damage.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** Index of the first entry after turn 1 of the well-formed log: damage there leaves turn 1 intact. */
const AFTER_FIRST_TURN = wellFormedLog("s", "g").findIndex((entry) => entry.kind === "config_changed");

/** One corruption of each kind, drawn from the fuzzer with a fixed seed. */
function oneOfEachKind(): { log: RawEntry[]; corruption: Corruption }[] {
  const drawn = sampleCorruptions(wellFormedLog("s", "g"), { from: AFTER_FIRST_TURN, count: 60, seed: 2224 });
  const picked = new Map<string, (typeof drawn)[number]>();
  for (const sample of drawn)
    if (!picked.has(sample.corruption.category)) picked.set(sample.corruption.category, sample);
  return [...picked.values()];
}

describe("a corrupt session log through the podkit binary", () => {
  const cases = oneOfEachKind();

  it("draws a case of every kind of corruption", () => {
    expect(cases.map((sample) => sample.corruption.category).sort()).toEqual([
      "config type",
      "item shape",
      "item type",
    ]);
  });

  for (const [n, { log, corruption }] of cases.entries()) {
    it(`${corruption.category} (${corruption.change}): named by file and line, and the hinted fork recovers`, async () => {
      const { root, workspace, home } = await doubleWorkspace("http://127.0.0.1:9");
      roots.push(root);
      const env = { HOME: home, ANTHROPIC_API_KEY: "test-key" };
      const podkit = (...args: string[]) => runBin(args, { cwd: workspace, env });
      // Written by something other than a pod: a store with only its minimal schemas frames it.
      const sessionId = `01990000-0000-7000-8000-00000000000${n}`;
      const segmentId = `01990000-0000-7000-8000-0000000000a${n}`;
      Object.assign(log[0] as RawEntry, { session_id: sessionId, segment_id: segmentId });
      const lax = new FsStore({ root: sessionsRoot(workspace) });
      await lax.createSegment({ sessionId, segmentId }, log as unknown as Entry[]);
      await lax.close();
      const file = join(sessionsRoot(workspace), sessionId, `${segmentId}.jsonl`);

      let hintedTurn: string | undefined;
      for (const args of [
        ["session", "show", sessionId],
        ["resume", sessionId, "go on"],
      ]) {
        const result = await podkit(...args);
        expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(1);
        const [error, hint] = result.stderr.trimEnd().split("\n");
        expect(error).toContain(
          `session ${sessionId} has a corrupt log line: ${file}:${corruption.index + 1}: `,
        );
        expect(error).not.toMatch(/internal error/);
        hintedTurn = /podkit session fork \S+ --at-turn (\d+)/.exec(hint ?? "")?.[1];
        expect(hintedTurn, hint).toBeDefined();
      }
      const listed = await podkit("session", "list", "--json");
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ sessionId })]);

      const fork = await podkit("session", "fork", sessionId, "--at-turn", hintedTurn as string, "--json");
      expect(fork.code, fork.stderr).toBe(0);
      const forked = JSON.parse(fork.stdout) as { sessionId: string; atTurn: number };
      expect(forked.atTurn).toBe(Number(hintedTurn));
      expect(forked.atTurn).toBeGreaterThanOrEqual(1);
      const shown = await podkit("session", "show", forked.sessionId);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(`forked from ${segmentId} at turn ${forked.atTurn}`);
      expect(shown.stdout).toContain('"question 1"');
    });
  }
});
