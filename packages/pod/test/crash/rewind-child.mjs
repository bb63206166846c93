// A rewind in a child process, killed by rewind-crash.test.ts: with SIGKILL from the parent after a
// random delay, or by itself at the `killAt`-th progress step (`-1`: never). It prints START just
// before the rewind begins and DONE when it has finished.
import { FsStore } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { rewindSession } from "../../dist/index.js";

const [kind, where, workspace, sessionId, toTurn, killAt] = process.argv.slice(2);
const store = kind === "fs" ? new FsStore({ root: where }) : new PostgresStore({ url: where });
let step = 0;
process.stdout.write("START\n");
await rewindSession({
  store,
  sessionId,
  toTurn: Number(toTurn),
  workspace,
  onProgress: (event) => {
    if (step++ === Number(killAt)) {
      process.stdout.write(`KILLED AT ${JSON.stringify(event)}\n`);
      process.kill(process.pid, "SIGKILL");
    }
  },
});
await store.close();
process.stdout.write(`DONE ${step}\n`);
