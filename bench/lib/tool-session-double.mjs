// The provider double the overhead benches talk to, in its own process so its CPU is not counted
// against the code under measurement: every request answers with the same two scripted
// responses in turn (text + a `lookup` tool call, then a short answer), i.e. a tool session —
// or, with script "memory-extract", the two requests of a memory extract.
//   startToolSessionDouble(wire, script?) → { child, baseUrl }; send the child any message to stop it.
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

/** The two requests of a memory extract: the `write_extracted` call, then the worker's last word. */
export const MEMORY_EXTRACT_RESPONSES = [
  {
    parts: [
      {
        type: "tool_call",
        name: "write_extracted",
        arguments: {
          decisions: [{ topic: "bench topic", decision: "Keep the bench small", reason: "CPU is shared" }],
          discussions: [],
          attempts: [],
          requests: [],
        },
      },
    ],
    usage: { inputTokens: 3000, outputTokens: 60 },
  },
  { parts: [{ type: "text", text: "ok" }], usage: { inputTokens: 3100, outputTokens: 2 } },
];

const SCRIPTS = { "tool-session": TOOL_SESSION_RESPONSES, "memory-extract": MEMORY_EXTRACT_RESPONSES };

/** Forks the double speaking `wire` (answering with `script`, in turn) and resolves once it listens. */
export function startToolSessionDouble(wire, script = "tool-session") {
  const child = fork(self, [wire, script], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve) => child.once("message", ({ baseUrl }) => resolve({ child, baseUrl })));
}

if (process.argv[1] === self) {
  const { startProviderDouble } = await import("../../packages/testkit/dist/index.js");
  const double = await startProviderDouble({
    wire: process.argv[2],
    loop: true,
    responses: SCRIPTS[process.argv[3] ?? "tool-session"],
  });
  process.send({ baseUrl: double.baseUrl });
  process.on("message", async () => {
    await double.close();
    process.exit(0);
  });
}
