// One dispatch worker process of the benches: a RunWorker on the bench's schemas, serving pod
// "bench" with the bench tool; its events go to stdout as JSON lines (a first {"type":"serving"}).
import { RunWorker } from "../../packages/dispatch/dist/index.js";
import { PgDispatcher } from "../../packages/dispatch-pg/dist/index.js";
import { loadManifest } from "../../packages/manifest/dist/index.js";
import { PostgresStore } from "../../packages/store-postgres/dist/index.js";
import { toolPackage } from "./pod-bench-workspace.mjs";

const env = process.env;
const concurrency = Number(process.argv[2] ?? 1);
const store = new PostgresStore({
  url: env.PODKIT_BENCH_URL,
  schema: env.PODKIT_BENCH_STORE_SCHEMA,
  maxConnections: 4,
});
const dispatcher = new PgDispatcher({
  url: env.PODKIT_BENCH_URL,
  schema: env.PODKIT_BENCH_DISPATCH_SCHEMA,
  concurrency,
});
const loaded = await loadManifest({
  env: { cwd: env.PODKIT_BENCH_WORKSPACE, home: env.PODKIT_BENCH_WORKSPACE, env: {} },
});
const print = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const worker = new RunWorker({
  dispatcher,
  store,
  manifests: [loaded],
  concurrency,
  podOptions: () => ({
    model: env.PODKIT_BENCH_MODEL,
    env: { ANTHROPIC_API_KEY: "bench" },
    onWarning: () => {},
    toolPackages: [toolPackage],
  }),
  onEvent: print,
});
const done = worker.start();
await dispatcher.start();
print({ type: "serving" });
await done;
