// Restores a root pod in its own process and runs one turn: budget-fan-out.test.ts checks that the
// tree's spending recorded in the logs is still counted here. Prints the run's result as JSON.
import { loadManifest } from "@podkit/manifest";
import { Pod } from "../../dist/index.js";

const [workspace, home, baseUrl, sessionId] = process.argv.slice(2);
const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
const options = { model: baseUrl, env: { ANTHROPIC_API_KEY: "test-key" }, onWarning: () => {} };
const pod = sessionId
  ? await Pod.restore(loaded, sessionId, options)
  : await Pod.fromManifest(loaded, options);
const result = await pod.run("one more thing").result;
process.stdout.write(
  `${JSON.stringify({ sessionId: pod.sessionId, status: result.status, stopReason: result.stopReason, budget: result.budget })}\n`,
);
await pod.close();
