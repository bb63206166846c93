// Exclusive-create race child, using the BUILT package. Creates one segment that other children
// create at the same moment:
//   node create-child.mjs <mode> <root> <session> <segment> <name> <barrier dir> <children>
// Every child stops right before the step that publishes the file and waits until all children
// got there (a file barrier), so they really do publish at once. Modes:
//   link    FsStore.createSegment (temp file, then link: fails when the segment exists);
//   legacy  the old way, as a positive control: check that the file does not exist, write a temp
//           file, rename it over the path.
// Prints {"name", "ok": true} or {"name", "error": "<class>"}.
import * as nodeFs from "node:fs";
import { join } from "node:path";
import { FsStore, SessionStoreUsageError } from "../../dist/index.js";

const [mode, root, sessionId, segmentId, name, barrierDir, children] = process.argv.slice(2);
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks until `children` processes reached the barrier (this one included). */
function barrier() {
  nodeFs.writeFileSync(join(barrierDir, name), "");
  const deadline = Date.now() + 20_000;
  while (nodeFs.readdirSync(barrierDir).length < Number(children)) {
    if (Date.now() > deadline) throw new Error("barrier timed out");
    Atomics.wait(sleeper, 0, 0, 1);
  }
}

const start = {
  kind: "segment_start",
  ts: 1,
  v: 2,
  session_id: sessionId,
  segment_id: segmentId,
  system_prompt: name,
  config: {},
  history: [],
};

try {
  if (mode === "link") {
    const linkSync = (from, to) => {
      barrier();
      return nodeFs.linkSync(from, to);
    };
    const fs = { ...nodeFs, linkSync };
    const store = new FsStore({ root, fs });
    await store.createSegment({ sessionId, segmentId }, [start]);
  } else {
    const store = new FsStore({ root });
    const path = store.segmentPath({ sessionId, segmentId });
    nodeFs.mkdirSync(join(root, sessionId), { recursive: true });
    if (nodeFs.existsSync(path)) throw new SessionStoreUsageError(`segment ${segmentId} already exists`);
    const temp = `${path}.tmp-${process.pid}`;
    const crc = "00000000";
    nodeFs.writeFileSync(temp, `${JSON.stringify(start).slice(0, -1)},"seq":0,"crc":"${crc}"}\n`);
    barrier();
    nodeFs.renameSync(temp, path);
  }
  process.stdout.write(`${JSON.stringify({ name, ok: true })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ name, error: error.name })}\n`);
}
