import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describeSession, restoreSession } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { recoverRewind, rewindSession } from "../src/rewind/rewind-session.js";
import {
  FIVE_TURNS,
  INITIAL_FILES,
  leftovers,
  type RewindWorld,
  recordSession,
  STORE_KINDS,
  snapshot,
  useRewindWorlds,
} from "./rewind-harness.js";

// Issue 42: a SIGKILL at any point of a rewind, then a rerun, leaves the workspace fully at turn N
// or unchanged — never mixed. A real child process (it imports the built dist: build first) runs
// the rewind and is killed at each of its steps in turn, or after a random delay; then the
// interrupted rewind is recovered here, checked, and the rewind run again to its end.

const CHILD = fileURLToPath(new URL("./crash/rewind-child.mjs", import.meta.url));
const world = useRewindWorlds();
const TO_TURN = 2;

interface ChildRun {
  killed: boolean;
  stdout: string;
  stderr: string;
  /** Milliseconds from START to the end. */
  ms: number;
}

/** Runs the rewind in a child: it kills itself at step `killAt`, or the parent kills it `delayMs` after START. */
function runChild(w: RewindWorld, sessionId: string, killAt: number, delayMs?: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const args = [CHILD, ...w.storeArgs, w.workspace, sessionId, String(TO_TURN), String(killAt)];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let started = 0;
    const bound = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (started === 0 && stdout.includes("START")) {
        started = performance.now();
        if (delayMs !== undefined) setTimeout(() => child.kill("SIGKILL"), delayMs);
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(bound);
      if (signal !== "SIGKILL" && code !== 0)
        reject(new Error(`child failed (${code}): ${stdout}\n${stderr}`));
      else resolve({ killed: signal === "SIGKILL", stdout, stderr, ms: performance.now() - started });
    });
  });
}

describe.each(STORE_KINDS)("a rewind SIGKILLed at random points, on the %s store", (kind) => {
  it("then recovered and rerun: the workspace is fully at turn N or unchanged, never mixed, and ends at turn N", async () => {
    const base = await world(kind);
    const fresh = async (label: string) => {
      const w: RewindWorld = { ...base, workspace: await base.tempDir(label) };
      const { log, states } = await recordSession(w, FIVE_TURNS, INITIAL_FILES);
      return { w, sessionId: log.sessionId, headSegmentId: log.segmentId, states };
    };

    // A whole run first: how many steps a rewind reports and how long it takes.
    const calibration = await fresh("calibrate");
    const whole = await runChild(calibration.w, calibration.sessionId, -1);
    const steps = Number(/DONE (\d+)/.exec(whole.stdout)?.[1]);
    expect(steps).toBeGreaterThan(10); // journaled, staged ×5, claimed, applied ×8, forked, done
    expect(await snapshot(calibration.w.workspace)).toEqual(calibration.states.get(TO_TURN));

    const seen = { finished: 0, undone: 0, mixedBeforeRecovery: 0, untouched: 0, completed: 0 };
    const runs = 20;
    for (let i = 0; i < runs; i++) {
      const { w, sessionId, headSegmentId, states } = await fresh(`run${i}`);
      const rewound = states.get(TO_TURN);
      const unchanged = states.get(5);
      // Even runs stop at each step in turn; odd runs after a random delay within a whole rewind's time.
      const run =
        i % 2 === 0
          ? await runChild(w, sessionId, (i / 2) % steps)
          : await runChild(w, sessionId, -1, Math.random() * whole.ms);
      const killedAt = /KILLED AT (.*)/.exec(run.stdout)?.[1] ?? (run.killed ? "a random point" : "never");

      const before = await snapshot(w.workspace);
      if (!isEqual(before, rewound) && !isEqual(before, unchanged)) seen.mixedBeforeRecovery += 1;

      const recovery = await recoverRewind({ store: w.store, sessionId, workspace: w.workspace });
      const files = await snapshot(w.workspace);
      const overview = await describeSession(w.store, sessionId);
      const turn = (await restoreSession(w.store, sessionId)).turn;
      const label = `run ${i}, killed at ${killedAt}, recovery ${recovery?.outcome}`;
      expect(await leftovers(w.workspace), label).toEqual([]);
      if (isEqual(files, rewound)) {
        expect(turn, label).toBe(TO_TURN);
        expect(overview.head.forkedFrom, label).toEqual({ segmentId: headSegmentId, atTurn: TO_TURN });
        if (recovery?.outcome === "finished") seen.finished += 1;
        else seen.completed += 1;
      } else {
        expect(files, label).toEqual(unchanged);
        expect(recovery?.outcome, label).not.toBe("finished");
        expect(turn, label).toBe(5);
        expect(overview.head.segmentId, label).toBe(headSegmentId);
        if (recovery?.outcome === "undone") seen.undone += 1;
        else seen.untouched += 1;
      }

      // The rerun ends at turn N, with exactly one new segment however often it was tried.
      await rewindSession({ store: w.store, sessionId, toTurn: TO_TURN, workspace: w.workspace });
      expect(await snapshot(w.workspace), label).toEqual(rewound);
      expect((await restoreSession(w.store, sessionId)).turn, label).toBe(TO_TURN);
      expect((await w.store.listSegments(sessionId)).length, label).toBe(2);
    }
    // Both ways out were taken, and the kills did land mid-way (the positive control: without the
    // journal those workspaces would have stayed half-restored).
    expect(seen.finished, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.undone, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.mixedBeforeRecovery, JSON.stringify(seen)).toBeGreaterThan(0);
  }, 300_000);
});

function isEqual(a: Map<string, string>, b: Map<string, string> | undefined): boolean {
  if (b === undefined || a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}
