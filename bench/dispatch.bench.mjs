// The cost of dispatching a run instead of running it in the process, and the throughput of workers.
//
// dispatch.overhead.ratio: one turn of the scripted tool session (a `lookup` call, then an answer)
// on an existing session, submitted (input committed to the log, job enqueued) and run by a
// worker (claim woken by NOTIFY, Pod.restore, the run's progress read from the log, its entries,
// completion) vs `Pod.restore` + `pod.run` of the same session in the bench process. Wall time
// from submit to the worker's "ended", against restore to run's end; a worker in the bench process
// (so both sides share the machine the same way), the provider double in a child process. Median
// of the per-round ratios, the sides alternating which goes first. Aim ≤ 1.3.
//
// dispatch.runs_per_s: 40 runs (one text answer each, new sessions) submitted at once to 4 worker
// processes of concurrency 2: runs completed per second from the first submit to the last
// completion.
import { RunWorker } from "../packages/dispatch/dist/index.js";
import { PgDispatcher } from "../packages/dispatch-pg/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { startProviderDouble } from "../packages/testkit/dist/index.js";
import { allCompleted, benchDatabase, dispatchBench, median, spread } from "./lib/dispatch-bench.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const ROUNDS = 7;
const RUNS = 40;

const database = await benchDatabase("dispatch");
if (database === undefined) process.exit(0);
try {
  // --- overhead ---
  const toolDouble = await startToolSessionDouble("anthropic");
  const bench = await dispatchBench(database.url, toolDouble.baseUrl);
  const { store, dispatcher } = bench;
  const workerDispatcher = new PgDispatcher({
    url: database.url,
    schema: bench.env.PODKIT_BENCH_DISPATCH_SCHEMA,
  });
  const ended = new Map();
  const worker = new RunWorker({
    dispatcher: workerDispatcher,
    store,
    manifests: [bench.loaded],
    podOptions: () => bench.podOptions,
    onEvent: (event) => {
      if (event.type === "ended") ended.get(event.runId)?.();
    },
  });
  const working = worker.start();
  const sessionId = await bench.newSession();
  // Warm both paths (imports, statements, the worker's first claim).
  await dispatched("warm-up");
  await inProcess("warm-up");

  async function dispatched(input) {
    const t0 = performance.now();
    const done = new Promise((resolve) => {
      bench.__resolve = resolve;
    });
    const { run } = await bench.submit(input, sessionId);
    ended.set(run.runId, bench.__resolve);
    // The run may have ended before its id was known here.
    if ((await dispatcher.show(run.runId)).state === "completed") bench.__resolve();
    await done;
    return performance.now() - t0;
  }
  async function inProcess(input) {
    const t0 = performance.now();
    const pod = await Pod.restore(bench.loaded, sessionId, { ...bench.podOptions, store });
    const result = await pod.run(input);
    await pod.close();
    if (result.status !== "finished") throw new Error(`unexpected ${result.status}`);
    return performance.now() - t0;
  }
  const ratios = [];
  for (let round = 0; round < ROUNDS; round++) {
    let ours;
    let base;
    if (round % 2 === 0) {
      ours = await dispatched(`question ${round}`);
      base = await inProcess(`question ${round}b`);
    } else {
      base = await inProcess(`question ${round}b`);
      ours = await dispatched(`question ${round}`);
    }
    ratios.push(ours / base);
    console.log(`# round ${round}: dispatched ${ours.toFixed(1)} ms, in-process ${base.toFixed(1)} ms`);
  }
  console.log(`BENCH dispatch.overhead.ratio ${median(ratios).toFixed(2)} x`);
  console.log(`# dispatch.overhead.ratio spread ${spread(ratios)} over ${ROUNDS} rounds`);
  worker.drain();
  await workerDispatcher.close();
  await working;
  await bench.close();
  toolDouble.child.send("stop");

  // --- throughput ---
  const double = await startProviderDouble({
    wire: "anthropic",
    loop: true,
    responses: [{ parts: [{ type: "text", text: "done" }] }],
  });
  const tput = await dispatchBench(database.url, double.baseUrl);
  try {
    await Promise.all(Array.from({ length: 4 }, () => tput.worker(2)));
    const sessions = await Promise.all(Array.from({ length: RUNS }, () => tput.newSession()));
    const t0 = performance.now();
    const submitted = await Promise.all(sessions.map((id, i) => tput.submit(`run ${i}`, id)));
    const t1 = await allCompleted(
      tput.dispatcher,
      submitted.map(({ run }) => run.runId),
    );
    console.log(`BENCH dispatch.runs_per_s ${(RUNS / ((t1 - t0) / 1000)).toFixed(1)} runs/s`);
  } finally {
    await tput.close();
    await double.close();
  }
} finally {
  database.stop();
}
process.exit(0);
