// A pod in a child process, killed with SIGKILL by pod-crash.test.ts in the middle of a tool call
// or of a streamed response. It prints what it reached so the parent knows when to kill it.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { loadManifest } from "@podkit/manifest";
import { definePodkitToolPackage } from "@podkit/tools";
import { Pod } from "../../dist/index.js";

// With a fifth argument (a session id) the child restores that session and runs one turn to the end.
const [workspace, home, baseUrl, markerDir, restoreId] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);

const slow = definePodkitToolPackage({
  name: "crash-tools",
  tools: () => [
    () => ({
      name: "slow",
      description: "takes forever",
      inputSchema: { type: "object" },
      async execute() {
        appendFileSync(join(markerDir, "slow-ran"), "ran\n");
        say("TOOL_STARTED");
        await new Promise(() => {});
        return { summary: "never" };
      },
    }),
  ],
});

const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
const options = {
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "test-key" },
  onWarning: () => {},
  toolPackages: [slow],
};
const pod = restoreId
  ? await Pod.restore(loaded, restoreId, options)
  : await Pod.fromManifest(loaded, options);
let streaming = false;
for await (const event of pod.run(restoreId ? "turn of the child" : "go")) {
  if (event.type === "turn_start") say(`SESSION ${pod.sessionId}`);
  if (event.type === "text_delta" && !streaming) {
    streaming = true;
    say("STREAMING");
  }
}
say(`DONE ${pod.sessionId}`);
await pod.close();
