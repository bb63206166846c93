// Append and restore throughput of @podkit/session-store on a 100,000-entry segment, each as a
// ratio to the floor measured in the same round (medians of per-round ratios, with their spread):
//   append.ratio         `await log.append(entry)` one entry after another (validation,
//                        serialization, v2 frame and CRC-32, lock lease, probe, write) vs
//                        fs.appendFileSync(path, line) per entry of pre-serialized lines (the bare
//                        minimum a JSONL logger does);
//   append.cpu_ratio     append.ratio in CPU time (user + system of this process) instead of wall
//                        time: on a machine shared with other jobs, wall time also counts the
//                        time either side waited for a core, which CPU time leaves out;
//   append_burst.ratio   the same entries fired 16 at a time without awaiting each (a pod recording
//                        a step), so the log's group commit can share writes, vs the same floor;
//   restore.ratio        restoreSession as a pod opens the store (llm-worker's item and request-config
//                        schemas: UTF-8 check, CRC-32 and sequence number, validation, replay) vs
//                        readFileSync + split("\n") + JSON.parse per line;
//   restore_minimal.ratio the same with the store's minimal item schema ({type: string, …}).
//   append_syscalls.ratio what the append's two system calls alone cost, on ready framed bytes:
//                        a 1-byte read past the end (the check for a stray writer) and one
//                        positional write per entry on a held descriptor, vs the same floor — the
//                        part of append.ratio no JavaScript can remove while every append checks.
//   append_fs_promises.ratio an awaited `fs.promises` positional write of each ready line on an
//                        open FileHandle vs the same floor: what one asynchronous write per entry
//                        costs (a thread-pool round trip each), why the store's append writes with
//                        one small synchronous call instead.
// Also, against appendFileSync one per tick (setImmediate between appends, as a pod awaiting I/O):
//   append_per_tick      default lock lease (10 ms linger): a burst of appends shares one lock;
//   append_lock_each     lockLingerMs 0: the lock file is created and removed around every append,
//                        the cost when appends are further apart than the linger.
// Warm-up round, then 7 measured rounds. Within a round the two
// sides of an append figure alternate slice by slice (5,000 entries each, who goes first
// alternating too) and restores run in ABBA order, so a load change on this shared machine hits
// both sides alike.
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ItemSchema, RequestConfigSchema } from "../packages/llm-worker/dist/index.js";
import { frameLine } from "../packages/session-store/dist/entry/line-frame.js";
import { FsStore, restoreSession, SessionLog } from "../packages/session-store/dist/index.js";
import { makeEntries } from "./lib/turn-entries.mjs";
import { printRatio } from "./session-store.lib.mjs";

const ENTRIES = 100_000;
const BURST = 16;
const PER_TICK_ENTRIES = 20_000;
const LOCK_EACH_ENTRIES = 5_000;
const SLICE = 5_000;
const ROUNDS = 7;

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** CPU time (user + system, ms) this process used since `since` (a `process.cpuUsage()`). */
const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const head = { systemPrompt: "You are a careful reviewer.", config: { max_tokens: 8192 }, history: [] };
const strict = { itemSchema: ItemSchema, configSchema: RequestConfigSchema };

const dir = mkdtempSync(join(tmpdir(), "podkit-bench-session-store-"));
let counter = 0;
const fresh = () => join(dir, `run-${counter++}`);
const clean = () => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
};

/**
 * A log and a floor file written slice by slice, the sides alternating within the round; with
 * `framed` (ready v2 lines as bytes), a third file gets the bare probe + write of each line.
 */
async function appendRound(entries, lines, round, burst, framed) {
  const root = fresh();
  const store = new FsStore({ root });
  const log = await SessionLog.create(store, head);
  const path = `${fresh()}.jsonl`;
  const bare = framed === undefined ? undefined : openSync(`${fresh()}.jsonl`, "w+");
  const handle = framed === undefined ? undefined : await open(`${fresh()}.jsonl`, "w+");
  let handleEnd = 0;
  let promises = 0;
  const probe = Buffer.alloc(1);
  let bareEnd = 0;
  let ours = 0;
  let floor = 0;
  let oursCpu = 0;
  let floorCpu = 0;
  let syscalls = 0;
  for (let at = 0, slice = 0; at < entries.length; at += SLICE, slice++) {
    const end = Math.min(at + SLICE, entries.length);
    const runOurs = async () => {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      if (burst) {
        for (let from = at; from < end; from += BURST) {
          const pending = [];
          for (let i = from; i < Math.min(from + BURST, end); i++) pending.push(log.append(entries[i]));
          await Promise.all(pending);
        }
      } else {
        for (let i = at; i < end; i++) await log.append(entries[i]);
      }
      ours += performance.now() - t0;
      oursCpu += cpuMs(cpu0);
    };
    const runFloor = () => {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = at; i < end; i++) appendFileSync(path, lines[i]);
      floor += performance.now() - t0;
      floorCpu += cpuMs(cpu0);
    };
    const runSyscalls = () => {
      if (bare === undefined) return;
      const t0 = performance.now();
      for (let i = at; i < end; i++) {
        if (readSync(bare, probe, 0, 1, bareEnd) !== 0) throw new Error("bare file grew");
        bareEnd += writeSync(bare, framed[i], 0, framed[i].length, bareEnd);
      }
      syscalls += performance.now() - t0;
    };
    const runPromises = async () => {
      if (handle === undefined) return;
      const t0 = performance.now();
      for (let i = at; i < end; i++) {
        handleEnd += (await handle.write(framed[i], 0, framed[i].length, handleEnd)).bytesWritten;
      }
      promises += performance.now() - t0;
    };
    if ((slice + round) % 2 === 0) {
      await runOurs();
      runFloor();
      runSyscalls();
      await runPromises();
    } else {
      await runPromises();
      runSyscalls();
      runFloor();
      await runOurs();
    }
  }
  await store.close();
  if (bare !== undefined) closeSync(bare);
  await handle?.close();
  return { ours, floor, oursCpu, floorCpu, syscalls, promises, root, sessionId: log.sessionId, path };
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

async function restoreOurs(root, sessionId, options) {
  const store = new FsStore({ root, ...options });
  const t0 = performance.now();
  const state = await restoreSession(store, sessionId);
  const ms = performance.now() - t0;
  await store.close();
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
  // The lines the log writes: `kind` and `ts` first, then the frame.
  const stamped = (entry) => JSON.stringify({ kind: undefined, ts: Date.now(), ...entry });
  const framed = entries.map((entry, i) => Buffer.from(`${frameLine(stamped(entry), i + 1)}\n`));
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
  console.log(
    `# ${ENTRIES} entries, ${(bytes / 1e6).toFixed(1)} MB per segment; ${ROUNDS} rounds after a warm-up`,
  );

  const times = { append: [], appendFloor: [], syscalls: [], promises: [], burst: [], burstFloor: [] };
  Object.assign(times, { appendCpu: [], appendFloorCpu: [] });
  Object.assign(times, { restore: [], restoreMinimal: [], restoreFloor: [] });
  for (let round = 0; round <= ROUNDS; round++) {
    gc();
    const plain = await appendRound(entries, lines, round, false, framed);
    gc();
    const burst = await appendRound(entries, lines, round, true);
    // Restores in ABBA order (ours, floor, floor, ours; the next round the other way round).
    const restoreSides = [
      ["restore", () => restoreOurs(plain.root, plain.sessionId, strict)],
      ["restoreMinimal", () => restoreOurs(plain.root, plain.sessionId, {})],
      ["restoreFloor", async () => restoreFloor(plain.path)],
    ];
    const order = round % 2 === 0 ? restoreSides : [...restoreSides].reverse();
    const sums = { restore: 0, restoreMinimal: 0, restoreFloor: 0 };
    for (const [side, run] of [...order, ...[...order].reverse()]) {
      gc();
      sums[side] += await run();
    }
    if (round > 0) {
      times.append.push(plain.ours);
      times.appendFloor.push(plain.floor);
      times.appendCpu.push(plain.oursCpu);
      times.appendFloorCpu.push(plain.floorCpu);
      times.syscalls.push(plain.syscalls);
      times.promises.push(plain.promises);
      times.burst.push(burst.ours);
      times.burstFloor.push(burst.floor);
      for (const side of Object.keys(sums)) times[side].push(sums[side] / 2);
    }
    clean();
  }

  const tickEntries = entries.slice(0, PER_TICK_ENTRIES);
  const tickLines = lines.slice(0, PER_TICK_ENTRIES);
  const perTick = { ours: [], floor: [] };
  const lockEach = { ours: [], floor: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const flip = round % 2 === 1;
    const pair = async (oursRun, floorRun, into) => {
      const first = flip ? await floorRun() : await oursRun();
      const second = flip ? await oursRun() : await floorRun();
      if (round > 0) {
        into.ours.push(flip ? second : first);
        into.floor.push(flip ? first : second);
      }
    };
    await pair(
      () => appendOursPerTick(tickEntries, 10),
      () => appendFloorPerTick(tickLines),
      perTick,
    );
    await pair(
      () => appendOursPerTick(tickEntries.slice(0, LOCK_EACH_ENTRIES), 0),
      () => appendFloorPerTick(tickLines.slice(0, LOCK_EACH_ENTRIES)),
      lockEach,
    );
    clean();
  }

  const perSecond = (n, ms) => Math.round((n / ms) * 1000);
  const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  printRatio("session-store.append.ratio", times.append, times.appendFloor);
  printRatio("session-store.append.cpu_ratio", times.appendCpu, times.appendFloorCpu);
  printRatio("session-store.append_syscalls.ratio", times.syscalls, times.appendFloor);
  printRatio("session-store.append_fs_promises.ratio", times.promises, times.appendFloor);
  printRatio("session-store.append_burst.ratio", times.burst, times.burstFloor);
  printRatio("session-store.restore.ratio", times.restore, times.restoreFloor);
  printRatio("session-store.restore_minimal.ratio", times.restoreMinimal, times.restoreFloor);
  console.log(`BENCH session-store.append.entries_per_s ${perSecond(ENTRIES, mid(times.append))} entries/s`);
  console.log(
    `BENCH session-store.append.floor_entries_per_s ${perSecond(ENTRIES, mid(times.appendFloor))} entries/s`,
  );
  console.log(
    `BENCH session-store.restore.entries_per_s ${perSecond(ENTRIES, mid(times.restore))} entries/s`,
  );
  console.log(
    `BENCH session-store.restore.floor_entries_per_s ${perSecond(ENTRIES, mid(times.restoreFloor))} entries/s`,
  );
  printRatio("session-store.append_per_tick.ratio", perTick.ours, perTick.floor);
  printRatio("session-store.append_lock_each.ratio", lockEach.ours, lockEach.floor);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
