// Runs an eval (concurrency 1) over the sessions given; the test SIGKILLs it part way.
// argv: workspace, home, double base URL, eval id, JSON array of session ids.
import { loadManifest } from "@podkit/manifest";
import { openWorkspaceFsStore, runEval } from "../../dist/index.js";

const [workspace, home, baseUrl, evalId, sessions] = process.argv.slice(2);
const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
const store = openWorkspaceFsStore(loaded.dataDir);
await runEval({
  cases: JSON.parse(sessions).map((sessionId) => ({ sessionId })),
  store,
  variant: { manifest: loaded, model: baseUrl },
  podOptions: {
    env: { ANTHROPIC_API_KEY: "test-key" },
    clock: () => new Date("2026-04-15T09:30:00Z"),
    onWarning: () => {},
  },
  evalId,
  concurrency: 1,
  onItem: (result) => process.stdout.write(`finished ${result.caseName}\n`),
});
await store.close();
process.stdout.write("all done\n");
