// @podkit/store-postgres against the same driver (pg) doing plain SQL on the same rows, same run,
// same server:
//   append.ratio  - SessionLog.append per entry (validate, serialize, one conditional
//                   UPDATE+INSERT statement) vs one plain INSERT per pre-serialized row into a
//                   table of the same shape (primary key (segment_id, seq), text body);
//   restore.ratio - restoreSession (head rule: list + describe segments; read, validate every
//                   entry with zod, replay) vs SELECT body ... ORDER BY seq + JSON.parse per row;
//   appends_per_s_8_sessions - 8 sessions appending at once through one store (pool of 10).
// Uses PODKIT_TEST_DATABASE_URL when set, else starts a throwaway cluster (scripts/pg-cluster.mjs).
// Without PostgreSQL it says so and exits 0, so `pnpm bench` still runs and passes the other benches.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { restoreSession, SessionLog } from "../packages/session-store/dist/index.js";
import { PostgresStore } from "../packages/store-postgres/dist/index.js";
import { startCluster } from "../scripts/pg-cluster.mjs";
import { makeEntries } from "./lib/turn-entries.mjs";

// The same driver the store uses, resolved from the store's package.
const pg = createRequire(new URL("../packages/store-postgres/package.json", import.meta.url))("pg");

const APPENDS = 3_000;
const RESTORE_ENTRIES = 20_000;
const SESSIONS = 8;
const APPENDS_PER_SESSION = 500;
const ROUNDS = 5;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const head = { systemPrompt: "You are a careful reviewer.", config: { max_tokens: 8192 }, history: [] };

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
const plain = new pg.Pool({ connectionString: url, max: 10 });
try {
  await store.listSessions(); // migrates
  await plain.query(
    `CREATE TABLE "${schema}".plain_entries (segment_id text NOT NULL, seq integer NOT NULL, body text NOT NULL,
     PRIMARY KEY (segment_id, seq))`,
  );

  const appendEntries = makeEntries(APPENDS);
  const appendBodies = appendEntries.map((entry) => JSON.stringify(entry));
  const restoreEntries = makeEntries(RESTORE_ENTRIES);

  async function appendOurs() {
    const log = await SessionLog.create(store, head);
    const t0 = performance.now();
    for (const entry of appendEntries) await log.append(entry);
    return performance.now() - t0;
  }
  async function appendPlain() {
    const segment = randomBytes(8).toString("hex");
    const t0 = performance.now();
    for (const [seq, body] of appendBodies.entries()) {
      await plain.query(`INSERT INTO "${schema}".plain_entries (segment_id, seq, body) VALUES ($1, $2, $3)`, [
        segment,
        seq,
        body,
      ]);
    }
    return performance.now() - t0;
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
    const state = await restoreSession(store, restoreLog.sessionId);
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

  // Warm-up, then alternating measured rounds.
  await appendOurs();
  await appendPlain();
  await restoreOurs();
  await restorePlain();
  const results = { appendOurs: [], appendPlain: [], restoreOurs: [], restorePlain: [], concurrent: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const flip = round % 2 === 1;
    for (const [name, run] of flip
      ? [
          ["appendPlain", appendPlain],
          ["appendOurs", appendOurs],
        ]
      : [
          ["appendOurs", appendOurs],
          ["appendPlain", appendPlain],
        ]) {
      results[name].push(await run());
    }
    for (const [name, run] of flip
      ? [
          ["restorePlain", restorePlain],
          ["restoreOurs", restoreOurs],
        ]
      : [
          ["restoreOurs", restoreOurs],
          ["restorePlain", restorePlain],
        ]) {
      results[name].push(await run());
    }
    results.concurrent.push(await concurrent());
  }
  const m = Object.fromEntries(Object.entries(results).map(([name, xs]) => [name, median(xs)]));
  console.log(`# ${APPENDS} appends, restore of ${RESTORE_ENTRIES} entries, medians of ${ROUNDS} rounds`);
  console.log(`BENCH store-postgres.append.ratio ${(m.appendOurs / m.appendPlain).toFixed(2)} x`);
  console.log(`BENCH store-postgres.append_us ${((m.appendOurs * 1000) / APPENDS).toFixed(1)} us`);
  console.log(`BENCH store-postgres.append.plain_us ${((m.appendPlain * 1000) / APPENDS).toFixed(1)} us`);
  console.log(`BENCH store-postgres.restore.ratio ${(m.restoreOurs / m.restorePlain).toFixed(2)} x`);
  console.log(`BENCH store-postgres.restore_ms ${m.restoreOurs.toFixed(1)} ms`);
  console.log(`BENCH store-postgres.restore.plain_ms ${m.restorePlain.toFixed(1)} ms`);
  console.log(`BENCH store-postgres.appends_per_s_8_sessions ${Math.round(m.concurrent)} appends/s`);
} finally {
  await plain.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await plain.end();
  await store.close();
  cluster?.stop();
}
