// A second machine in a test: its own process and connection pool, appending to one segment.
//   node writer-child.mjs <url> <schema> <session> <segment> <name> <batches> <batch size> [pad]
// Prints "ready", waits for "go" on stdin, then appends <batches> batches of user_input entries
// ("<name>-<batch>-<n>", padded with <pad> characters) and prints one JSON line per acknowledged
// batch, then "done".
// With <batches> "forever" it appends entries "<name>-<n>" (padded) until it is killed, in bursts
// of <batch size> at most fired without awaiting each, so the log's group commit writes them
// together: it prints {"n": <n>} for each append once its promise resolved, and "batch <size>" for
// each store append that carried more than one entry.
import { createInterface } from "node:readline";
import { SessionLog } from "@podkit/session-store";
import { PostgresStore } from "../../dist/index.js";

const [url, schema, sessionId, segmentId, name, batches, size, pad = "0"] = process.argv.slice(2);
const store = new PostgresStore({ url, schema, maxConnections: 2 });
const storeAppend = store.append.bind(store);
store.append = (ref, entries, options) => {
  if (entries.length > 1 && batches === "forever") process.stdout.write(`batch ${entries.length}\n`);
  return storeAppend(ref, entries, options);
};
const log = await SessionLog.openSegment(store, { sessionId, segmentId });
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.on("line", (line) => line === "go" && resolve()));
console.log("ready");
await go;
const padding = "x".repeat(Number(pad));
if (batches === "forever") {
  for (let n = 0; ; ) {
    const pending = [];
    for (let i = 1 + (n % Number(size)); i > 0; i--) {
      const mine = n++;
      pending.push(
        log
          .append({ kind: "user_input", text: `${name}-${mine}${padding}` })
          .then(() => process.stdout.write(`${JSON.stringify({ n: mine })}\n`)),
      );
    }
    await Promise.all(pending);
  }
}
for (let batch = 0; batch < Number(batches); batch++) {
  const entries = Array.from({ length: Number(size) }, (_, n) => ({
    kind: "user_input",
    text: `${name}-${batch}-${n}${padding}`,
  }));
  const result = await log.appendMany(entries);
  console.log(JSON.stringify({ batch, segmentId: result.segmentId, drift: result.driftFork !== null }));
}
await store.close();
console.log("done");
lines.close();
