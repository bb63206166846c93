// Failover of a dispatched run, and what it costs the provider's prompt cache.
//
// dispatch.failover_s: a worker process holding a run (its model answer stalls) is SIGKILLed;
// seconds until another worker process starts the run again (its "claimed" event). Default lease
// settings (heartbeat 10 s, supervisor every 2 s, poll 1 s): the idle bound docs/dispatch.md states.
// Median of 5 rounds.
//
// dispatch.failover_s.busy: the same with busy workers — 3 worker processes (concurrency 1), each
// running a run (about 4 s each) with more queued behind them; one holding a run is SIGKILLed (and
// replaced), seconds until another starts the run again. The run taken over goes before the queued
// ones, without retry delay, so it waits for the heartbeat and the first slot that frees: the busy
// bound of docs/dispatch.md. Median of 5 rounds.
//
// dispatch.failover.cache_read_share: one session of 30 turns, one run per turn (the scripted tool
// session: a `lookup` call, then an answer). The worker running turn 15 is SIGKILLed while the
// turn's tool call is in flight; another worker finishes it (closing the call as interrupted) and
// runs turns 16–30. The share of all input tokens `simulatePromptCache` bills as cache reads under
// Anthropic's rules. Aim ≥ 0.9.
import { simulatePromptCache, startProviderDouble } from "../packages/testkit/dist/index.js";
import { benchDatabase, dispatchBench, median, spread } from "./lib/dispatch-bench.mjs";
import { TOOL_SESSION_RESPONSES } from "./lib/tool-session-double.mjs";

const ROUNDS = 5;
const TURNS = 30;
const KILL_AT = 15;

const database = await benchDatabase("dispatch-failover");
if (database === undefined) process.exit(0);
try {
  // --- failover time ---
  let stall = true;
  const slow = await startProviderDouble({
    wire: "anthropic",
    respond: () =>
      stall
        ? { parts: [{ type: "text", text: "slow" }], fault: { kind: "stall", afterEvents: 0, ms: 60_000 } }
        : { parts: [{ type: "text", text: "done" }] },
  });
  const bench = await dispatchBench(database.url, slow.baseUrl);
  const seconds = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      stall = true;
      const holder = await bench.worker();
      const { run } = await bench.submit(`round ${round}`);
      await holder.next((event) => event.type === "claimed" && event.runId === run.runId);
      const taker = await bench.worker();
      stall = false;
      const killedAt = performance.now();
      holder.child.kill("SIGKILL");
      const taken = await taker.next((event) => event.type === "claimed" && event.runId === run.runId);
      seconds.push((taken.at - killedAt) / 1000);
      await taker.next((event) => event.type === "ended" && event.runId === run.runId);
      taker.child.kill("SIGKILL");
    }
  } finally {
    await bench.close();
    await slow.close();
  }
  console.log(`BENCH dispatch.failover_s ${median(seconds).toFixed(1)} s`);
  console.log(`# dispatch.failover_s spread ${spread(seconds)} over ${ROUNDS} rounds`);

  // --- failover time with busy workers ---
  const busyDouble = await startProviderDouble({
    wire: "anthropic",
    respond: () => ({
      parts: [{ type: "text", text: "done" }],
      fault: { kind: "stall", afterEvents: 1, ms: 4_000 },
    }),
  });
  const busy = await dispatchBench(database.url, busyDouble.baseUrl);
  const busySeconds = [];
  try {
    const workers = await Promise.all([1, 2, 3].map(() => busy.worker(1)));
    const holding = (worker) => {
      let held;
      for (const event of worker.events) {
        if (event.type === "claimed") held = event.runId;
        else if (event.runId === held) held = undefined;
      }
      return held;
    };
    let submitted = 0;
    const backlog = async () => {
      const open = await busy.dispatcher.list({ states: ["queued", "retrying"], limit: 100 });
      for (let i = open.length; i < 6; i++) await busy.submit(`busy run ${submitted++}`);
    };
    for (let round = 0; round < ROUNDS; round++) {
      await backlog();
      // Every worker holds a run, with more queued behind them.
      while (workers.some((worker) => holding(worker) === undefined)) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2_000));
      const victim = workers[Math.floor(Math.random() * workers.length)];
      const runId = holding(victim);
      if (runId === undefined) {
        round--;
        continue;
      }
      const killedAt = performance.now();
      victim.child.kill("SIGKILL");
      workers.splice(workers.indexOf(victim), 1);
      workers.push(await busy.worker(1));
      await backlog();
      const taken = await Promise.race(
        workers.map((worker) => worker.next((event) => event.type === "claimed" && event.runId === runId)),
      );
      busySeconds.push((taken.at - killedAt) / 1000);
    }
  } finally {
    await busy.close();
    await busyDouble.close();
  }
  console.log(`BENCH dispatch.failover_s.busy ${median(busySeconds).toFixed(1)} s`);
  console.log(
    `# dispatch.failover_s.busy spread ${spread(busySeconds)} over ${ROUNDS} rounds (3 workers, runs of about 4 s queued behind)`,
  );

  // --- the prompt cache across a failover ---
  let request = 0;
  let killTurn = false;
  const double = await startProviderDouble({
    wire: "anthropic",
    respond: () => {
      const response = TOOL_SESSION_RESPONSES[request++ % 2];
      // Turn 15's answer request stalls, so its tool call's result is committed and the kill
      // lands inside the turn; after the kill the next worker resumes it.
      return killTurn && request % 2 === 0
        ? { ...response, fault: { kind: "stall", afterEvents: 0, ms: 60_000 } }
        : response;
    },
  });
  const session = await dispatchBench(database.url, double.baseUrl);
  try {
    let worker = await session.worker();
    const sessionId = await session.newSession();
    for (let turn = 1; turn <= TURNS; turn++) {
      killTurn = turn === KILL_AT;
      const before = double.requests.length;
      const { run } = await session.submit(`Question number ${turn}?`, sessionId);
      if (killTurn) {
        await worker.next((event) => event.type === "claimed" && event.runId === run.runId);
        // Killed while the turn's second request (its tool result sent, the answer awaited) is open.
        while (double.requests.length < before + 2) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        killTurn = false;
        request = 1; // the resumed turn asks for its answer again
        worker.child.kill("SIGKILL");
        worker = await session.worker();
      }
      await worker.next((event) => event.type === "ended" && event.runId === run.runId);
    }
    const cache = simulatePromptCache(double.requests, "anthropic");
    console.log(`BENCH dispatch.failover.cache_read_share ${cache.cachedShare.toFixed(3)} share`);
    console.log(
      `# ${double.requests.length} requests over ${TURNS} turns, one worker killed in turn ${KILL_AT}`,
    );
  } finally {
    await session.close();
    await double.close();
  }
} finally {
  database.stop();
}
process.exit(0);
