// Crash-test writer: restores a session through the BUILT package and appends `user_input`
// entries forever, printing each sequence number on stdout only after its append returned.
// The parent SIGKILLs it at random moments. It loads the package, says "warm", and waits for
// "go" on stdin, so the parent can start the next writer while the current one runs.
import { FsStore, SessionLog } from "../../dist/index.js";
import { payloadOf, seqOf } from "./payload.mjs";

const [root, sessionId] = process.argv.slice(2);
process.stdout.write("warm\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
const store = new FsStore({ root });
const log = await SessionLog.open(store, sessionId);
let seq = 0;
for (const item of log.state.history) {
  const text = item.content?.[0]?.text;
  const n = text === undefined ? undefined : seqOf(text);
  if (n !== undefined && n >= seq) seq = n + 1;
}
process.stdout.write(`start ${seq}\n`);
for (;;) {
  const burst = 1 + (seq % 4);
  for (let i = 0; i < burst; i++) {
    log.append({ kind: "user_input", text: payloadOf(seq) });
    // Pipes are synchronous on Linux: the number is out before the next append starts.
    process.stdout.write(`${seq}\n`);
    seq++;
  }
  await new Promise((resolve) => (seq % 3 === 0 ? setTimeout(resolve, 0) : setImmediate(resolve)));
}
