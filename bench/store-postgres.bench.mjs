// @podkit/store-postgres against the same driver (pg) doing plain SQL on the same rows, same run,
// same server (medians of per-round ratios, with their spread):
//   append.ratio    `await log.append(entry)` one entry after another (validate, serialize, one
//                   conditional statement) vs one plain INSERT per pre-serialized row into a table
//                   of the same shape (primary key (segment_id, seq), text body); the two sides
//                   alternate in slices of 32 within each round (short slices: a shift of the
//                   machine's load lands on both sides alike), both on one shared connection (one
//                   server process answers both sides); 11 rounds of its own, the other figures 5;
//   append_burst.ratio the same entries fired 16 at a time without awaiting each (group commit)
//                   vs the same floor;
//   restore.ratio   restoreSession as a pod opens the store (llm-worker's item and request-config
//                   schemas; head rule: list + describe segments; read, validate, replay) vs
//                   SELECT body ... ORDER BY seq + JSON.parse per row, in ABBA order;
//   appends_per_s_8_sessions - 8 sessions appending at once through one store (pool of 10);
//   max_loop_gap_ms - the longest event-loop stall of a writer whose append drifts on a
//                   100,000-entry session and forks (a ~20 MB segment_start), and of restoring
//                   that fork (see bench/session-store.loop-gap.bench.mjs); max_loop_busy_ms the
//                   most CPU the process used within one such stall (on a loaded machine a
//                   stall's wall time includes waiting for a core).
// Uses PODKIT_TEST_DATABASE_URL when set, else starts a throwaway cluster (scripts/pg-cluster.mjs).
// Without PostgreSQL it says so and exits 0, so `pnpm bench` still runs and passes the other benches.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { ItemSchema, RequestConfigSchema } from "../packages/llm-worker/dist/index.js";
import { restoreSession, SessionLog } from "../packages/session-store/dist/index.js";
import { PostgresStore } from "../packages/store-postgres/dist/index.js";
import { startCluster } from "../scripts/pg-cluster.mjs";
import { makeEntries } from "./lib/turn-entries.mjs";
import { printRatio, printValue, withLoopGap } from "./session-store.lib.mjs";

// The same driver the store uses, resolved from the store's package.
const pg = createRequire(new URL("../packages/store-postgres/package.json", import.meta.url))("pg");

const APPENDS = 3_000;
const SLICE = 32;
const BURST = 16;
const RESTORE_ENTRIES = 20_000;
const GAP_ENTRIES = 100_000;
const SESSIONS = 8;
const APPENDS_PER_SESSION = 500;
const ROUNDS = 5;
const APPEND_ROUNDS = 11;

const head = { systemPrompt: "You are a careful reviewer.", config: { max_tokens: 8192 }, history: [] };
const strict = { itemSchema: ItemSchema, configSchema: RequestConfigSchema };

let cluster;
let url = process.env.PODKIT_TEST_DATABASE_URL;
if (!url) {
  try {
    cluster = await startCluster();
    url = cluster.url;
  } catch (error) {
    console.log(`# store-postgres bench not run: ${error.message}`);
    process.exit(0);
  }
}

const schema = `bench_${randomBytes(4).toString("hex")}`;
const store = new PostgresStore({ url, schema, maxConnections: 10 });
const strictStore = new PostgresStore({ url, schema, maxConnections: 10, ...strict });
const plain = new pg.Pool({ connectionString: url, max: 10 });
// The sequential append's two sides share one connection, so one server process answers both. With
// a pool each, each side had its own server process, and on a two-core machine where the scheduler
// kept each one (on the client's core or the other) moved that side's cost per statement by up to
// 2× from run to run: the plain INSERT took 94–181 µs between runs, one round's ratio spread
// 0.54–2.69 and the median moved 1.11–2.03. On one connection rounds spread 1.07–1.30.
const single = new pg.Pool({ connectionString: url, max: 1 });
const singleStore = new PostgresStore({ pool: single, schema });
try {
  await store.listSessions(); // migrates
  await plain.query(
    `CREATE TABLE "${schema}".plain_entries (segment_id text NOT NULL, seq integer NOT NULL, body text NOT NULL,
     PRIMARY KEY (segment_id, seq))`,
  );

  const appendEntries = makeEntries(APPENDS);
  const appendBodies = appendEntries.map((entry) => JSON.stringify(entry));
  const restoreEntries = makeEntries(RESTORE_ENTRIES);
  const insertPlain = `INSERT INTO "${schema}".plain_entries (segment_id, seq, body) VALUES ($1, $2, $3)`;

  /** One round of appends: our log and the plain table, alternating slice by slice. */
  async function appendRound(round, burst) {
    const sides = burst ? { store, plain } : { store: singleStore, plain: single };
    const log = await SessionLog.create(sides.store, head);
    const segment = randomBytes(8).toString("hex");
    let ours = 0;
    let floor = 0;
    for (let at = 0, slice = 0; at < APPENDS; at += SLICE, slice++) {
      const end = Math.min(at + SLICE, APPENDS);
      const runOurs = async () => {
        const t0 = performance.now();
        if (burst) {
          for (let from = at; from < end; from += BURST) {
            const pending = [];
            for (let i = from; i < Math.min(from + BURST, end); i++)
              pending.push(log.append(appendEntries[i]));
            await Promise.all(pending);
          }
        } else {
          for (let i = at; i < end; i++) await log.append(appendEntries[i]);
        }
        ours += performance.now() - t0;
      };
      const runPlain = async () => {
        const t0 = performance.now();
        for (let i = at; i < end; i++) await sides.plain.query(insertPlain, [segment, i, appendBodies[i]]);
        floor += performance.now() - t0;
      };
      if ((slice + round) % 2 === 0) {
        await runOurs();
        await runPlain();
      } else {
        await runPlain();
        await runOurs();
      }
    }
    return { ours, floor };
  }

  // The restore subjects: the same entries in a session and in the plain table.
  const restoreLog = await SessionLog.create(store, head);
  for (let at = 0; at < restoreEntries.length; at += 1000)
    await restoreLog.appendMany(restoreEntries.slice(at, at + 1000));
  const plainSegment = randomBytes(8).toString("hex");
  for (let at = 0; at < restoreEntries.length; at += 1000) {
    const bodies = restoreEntries.slice(at, at + 1000).map((entry) => JSON.stringify(entry));
    await plain.query(
      `INSERT INTO "${schema}".plain_entries (segment_id, seq, body)
       SELECT $1, ($2::integer + ord - 1)::integer, body FROM unnest($3::text[]) WITH ORDINALITY AS t(body, ord)`,
      [plainSegment, at, bodies],
    );
  }
  async function restoreOurs() {
    const t0 = performance.now();
    const state = await restoreSession(strictStore, restoreLog.sessionId);
    const ms = performance.now() - t0;
    if (state.entryCount !== RESTORE_ENTRIES + 1) throw new Error(`restored ${state.entryCount} entries`);
    return ms;
  }
  async function restorePlain() {
    const t0 = performance.now();
    const result = await plain.query(
      `SELECT body FROM "${schema}".plain_entries WHERE segment_id = $1 ORDER BY seq`,
      [plainSegment],
    );
    const entries = result.rows.map((row) => JSON.parse(row.body));
    const ms = performance.now() - t0;
    if (entries.length !== RESTORE_ENTRIES) throw new Error(`selected ${entries.length} rows`);
    return ms;
  }

  async function concurrent() {
    const logs = await Promise.all(Array.from({ length: SESSIONS }, () => SessionLog.create(store, head)));
    const entries = appendEntries.slice(0, APPENDS_PER_SESSION);
    const t0 = performance.now();
    await Promise.all(
      logs.map(async (log) => {
        for (const entry of entries) await log.append(entry);
      }),
    );
    return (SESSIONS * APPENDS_PER_SESSION) / ((performance.now() - t0) / 1000);
  }

  // A long session for the loop-gap figures: one drift fork and one restore of it per round.
  const gapEntries = makeEntries(GAP_ENTRIES);
  const gapLog = await SessionLog.create(store, head);
  for (let at = 0; at < gapEntries.length; at += 1000)
    await gapLog.appendMany(gapEntries.slice(at, at + 1000));
  async function loopGaps() {
    const a = await SessionLog.openSegment(strictStore, gapLog.ref);
    const b = await SessionLog.openSegment(strictStore, gapLog.ref);
    await a.append({ kind: "user_input", text: "A was here first" });
    const drift = await withLoopGap(() => b.append({ kind: "user_input", text: "B drifts" }));
    if (drift.result.driftFork === null) throw new Error("expected a drift fork");
    const forked = await withLoopGap(() => SessionLog.openSegment(strictStore, b.ref));
    // Put the head back where it was for the next round.
    await store.truncate(gapLog.ref, GAP_ENTRIES + 1);
    return {
      drift: drift.gapMs,
      forked: forked.gapMs,
      busy: Math.max(drift.busyMs, forked.busyMs),
    };
  }

  // Warm-up, then measured rounds.
  await appendRound(0, false);
  await restoreOurs();
  await restorePlain();
  await loopGaps();
  const results = {
    append: [],
    appendPlain: [],
    burst: [],
    burstPlain: [],
    restoreOurs: [],
    restorePlain: [],
  };
  Object.assign(results, { concurrent: [], gap: [], driftGap: [], forkedGap: [], busy: [] });
  // The sequential append on its own, in more rounds than the rest.
  for (let round = 0; round < APPEND_ROUNDS; round++) {
    const plainRound = await appendRound(round, false);
    results.append.push(plainRound.ours);
    results.appendPlain.push(plainRound.floor);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const burstRound = await appendRound(round, true);
    results.burst.push(burstRound.ours);
    results.burstPlain.push(burstRound.floor);
    const order = round % 2 === 0 ? [restoreOurs, restorePlain] : [restorePlain, restoreOurs];
    let ours = 0;
    let floor = 0;
    for (const run of [...order, ...[...order].reverse()]) {
      const ms = await run();
      if (run === restoreOurs) ours += ms;
      else floor += ms;
    }
    results.restoreOurs.push(ours);
    results.restorePlain.push(floor);
    results.concurrent.push(await concurrent());
    const gaps = await loopGaps();
    results.driftGap.push(gaps.drift);
    results.forkedGap.push(gaps.forked);
    results.gap.push(Math.max(gaps.drift, gaps.forked));
    results.busy.push(gaps.busy);
  }
  const mid = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `# ${APPENDS} appends (${APPEND_ROUNDS} rounds), restore of ${RESTORE_ENTRIES} entries, ${ROUNDS} rounds after a warm-up`,
  );
  printRatio("store-postgres.append.ratio", results.append, results.appendPlain);
  printRatio("store-postgres.append_burst.ratio", results.burst, results.burstPlain);
  console.log(`BENCH store-postgres.append_us ${((mid(results.append) * 1000) / APPENDS).toFixed(1)} us`);
  console.log(
    `BENCH store-postgres.append.plain_us ${((mid(results.appendPlain) * 1000) / APPENDS).toFixed(1)} us`,
  );
  printRatio("store-postgres.restore.ratio", results.restoreOurs, results.restorePlain);
  console.log(`BENCH store-postgres.restore_ms ${(mid(results.restoreOurs) / 2).toFixed(1)} ms`);
  console.log(`BENCH store-postgres.restore.plain_ms ${(mid(results.restorePlain) / 2).toFixed(1)} ms`);
  printValue("store-postgres.appends_per_s_8_sessions", results.concurrent, "appends/s", 0);
  printValue("store-postgres.max_loop_gap_ms", results.gap, "ms");
  printValue("store-postgres.max_loop_busy_ms", results.busy, "ms");
  printValue("store-postgres.drift_fork.max_loop_gap_ms", results.driftGap, "ms");
  printValue("store-postgres.restore_forked.max_loop_gap_ms", results.forkedGap, "ms");
} finally {
  await plain.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await plain.end();
  await store.close();
  await strictStore.close();
  await singleStore.close();
  await single.end();
  cluster?.stop();
}
