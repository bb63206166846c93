// The provider double of the long-session bench, in its own process (its CPU is not the pod's):
// the pod's own requests get the tool-session script (a `lookup` call, then an answer); the
// compaction requests (the pod's conversation with the compaction instruction appended) and the
// workers of memory extract and consolidation are answered by routing on the instruction and on
// their tools (write_summary / write_extracted, then a last word; consolidation changes nothing).
//   startLongSessionDouble() → { child, baseUrl }; send the child any message to stop it.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TOOL_SESSION_RESPONSES } from "./tool-session-double.mjs";

const self = fileURLToPath(import.meta.url);

export function startLongSessionDouble() {
  const child = fork(self, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve) => child.once("message", ({ baseUrl }) => resolve({ child, baseUrl })));
}

const hasTool = (request, name) => request.body?.tools?.some((tool) => tool.name === name) ?? false;
const done = { parts: [{ type: "text", text: "Done." }] };
const EXTRACTED = {
  decisions: [{ topic: "bench topic", decision: "Keep the bench small", reason: "CPU is shared" }],
  discussions: [],
  attempts: [],
  requests: [],
};

/** Answers the background workers; the pod's own requests fall through to the scripted loop. */
function respond(request) {
  if (request.rawBody.includes("[Compaction request from the runtime]")) {
    if (request.rawBody.includes("summary written")) return done;
    const summary = `Goal: answer the user's questions with lookups. ${"State: answered, nothing open. ".repeat(20)}`;
    return { parts: [{ type: "tool_call", name: "write_summary", arguments: { summary } }] };
  }
  if (hasTool(request, "write_extracted")) {
    if (request.rawBody.includes('"tool_result"') || request.rawBody.includes("tool_use_id")) return done;
    return { parts: [{ type: "tool_call", name: "write_extracted", arguments: EXTRACTED }] };
  }
  if (hasTool(request, "memory_write")) return { parts: [{ type: "text", text: "Nothing durable to add." }] };
  return undefined;
}

if (process.argv[1] === self) {
  const { startProviderDouble } = await import("../../packages/testkit/dist/index.js");
  const double = await startProviderDouble({
    wire: "anthropic",
    loop: true,
    measureInputTokens: true,
    respond,
    responses: TOOL_SESSION_RESPONSES.map(({ usage: _measured, ...response }) => response),
  });
  // The double keeps every request it served; a 2,000-turn session needs none of them.
  setInterval(() => double.requests.splice(0), 1000).unref();
  process.send({ baseUrl: double.baseUrl });
  process.on("message", async () => {
    await double.close();
    process.exit(0);
  });
}
