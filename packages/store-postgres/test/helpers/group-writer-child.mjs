// A client that is killed mid-write in the crash test: its own process and connection pool.
//   node group-writer-child.mjs <url> <schema> <session> <segment> <name> <pad>
// Prints "ready", waits for "go" on stdin, then appends user_input entries ("<name>-<n>" padded
// with <pad> characters) forever, in bursts fired without awaiting each so the log's group commit
// writes them together. Prints {"n": <n>} for each append once its promise resolved, and
// "batch <size>" for each store append that carried more than one entry.
import { createInterface } from "node:readline";
import { SessionLog } from "@podkit/session-store";
import { PostgresStore } from "../../dist/index.js";

const [url, schema, sessionId, segmentId, name, pad] = process.argv.slice(2);
const store = new PostgresStore({ url, schema, maxConnections: 2 });
const storeAppend = store.append.bind(store);
store.append = (ref, entries, options) => {
  if (entries.length > 1) process.stdout.write(`batch ${entries.length}\n`);
  return storeAppend(ref, entries, options);
};
const log = await SessionLog.openSegment(store, { sessionId, segmentId });
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.on("line", (line) => line === "go" && resolve()));
console.log("ready");
await go;
const padding = "x".repeat(Number(pad));
for (let n = 0; ; ) {
  const pending = [];
  for (let i = 1 + (n % 6); i > 0; i--) {
    const mine = n++;
    pending.push(
      log
        .append({ kind: "user_input", text: `${name}-${mine}${padding}` })
        .then(() => process.stdout.write(`${JSON.stringify({ n: mine })}\n`)),
    );
  }
  await Promise.all(pending);
}
