// A writer process driven line by line over stdin, using the BUILT package. Prints "ready",
// then answers each command with one line of JSON (or {"error": …}):
//   open <segmentId>     SessionLog.openSegment on that segment of the session
//   append <text>        appends a user_input with that text; prints the AppendResult
//   exit                 closes the store and exits
// Options come as JSON in argv[4] and are passed to FsStore (e.g. lockLingerMs, lockTimeoutMs).
import { createInterface } from "node:readline";
import { FsStore, SessionLog } from "../../dist/index.js";

const [root, sessionId, optionsJson] = process.argv.slice(2);
const store = new FsStore({ root, ...JSON.parse(optionsJson ?? "{}") });
let log;
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const [command, ...rest] = line.split(" ");
  const argument = rest.join(" ");
  try {
    if (command === "open") {
      log = await SessionLog.openSegment(store, { sessionId, segmentId: argument });
      process.stdout.write(`${JSON.stringify({ opened: log.segmentId })}\n`);
    } else if (command === "append") {
      process.stdout.write(`${JSON.stringify(await log.append({ kind: "user_input", text: argument }))}\n`);
    } else if (command === "exit") {
      await store.close();
      process.exit(0);
    }
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String(error), name: error?.name })}\n`);
  }
}
