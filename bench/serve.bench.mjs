// podkit serve: what HTTP costs a turn, and how fast the event stream reaches many clients.
//
// serve.overhead.ratio: CPU time of a scripted tool turn (text + a `lookup` call, then an answer)
// sent as `POST /sessions/:id/messages {"wait": true}` to a server in this process (client and
// server both counted), against the same turn through `pod.run()` in-process on the same kind of
// store; the provider double runs in a child process, so its CPU is not counted. CPU rather than
// wall time, as pod.overhead does: on a shared 2-core machine wall time mostly measures the
// neighbours. Median of 5 rounds of 20 turns each, alternating which side runs first. Aim ≤ 1.2.
// serve.overhead.wall_ratio: the same in wall time, for reference.
//
// serve.sse.events_per_s: 100 clients stream one session while another writer appends 1,000
// entries to it (a second FsStore, so the server sees them through its watcher, as it would a
// `podkit run` in another process); events delivered per second, over all clients, from the first
// append to the last client holding the last entry. serve.sse.replay_events_per_s: the same 100
// clients replaying a 2,000-entry log from the start at once.

import { rm } from "node:fs/promises";
import { request } from "node:http";
import { Pod } from "../packages/pod/dist/index.js";
import { startServer } from "../packages/serve/dist/index.js";
import { FsStore, SessionLog, sessionsRoot } from "../packages/session-store/dist/index.js";
import { toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const ROUNDS = 5;
const TURNS = 20;
const CLIENTS = 100;
const LIVE_ENTRIES = 1_000;
const REPLAY_ENTRIES = 2_000;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;

const podOptions = (baseUrl, store) => ({
  store,
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: () => {},
  toolPackages: [toolPackage],
});

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok || json.status !== "finished")
    throw new Error(`unexpected ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** CPU and wall time (ms) per turn of `turns()`. */
async function perTurn(turns) {
  globalThis.gc?.();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await turns();
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000 / TURNS, wall: (performance.now() - start) / TURNS };
}

/** TURNS turns in one new session, in-process. */
async function inProcess(loaded, baseUrl, store) {
  const pod = await Pod.fromManifest(loaded, podOptions(baseUrl, store));
  await pod.run("Question 0?"); // the session exists, as it does for the HTTP side
  const measured = await perTurn(async () => {
    for (let turn = 1; turn <= TURNS; turn++) {
      const result = await pod.run(`Question ${turn}?`);
      if (result.status !== "finished") throw new Error(JSON.stringify(result));
    }
  });
  await pod.close();
  return measured;
}

/** TURNS turns in one new session, through the server. */
async function overHttp(server) {
  const { sessionId } = await post(`${server.url}/sessions`, { message: "Question 0?", wait: true });
  return perTurn(async () => {
    for (let turn = 1; turn <= TURNS; turn++) {
      await post(`${server.url}/sessions/${sessionId}/messages`, {
        message: `Question ${turn}?`,
        wait: true,
      });
    }
  });
}

async function overhead() {
  const { child, baseUrl } = await startToolSessionDouble("anthropic");
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
    await inProcess(loaded, baseUrl, store); // warm-up both paths
    await overHttp(server);
    const local = [];
    const http = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["local", "http"] : ["http", "local"];
      for (const side of order) {
        if (side === "local") local.push(await inProcess(loaded, baseUrl, store));
        else http.push(await overHttp(server));
      }
    }
    for (const kind of ["cpu", "wall"]) {
      const h = http.map((m) => m[kind]);
      const l = local.map((m) => m[kind]);
      const name = kind === "cpu" ? "serve.overhead.ratio" : "serve.overhead.wall_ratio";
      console.log(`BENCH ${name} ${(median(h) / median(l)).toFixed(2)} x`);
      console.log(
        `# ${kind}: per-round ratios ${spread(l.map((v, i) => h[i] / v))}; turn over HTTP ${median(h).toFixed(2)} ms (${spread(h)}), in-process ${median(l).toFixed(2)} ms (${spread(l)})`,
      );
    }
  } finally {
    await server.close();
    await store.close();
    child.send("stop");
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

await overhead();
await eventsPerSecond();
