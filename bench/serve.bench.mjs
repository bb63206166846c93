// podkit serve: what HTTP costs a turn, and how fast the event stream reaches many clients.
//
// serve.overhead.ratio: the server process's CPU time for a scripted tool turn (text + a `lookup`
// call, then an answer) sent as `POST /sessions/:id/messages {"wait": true}`, against the same turn
// through `pod.run()` in-process on the same kind of store. The caller runs in a child process
// (bench/lib/http-turn-client.mjs), as the provider double does, so neither's CPU is counted: a
// service calling podkit runs its own process, usually on another machine, and what it spends on
// its HTTP client is its own (serve.overhead.client_cpu_ms reports it). The server's count runs
// from the moment it has handed the caller what to send (an IPC message; the send itself, which
// wakes the caller's process, is left out, as a server that is simply called never pays it) to the
// moment its response is handed to the OS (the `http.server.response.finish` diagnostics
// channel): the wake-up for the request, reading and parsing it, the run, the answer. CPU rather
// than wall time, as pod.overhead does: on a shared 2-core machine wall time mostly measures the
// neighbours.
// Each round runs a new session on each side and alternates them turn by turn (which side goes
// first alternates too), so both see the same moment of a busy machine; its ratio is the HTTP
// side's CPU over the in-process side's. Median of 15 rounds of 20 turns, with the spread of the
// rounds (one round's ratio moves ±0.15 with where V8's re-optimizations and GC land, and the
// median of 7 moved ±0.07 between runs). Aim ≤ 1.2.
//   serve.overhead.wall_ratio         the same in wall time (the caller's wait), for reference;
//   serve.overhead.with_client_ratio  server and caller CPU together over the in-process turn (the
//                                     caller on node:http with a keep-alive agent);
//   serve.overhead.fetch_ratio        the server's CPU when the caller uses the global `fetch`
//                                     (undici), a third session in the same rounds: the server's
//                                     cost should not depend on the client;
//   serve.overhead.client_cpu_ms      the caller's CPU per request, node:http and fetch.
//
// serve.sse.events_per_s: 100 clients stream one session while another writer appends 1,000
// entries to it (a second FsStore, so the server sees them through its watcher, as it would a
// `podkit run` in another process); events delivered per second, over all clients, from the first
// append to the last client holding the last entry. serve.sse.replay_events_per_s: the same 100
// clients replaying a 2,000-entry log from the start at once.

import { subscribe } from "node:diagnostics_channel";

import { rm } from "node:fs/promises";
import { request } from "node:http";
import { Pod } from "../packages/pod/dist/index.js";
import { startServer } from "../packages/serve/dist/index.js";
import { FsStore, SessionLog, sessionsRoot } from "../packages/session-store/dist/index.js";
import { startHttpTurnClient } from "./lib/http-turn-client.mjs";
import { toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const ROUNDS = 5;
const OVERHEAD_ROUNDS = 15;
const TURNS = 20;
const CLIENTS = 100;
const LIVE_ENTRIES = 1_000;
const REPLAY_ENTRIES = 2_000;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values, digits = 1) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

const podOptions = (baseUrl, store) => ({
  store,
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: () => {},
  toolPackages: [toolPackage],
});

/** Has the caller POST `body` (node:http, or `viaFetch` the global fetch); must be a finished turn. */
async function post(client, url, body, viaFetch = false) {
  const { status, json, clientCpu, sentCpu } = await client.post(url, body, viaFetch);
  if (status >= 300 || json.status !== "finished")
    throw new Error(`unexpected ${status} ${JSON.stringify(json)}`);
  return { json, clientCpu, sentCpu };
}

/** This process's CPU at the moment the server last handed a response to the OS. */
let responded;
subscribe("http.server.response.finish", () => {
  responded = process.cpuUsage();
});

/**
 * This process's CPU and wall time (ms) of `turn()` (a turn through the server: until its response
 * was handed to the OS), and the caller's CPU if it reports one.
 */
async function measured(turn) {
  responded = undefined;
  const before = process.cpuUsage();
  const start = performance.now();
  const answer = await turn();
  const wall = performance.now() - start;
  const cpu = answer?.sentCpu ?? before;
  const end = responded ?? process.cpuUsage();
  const counted = { user: end.user - cpu.user, system: end.system - cpu.system };
  return { cpu: (counted.user + counted.system) / 1000, wall, client: answer?.clientCpu ?? 0 };
}

/** A new session in-process; its first turn is not measured (the HTTP side's creates its session). */
async function inProcessSession(loaded, baseUrl, store) {
  const pod = await Pod.fromManifest(loaded, podOptions(baseUrl, store));
  await pod.run("Question 0?");
  return {
    turn: async (n) => {
      const result = await pod.run(`Question ${n}?`);
      if (result.status !== "finished") throw new Error(JSON.stringify(result));
    },
    close: () => pod.close(),
  };
}

/** A new session through the server. */
async function httpSession(client, server, viaFetch) {
  const { json } = await post(
    client,
    `${server.url}/sessions`,
    { message: "Question 0?", wait: true },
    viaFetch,
  );
  return {
    turn: (n) =>
      post(
        client,
        `${server.url}/sessions/${json.sessionId}/messages`,
        { message: `Question ${n}?`, wait: true },
        viaFetch,
      ),
    close: async () => {},
  };
}

const SIDES = ["local", "http", "fetch"];

/** One round: TURNS turns on each side, taking turns; per side, the mean CPU and wall ms of a turn. */
async function round(index, loaded, baseUrl, store, server, client) {
  const sides = {
    local: await inProcessSession(loaded, baseUrl, store),
    http: await httpSession(client, server, false),
    fetch: await httpSession(client, server, true),
  };
  const totals = Object.fromEntries(SIDES.map((side) => [side, { cpu: 0, wall: 0, client: 0 }]));
  globalThis.gc?.();
  for (let turn = 1; turn <= TURNS; turn++) {
    const first = (index + turn) % SIDES.length; // each side goes first as often as the others
    for (const side of [...SIDES.slice(first), ...SIDES.slice(0, first)]) {
      const { cpu, wall, client: clientCpu } = await measured(() => sides[side].turn(turn));
      totals[side].cpu += cpu / TURNS;
      totals[side].wall += wall / TURNS;
      totals[side].client += clientCpu / TURNS;
    }
  }
  await sides.local.close();
  return totals;
}

async function overhead() {
  const { child, baseUrl } = await startToolSessionDouble("anthropic");
  const client = await startHttpTurnClient();
  const { root, loaded } = await workspaceWithManifest("podkit-bench-serve-");
  const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
  const server = await startServer({
    store,
    port: 0,
    pods: {
      create: (s) => Pod.fromManifest(loaded, podOptions(baseUrl, s)),
      restore: (s, id) => Pod.restore(loaded, id, podOptions(baseUrl, s)),
    },
  });
  try {
    await round(1, loaded, baseUrl, store, server, client); // warm-up of both paths
    const rounds = [];
    for (let index = 0; index < OVERHEAD_ROUNDS; index++)
      rounds.push(await round(index, loaded, baseUrl, store, server, client));
    /** `value(round, side)` per round, over the in-process side's CPU or wall time. */
    const report = (name, side, kind, value = (r, s) => r[s][kind]) => {
      const ratios = rounds.map((r) => value(r, side) / r.local[kind]);
      const h = rounds.map((r) => value(r, side));
      const l = rounds.map((r) => r.local[kind]);
      console.log(`BENCH ${name} ${median(ratios).toFixed(2)} x`);
      console.log(
        `# ${kind}, ${side}: round ratios ${spread(ratios, 2)} (${ratios.map((v) => v.toFixed(2)).join(", ")}); turn over HTTP ${median(h).toFixed(2)} ms (${spread(h)}), in-process ${median(l).toFixed(2)} ms (${spread(l)})`,
      );
    };
    report("serve.overhead.ratio", "http", "cpu");
    report("serve.overhead.wall_ratio", "http", "wall");
    report("serve.overhead.with_client_ratio", "http", "cpu", (r, s) => r[s].cpu + r[s].client);
    report("serve.overhead.fetch_ratio", "fetch", "cpu");
    for (const side of ["http", "fetch"]) {
      const ms = rounds.map((r) => r[side].client);
      console.log(
        `BENCH serve.overhead.client_cpu_ms.${side} ${median(ms).toFixed(2)} ms (spread ${spread(ms, 2)})`,
      );
    }
  } finally {
    await server.close();
    await store.close();
    child.send("stop");
    await client.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/** Opens an event stream; resolves once `count` entries arrived (counting from the stream's start). */
function stream(url, count) {
  return new Promise((resolve, reject) => {
    let seen = 0;
    let tail = "";
    const req = request(url, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        const text = tail + chunk;
        const frames = text.split("\n\n");
        tail = frames.pop();
        for (const frame of frames) if (frame.includes("\nevent: entry\n")) seen += 1;
        if (seen >= count) {
          req.destroy();
          resolve(performance.now());
        }
      });
    });
    req.on("error", (error) => (seen >= count ? undefined : reject(error)));
    req.end();
  });
}

async function eventsPerSecond() {
  const { root, loaded } = await workspaceWithManifest("podkit-bench-sse-");
  const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
  const writerStore = new FsStore({ root: sessionsRoot(loaded.workspace) });
  const never = async () => {
    throw new Error("no runs in this bench");
  };
  const server = await startServer({
    store,
    port: 0,
    pods: { create: never, restore: never },
    maxStreams: 4096,
  });
  const entry = (n) => ({ kind: "user_input", text: `message ${n} ${"x".repeat(200)}` });
  try {
    const live = [];
    const replay = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Live: clients connected first, then the writer appends one entry at a time.
      const log = await SessionLog.create(writerStore, { systemPrompt: "bench", config: {} });
      const url = `${server.url}/sessions/${log.sessionId}/events`;
      const done = Promise.all(Array.from({ length: CLIENTS }, () => stream(url, LIVE_ENTRIES + 1)));
      await new Promise((resolve) => setTimeout(resolve, 300)); // every client connected
      const start = performance.now();
      for (let n = 0; n < LIVE_ENTRIES; n++) await log.append(entry(n));
      const end = Math.max(...(await done));
      live.push((CLIENTS * LIVE_ENTRIES) / ((end - start) / 1000));
      // Replay: a long log, every client from the start at once.
      const big = await SessionLog.create(writerStore, { systemPrompt: "bench", config: {} });
      for (let n = 0; n < REPLAY_ENTRIES; n += 100)
        await big.appendMany(Array.from({ length: 100 }, (_, i) => entry(n + i)));
      const replayStart = performance.now();
      const ends = await Promise.all(
        Array.from({ length: CLIENTS }, () =>
          stream(`${server.url}/sessions/${big.sessionId}/events`, REPLAY_ENTRIES + 1),
        ),
      );
      replay.push((CLIENTS * (REPLAY_ENTRIES + 1)) / ((Math.max(...ends) - replayStart) / 1000));
    }
    console.log(`BENCH serve.sse.events_per_s ${median(live).toFixed(0)} events/s`);
    console.log(
      `# live rounds ${live.map((v) => v.toFixed(0)).join(", ")} (${CLIENTS} clients, ${LIVE_ENTRIES} appends)`,
    );
    console.log(`BENCH serve.sse.replay_events_per_s ${median(replay).toFixed(0)} events/s`);
    console.log(
      `# replay rounds ${replay.map((v) => v.toFixed(0)).join(", ")} (${CLIENTS} clients, ${REPLAY_ENTRIES} entries)`,
    );
  } finally {
    await server.close();
    await store.close();
    await writerStore.close();
    await rm(root, { recursive: true, force: true });
  }
}

// `node bench/serve.bench.mjs overhead` (or `sse`) runs one part, e.g. under `--cpu-prof`.
const part = process.argv[2];
if (part === undefined || part === "overhead") await overhead();
if (part === undefined || part === "sse") await eventsPerSecond();
