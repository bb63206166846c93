// One step of the durable-approval flow in a process of its own (approvals-process.test.ts):
// `run` runs a pod until its run ends awaiting approval, prints what is pending and then waits to
// be SIGKILLed; `answer` restores the session and answers a call; `resume` restores and resumes.
// With `--barrier`, the child restores, prints READY and waits for a line on stdin before acting,
// so two children can be made to race. The `side` tool counts its runs in <markers>/side-effects.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { loadManifest } from "@podkit/manifest";
import { definePodkitToolPackage } from "@podkit/tools";
import { Pod } from "../../dist/index.js";

const args = process.argv.slice(2);
const barrier = args.includes("--barrier");
const [mode, workspace, home, baseUrl, markerDir, sessionId, callId, decision, by] = args.filter(
  (arg) => arg !== "--barrier",
);
const say = (line) => process.stdout.write(`${line}\n`);

const side = definePodkitToolPackage({
  name: "approval-tools",
  tools: () => [
    () => ({
      name: "side",
      description: "a side effect that needs approval",
      inputSchema: { type: "object", properties: { n: { type: "number" } } },
      execute(input, ctx) {
        appendFileSync(join(markerDir, "side-effects"), `${ctx.callId} ${JSON.stringify(input)}\n`);
        return { summary: `side effect ${JSON.stringify(input)} done` };
      },
    }),
  ],
});

const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
const options = {
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "test-key", POD_TEST_DATABASE_URL: process.env.POD_TEST_DATABASE_URL },
  onWarning: () => {},
  toolPackages: [side],
};
// A hook asks about every `side` call: the pod has no approver, so each one is deferred.
const askAboutSide = {
  preToolCall: (call) =>
    call.name === "side" ? { action: "ask", askedBy: "side-policy" } : { action: "continue" },
};

async function waitForGo() {
  if (!barrier) return;
  say("READY");
  const lines = createInterface({ input: process.stdin });
  for await (const _ of lines) break;
  process.stdin.destroy();
}

function fail(error) {
  const by = error?.by === undefined ? "" : ` ${error.by}`;
  say(`ERROR ${error?.name ?? "Error"}${by} :: ${error?.message ?? error}`);
}

if (mode === "run-ask") {
  // An approver who never answers: the process dies while the question is open.
  const pod = await Pod.fromManifest(loaded, {
    ...options,
    approver: () => {
      say(`SESSION ${pod.sessionId}`);
      say("ASKING");
      return new Promise(() => {});
    },
  });
  pod.addHooks(askAboutSide);
  await pod.run("go");
} else if (mode === "run") {
  const pod = await Pod.fromManifest(loaded, options);
  pod.addHooks(askAboutSide);
  const result = await pod.run("go");
  say(`SESSION ${pod.sessionId}`);
  say(`PENDING ${pod.pendingApprovals.map((a) => a.callId).join(",")}`);
  say(`RESULT ${result.status}`);
  await new Promise(() => {});
} else if (mode === "answer") {
  const pod = await Pod.restore(loaded, sessionId, options).catch((error) => {
    fail(error);
    process.exit(0);
  });
  await waitForGo();
  try {
    const raw =
      decision === "malformed" ? { decision: "maybe" } : { decision, reason: `${decision} from ${by}`, by };
    const record = await pod.answerApproval(callId, raw);
    say(`ANSWERED ${record.callId} ${record.answer?.decision} ${record.answer?.by}`);
  } catch (error) {
    fail(error);
  }
  await pod.close();
} else if (mode === "resume") {
  const pod = await Pod.restore(loaded, sessionId, options);
  pod.addHooks(askAboutSide);
  await waitForGo();
  try {
    const result = await pod.resume();
    say(`RESULT ${result.status} ${JSON.stringify(result.text)}`);
  } catch (error) {
    fail(error);
  }
  await pod.close();
}
