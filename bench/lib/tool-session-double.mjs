// The provider double the overhead benches talk to, in its own process so its CPU is not counted
// against the code under measurement: every request answers with the same two scripted
// responses in turn (text + a `lookup` tool call, then a short answer), i.e. a tool session.
//   startToolSessionDouble(wire) → { child, baseUrl }; send the child any message to stop it.
//   TOOL_SESSION_RESPONSES: the same turn script, for benches that run a double in-process.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);

/** The two scripted responses of a tool session turn: text + a `lookup` call, then a short answer. */
export const TOOL_SESSION_RESPONSES = [
  {
    parts: [
      { type: "text", text: "Let me look that up." },
      { type: "tool_call", name: "lookup", arguments: { query: "the thing" } },
    ],
    usage: { inputTokens: 2000, outputTokens: 30, cacheReadTokens: 1800 },
  },
  {
    parts: [{ type: "text", text: "Here is the answer you asked for.", chunkSize: 8 }],
    usage: { inputTokens: 2100, outputTokens: 12 },
  },
];

/** Forks the double speaking `wire` and resolves once it listens. */
export function startToolSessionDouble(wire) {
  const child = fork(self, [wire], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve) => child.once("message", ({ baseUrl }) => resolve({ child, baseUrl })));
}

if (process.argv[1] === self) {
  const { startProviderDouble } = await import("../../packages/testkit/dist/index.js");
  const double = await startProviderDouble({
    wire: process.argv[2],
    loop: true,
    responses: TOOL_SESSION_RESPONSES,
  });
  process.send({ baseUrl: double.baseUrl });
  process.on("message", async () => {
    await double.close();
    process.exit(0);
  });
}
