// Crash-test writer: restores a session through the BUILT package and appends `user_input`
// entries forever, printing each sequence number on stdout only after its append resolved.
// Appends go out in bursts fired without awaiting each, so the log's group commit writes them
// together ("batch <n>" is printed for each store append that carried more than one entry).
// The parent SIGKILLs it. It loads the package, says "warm", and waits for "go" or "go big" on
// stdin, so the parent can start the next writer while the current one runs. With "go big" it
// announces each large append as "big <seq> <file size before>" so the parent can kill it in
// the middle of that write.
import { statSync } from "node:fs";
import { FsStore, SessionLog } from "../../dist/index.js";
import { bigPayloadOf, payloadOf, seqOf } from "./payload.mjs";

const [root, sessionId] = process.argv.slice(2);
process.stdout.write("warm\n");
const command = await new Promise((resolve) =>
  process.stdin.once("data", (data) => resolve(String(data).trim())),
);
const big = command === "go big";
const store = new FsStore({ root });
const log = await SessionLog.open(store, sessionId);
let seq = 0;
for (const item of log.state.history) {
  const text = item.content?.[0]?.text;
  const n = text === undefined ? undefined : seqOf(text);
  if (n !== undefined && n >= seq) seq = n + 1;
}
process.stdout.write(`start ${seq}\n`);
const path = store.segmentPath(log.ref);
const storeAppend = store.append.bind(store);
store.append = (ref, entries, options) => {
  if (entries.length > 1) process.stdout.write(`batch ${entries.length}\n`);
  return storeAppend(ref, entries, options);
};
for (;;) {
  const burst = 1 + (seq % 6);
  const pending = [];
  for (let i = 0; i < burst; i++) {
    const n = seq++;
    // Pipes are synchronous on Linux: the number is out as soon as its append resolved.
    pending.push(
      log.append({ kind: "user_input", text: payloadOf(n) }).then(() => process.stdout.write(`${n}\n`)),
    );
  }
  await Promise.all(pending);
  if (big) {
    const text = bigPayloadOf(seq);
    process.stdout.write(`big ${seq} ${statSync(path).size}\n`);
    await log.append({ kind: "user_input", text });
    process.stdout.write(`${seq}\n`);
    seq++;
  }
  await new Promise((resolve) => (seq % 3 === 0 ? setTimeout(resolve, 0) : setImmediate(resolve)));
}
