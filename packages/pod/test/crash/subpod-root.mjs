// A root pod with a reviewer role in a child process, SIGKILLed by subpods-crash.test.ts while its
// child pod streams. It prints what it reached so the test knows when to kill it.
import { loadManifest } from "@podkit/manifest";
import { Pod } from "../../dist/index.js";

const [workspace, home, baseUrl] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);

const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
const pod = await Pod.fromManifest(loaded, {
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "test-key" },
  onWarning: () => {},
});
let streaming = false;
for await (const event of pod.run("get a review")) {
  if (event.type === "turn_start") say(`SESSION ${pod.sessionId}`);
  if (event.type === "subpod" && event.event.type === "text_delta" && !streaming) {
    streaming = true;
    say(`CHILD_STREAMING ${event.sessionId}`);
  }
}
say("DONE");
await pod.close();
