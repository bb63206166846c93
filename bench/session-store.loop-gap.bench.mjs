// Event-loop stalls of @podkit/session-store on a long session (a 100,000-entry head segment,
// 22 MB, whose history of ~55,000 items is ~20 MB), two writers on it in one process:
//   drift_fork.max_loop_gap_ms     writer B appends after writer A did: B's segment drifted, so B
//                                  forks, writing a segment_start that holds the whole history;
//   restore_forked.max_loop_gap_ms restoring that fork (one ~20 MB line);
//   restore.max_loop_gap_ms        restoring the head (100,000 ordinary lines);
//   max_loop_gap_ms                the worst of the three: what a streaming turn would stall.
// The gap is the longest time between two 1 ms timer ticks (and monitorEventLoopDelay's max);
// max_loop_busy_ms is the most CPU the process used within one gap (the part of a stall that is
// work, not waiting for a core on a loaded machine).
// Medians of 5 rounds with their spread; the wall time of each
// operation is printed too.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ItemSchema, RequestConfigSchema } from "../packages/llm-worker/dist/index.js";
import { FsStore, SessionLog } from "../packages/session-store/dist/index.js";
import { makeEntries } from "./lib/turn-entries.mjs";
import { printValue, withLoopGap } from "./session-store.lib.mjs";

const ENTRIES = 100_000;
const ROUNDS = 5;
const head = { systemPrompt: "You are a careful reviewer.", config: { max_tokens: 8192 }, history: [] };
const options = { itemSchema: ItemSchema, configSchema: RequestConfigSchema };

const dir = mkdtempSync(join(tmpdir(), "podkit-bench-loop-gap-"));
const entries = makeEntries(ENTRIES);
const figures = {
  drift: [],
  restoreForked: [],
  restore: [],
  worst: [],
  busy: [],
  driftMs: [],
  restoreForkedMs: [],
  restoreMs: [],
};
const gc = globalThis.gc ?? (() => {});

try {
  for (let round = 0; round <= ROUNDS; round++) {
    const root = join(dir, `round-${round}`);
    const setup = new FsStore({ root, ...options });
    const log = await SessionLog.create(setup, head);
    for (let at = 0; at < entries.length; at += 1000) await log.appendMany(entries.slice(at, at + 1000));
    await setup.close();

    const storeA = new FsStore({ root, ...options });
    const storeB = new FsStore({ root, ...options });
    gc();
    const restored = await withLoopGap(() => SessionLog.open(storeA, log.sessionId));
    const a = restored.result;
    const b = await SessionLog.open(storeB, log.sessionId);
    await a.append({ kind: "user_input", text: "A was here first" });
    gc();
    const t0 = performance.now();
    const drift = await withLoopGap(() => b.append({ kind: "user_input", text: "B drifts" }));
    const driftMs = performance.now() - t0;
    if (drift.result.driftFork === null) throw new Error("expected a drift fork");
    await storeA.close();
    await storeB.close();

    const storeC = new FsStore({ root, ...options });
    gc();
    const t1 = performance.now();
    const forked = await withLoopGap(() => SessionLog.openSegment(storeC, b.ref));
    const restoreForkedMs = performance.now() - t1;
    if (forked.result.state.history.length !== b.state.history.length) throw new Error("fork restored short");
    await storeC.close();

    if (round > 0) {
      figures.drift.push(drift.gapMs);
      figures.restoreForked.push(forked.gapMs);
      figures.restore.push(restored.gapMs);
      figures.worst.push(Math.max(drift.gapMs, forked.gapMs, restored.gapMs));
      figures.busy.push(Math.max(drift.busyMs, forked.busyMs, restored.busyMs));
      figures.driftMs.push(driftMs);
      figures.restoreForkedMs.push(restoreForkedMs);
    }
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`# ${ENTRIES}-entry head, ${ROUNDS} rounds after a warm-up`);
  printValue("session-store.max_loop_gap_ms", figures.worst, "ms");
  printValue("session-store.max_loop_busy_ms", figures.busy, "ms");
  printValue("session-store.drift_fork.max_loop_gap_ms", figures.drift, "ms");
  printValue("session-store.restore_forked.max_loop_gap_ms", figures.restoreForked, "ms");
  printValue("session-store.restore.max_loop_gap_ms", figures.restore, "ms");
  printValue("session-store.drift_fork_ms", figures.driftMs, "ms");
  printValue("session-store.restore_forked_ms", figures.restoreForkedMs, "ms");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
