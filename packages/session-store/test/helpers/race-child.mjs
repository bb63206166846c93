// Concurrency-test writer using the BUILT package. Loads, says "ready", waits for "go" on stdin.
//   interleave <root> <session> <segment> <name> <count>: raw FsStore appends (no expected count)
//     of large lines; every line names the writer and its index.
//   busy <root> <session> <segment>: appends small entries back to back until killed.
//   drift <root> <session> <segment> <name>: opens the segment, appends one entry when told to,
//     and prints where it landed as JSON.
//   cross <root> <session> <own> <other>: appends to its own segment and keeps that lease (60 s
//     linger), says "holding", then on "go" appends to the other segment and prints the outcome.
import { FsStore, SessionLog } from "../../dist/index.js";

const [mode, root, sessionId, ...rest] = process.argv.slice(2);
const store = new FsStore({ root });
// Wait for one "go" line, then stop reading so the process can exit by itself.
const go = () =>
  new Promise((resolve) =>
    process.stdin.once("data", () => {
      process.stdin.destroy();
      resolve();
    }),
  );

if (mode === "interleave") {
  const [segmentId, name, count] = rest;
  const ref = { sessionId, segmentId };
  process.stdout.write("ready\n");
  await go();
  for (let i = 0; i < Number(count); i++) {
    // 1 KiB to 96 KiB per line, so unserialized writers would visibly tear each other's lines.
    const filler = `${name}${"ü".repeat(512 + ((i * 7919) % 48) * 1024)}`;
    await store.append(ref, [{ kind: "extension", ts: i, domain: name, payload: { i, filler } }]);
    if (i % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
  }
  await store.close();
  process.stdout.write("done\n");
} else if (mode === "busy") {
  const [segmentId] = rest;
  const ref = { sessionId, segmentId };
  process.stdout.write("ready\n");
  await go();
  // Appends without pause (a setImmediate every 8 entries keeps the lease alive) until killed.
  for (let i = 0; ; i++) {
    await store.append(ref, [{ kind: "extension", ts: i, domain: "busy", payload: i }]);
    if (i === 0) process.stdout.write("appending\n");
    if (i % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
  }
} else if (mode === "drift") {
  const [segmentId, name] = rest;
  const log = await SessionLog.openSegment(store, { sessionId, segmentId });
  process.stdout.write("ready\n");
  await go();
  const result = await log.append({ kind: "user_input", text: name });
  await store.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (mode === "cross") {
  const [own, other] = rest;
  const leased = new FsStore({ root, lockLingerMs: 60_000, lockTimeoutMs: 8_000 });
  await leased.append({ sessionId, segmentId: own }, [
    { kind: "extension", ts: 1, domain: "own", payload: own },
  ]);
  process.stdout.write("holding\n");
  await go();
  try {
    const outcome = await leased.append({ sessionId, segmentId: other }, [
      { kind: "extension", ts: 2, domain: "cross", payload: own },
    ]);
    process.stdout.write(`${JSON.stringify(outcome)}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: error.name })}\n`);
  }
  await leased.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
