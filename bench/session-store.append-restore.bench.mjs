// Append and restore throughput of @podkit/session-store on a 100,000-entry segment, each as a
// ratio to the floor measured in the same run:
//   append floor  = fs.appendFileSync(path, line) per entry, lines pre-serialized (the bare minimum
//                   a JSONL logger does; our side also validates, serializes and frames each entry
//                   with its sequence number and CRC-32, and awaits each append);
//   restore floor = readFileSync + split("\n") + JSON.parse per line (our side also checks UTF-8,
//                   verifies every line's CRC-32 and sequence number, validates every entry with
//                   zod and folds it with replay()).
// Also, against appendFileSync one per tick (setImmediate between appends, as a pod awaiting I/O):
//   append_per_tick      - default lock lease (10 ms linger): a burst of appends shares one lock;
//   append_lock_each     - lockLingerMs 0: the lock file is created and removed around every append,
//                          the cost when appends are further apart than the linger.
// Warm-up round, then ROUNDS measured rounds in alternating order; medians are reported.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsStore, restoreSession, SessionLog } from "../packages/session-store/dist/index.js";
import { makeEntries } from "./lib/turn-entries.mjs";

const ENTRIES = 100_000;
const PER_TICK_ENTRIES = 20_000;
const LOCK_EACH_ENTRIES = 5_000;
const ROUNDS = 5;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tick = () => new Promise((resolve) => setImmediate(resolve));
const head = { systemPrompt: "You are a careful reviewer.", config: { max_tokens: 8192 }, history: [] };

const dir = mkdtempSync(join(tmpdir(), "podkit-bench-session-store-"));
let counter = 0;
const fresh = () => join(dir, `run-${counter++}`);
const clean = () => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
};

async function appendOurs(entries) {
  const store = new FsStore({ root: fresh() });
  const log = await SessionLog.create(store, head);
  const t0 = performance.now();
  for (const entry of entries) await log.append(entry);
  const ms = performance.now() - t0;
  await store.close();
  return { ms, store, log };
}

function appendFloor(lines) {
  const path = `${fresh()}.jsonl`;
  const t0 = performance.now();
  for (const line of lines) appendFileSync(path, line);
  return { ms: performance.now() - t0, path };
}

async function appendOursPerTick(entries, lockLingerMs) {
  const store = new FsStore({ root: fresh(), lockLingerMs });
  const log = await SessionLog.create(store, head);
  await tick();
  const t0 = performance.now();
  for (const entry of entries) {
    await log.append(entry);
    await tick();
  }
  const ms = performance.now() - t0;
  await store.close();
  return ms;
}

async function appendFloorPerTick(lines) {
  const path = `${fresh()}.jsonl`;
  const t0 = performance.now();
  for (const line of lines) {
    appendFileSync(path, line);
    await tick();
  }
  return performance.now() - t0;
}

async function restoreOurs(store, sessionId) {
  const t0 = performance.now();
  const state = await restoreSession(store, sessionId);
  const ms = performance.now() - t0;
  if (state.entryCount !== ENTRIES + 1) throw new Error(`restored ${state.entryCount} entries`);
  return ms;
}

function restoreFloor(path) {
  const t0 = performance.now();
  const lines = readFileSync(path, "utf8").split("\n");
  const parsed = [];
  for (let i = 0; i < lines.length - 1; i++) parsed.push(JSON.parse(lines[i]));
  const ms = performance.now() - t0;
  if (parsed.length !== ENTRIES) throw new Error(`floor parsed ${parsed.length}`);
  return ms;
}

const gc = globalThis.gc ?? (() => {});

try {
  const entries = makeEntries(ENTRIES);
  const lines = entries.map((entry) => `${JSON.stringify(entry)}\n`);
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
  console.log(
    `# ${ENTRIES} entries, ${(bytes / 1e6).toFixed(1)} MB per segment; ${ROUNDS} rounds after a warm-up`,
  );

  const append = { ours: [], floor: [] };
  const restore = { ours: [], floor: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const warm = round === 0;
    const order = round % 2 === 0 ? ["ours", "floor"] : ["floor", "ours"];
    let ours;
    let floor;
    for (const side of order) {
      gc();
      if (side === "ours") ours = await appendOurs(entries);
      else floor = appendFloor(lines);
    }
    for (const side of order) {
      gc();
      const ms =
        side === "ours" ? await restoreOurs(ours.store, ours.log.sessionId) : restoreFloor(floor.path);
      if (!warm) restore[side].push(ms);
    }
    if (!warm) {
      append.ours.push(ours.ms);
      append.floor.push(floor.ms);
    }
    clean();
  }

  const tickEntries = entries.slice(0, PER_TICK_ENTRIES);
  const tickLines = lines.slice(0, PER_TICK_ENTRIES);
  const perTick = { ours: [], floor: [] };
  const lockEach = { ours: [], floor: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const ours = await appendOursPerTick(tickEntries, 10);
    const floor = await appendFloorPerTick(tickLines);
    const oursEach = await appendOursPerTick(tickEntries.slice(0, LOCK_EACH_ENTRIES), 0);
    const floorEach = await appendFloorPerTick(tickLines.slice(0, LOCK_EACH_ENTRIES));
    if (round > 0) {
      perTick.ours.push(ours);
      perTick.floor.push(floor);
      lockEach.ours.push(oursEach);
      lockEach.floor.push(floorEach);
    }
    clean();
  }

  const perSecond = (n, ms) => Math.round((n / ms) * 1000);
  const a = { ours: median(append.ours), floor: median(append.floor) };
  const r = { ours: median(restore.ours), floor: median(restore.floor) };
  const t = { ours: median(perTick.ours), floor: median(perTick.floor) };
  const e = { ours: median(lockEach.ours), floor: median(lockEach.floor) };
  console.log(`BENCH session-store.append.ratio ${(a.ours / a.floor).toFixed(2)} x`);
  console.log(`BENCH session-store.restore.ratio ${(r.ours / r.floor).toFixed(2)} x`);
  console.log(`BENCH session-store.append.entries_per_s ${perSecond(ENTRIES, a.ours)} entries/s`);
  console.log(`BENCH session-store.append.floor_entries_per_s ${perSecond(ENTRIES, a.floor)} entries/s`);
  console.log(`BENCH session-store.restore.entries_per_s ${perSecond(ENTRIES, r.ours)} entries/s`);
  console.log(`BENCH session-store.restore.floor_entries_per_s ${perSecond(ENTRIES, r.floor)} entries/s`);
  console.log(`BENCH session-store.append_per_tick.ratio ${(t.ours / t.floor).toFixed(2)} x`);
  console.log(
    `BENCH session-store.append_per_tick.entries_per_s ${perSecond(PER_TICK_ENTRIES, t.ours)} entries/s`,
  );
  console.log(
    `BENCH session-store.append_per_tick.floor_entries_per_s ${perSecond(PER_TICK_ENTRIES, t.floor)} entries/s`,
  );
  console.log(`BENCH session-store.append_lock_each.ratio ${(e.ours / e.floor).toFixed(2)} x`);
  console.log(
    `BENCH session-store.append_lock_each.entries_per_s ${perSecond(LOCK_EACH_ENTRIES, e.ours)} entries/s`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
