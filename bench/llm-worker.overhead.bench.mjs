// CPU overhead of the llm-worker loop over a bare doStream() loop.
//
// The same scripted 200-request session (100 user turns, each one tool round trip: a tool call, then a
// final text) runs twice against the same loopback provider double: once through `Worker` (history,
// item mapping, cache breakpoints, tool server, retry wrapper, events) and once through a minimal loop
// that keeps a LanguageModelV3 prompt by hand and calls `model.doStream()` directly. The double runs in a
// child process, so `process.cpuUsage()` here measures only the client side.

import { createModelAdapter, ToolServer, Worker } from "../packages/llm-worker/dist/index.js";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const TURNS = 100; // user turns; 2 model requests each
const ROUNDS = 3;
const WIRES = { anthropic: "anthropic/claude-sonnet-4-5", "openai-responses": "openai/gpt-5" };
const SYSTEM = `You are a benchmark pod.\n${"Keep answers short. ".repeat(100)}`;

const lookup = {
  name: "lookup",
  description: "Looks something up.",
  inputSchema: {
    type: "object",
    properties: { query: { type: "string" } },
    required: ["query"],
    additionalProperties: false,
  },
  execute: async (args) => ({ summary: `found ${args.query}`, content: "result line\n".repeat(20) }),
};

async function viaWorker(ref, baseUrl) {
  const tools = new ToolServer();
  tools.registerTool(() => lookup);
  const worker = new Worker({
    model: createModelAdapter(ref, { apiKey: "bench", baseUrl }),
    systemPrompt: SYSTEM,
    tools,
  });
  for (let turn = 0; turn < TURNS; turn++) {
    const result = await worker.run(`Question number ${turn}?`);
    if (result.status !== "finished" || result.requests !== 2)
      throw new Error(`unexpected result ${JSON.stringify(result)}`);
  }
}

async function viaDoStream(ref, baseUrl) {
  const model = await createModelAdapter(ref, { apiKey: "bench", baseUrl }).load();
  const tools = [
    { type: "function", name: lookup.name, description: lookup.description, inputSchema: lookup.inputSchema },
  ];
  const prompt = [{ role: "system", content: SYSTEM }];
  for (let turn = 0; turn < TURNS; turn++) {
    prompt.push({ role: "user", content: [{ type: "text", text: `Question number ${turn}?` }] });
    for (;;) {
      const { stream } = await model.doStream({ prompt, tools });
      const content = [];
      const calls = [];
      let text = "";
      for await (const part of stream) {
        if (part.type === "text-delta") text += part.delta;
        else if (part.type === "tool-call") calls.push(part);
        else if (part.type === "error") throw part.error;
      }
      if (text) content.push({ type: "text", text });
      for (const call of calls) {
        content.push({
          type: "tool-call",
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: JSON.parse(call.input),
        });
      }
      prompt.push({ role: "assistant", content });
      if (calls.length === 0) break;
      const results = [];
      for (const call of calls) {
        const output = await lookup.execute(JSON.parse(call.input));
        results.push({
          type: "tool-result",
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: { type: "text", value: `${output.summary}\n\n${output.content}` },
        });
      }
      prompt.push({ role: "tool", content: results });
    }
  }
}

async function measure(fn) {
  globalThis.gc?.();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await fn();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

async function main() {
  for (const [wire, ref] of Object.entries(WIRES)) {
    const { child, baseUrl } = await startToolSessionDouble(wire);
    await viaDoStream(ref, baseUrl); // warm-up both paths
    await viaWorker(ref, baseUrl);
    let base = { cpuMs: 0, wallMs: 0 };
    let worker = { cpuMs: 0, wallMs: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const b = await measure(() => viaDoStream(ref, baseUrl));
      const w = await measure(() => viaWorker(ref, baseUrl));
      base = { cpuMs: base.cpuMs + b.cpuMs, wallMs: base.wallMs + b.wallMs };
      worker = { cpuMs: worker.cpuMs + w.cpuMs, wallMs: worker.wallMs + w.wallMs };
    }
    const requests = TURNS * 2 * ROUNDS;
    const name = wire === "anthropic" ? "llm-worker.overhead" : `llm-worker.overhead.${wire}`;
    console.log(`BENCH ${name}.ratio ${(worker.cpuMs / base.cpuMs).toFixed(2)} x`);
    console.log(`BENCH ${name}.worker_cpu_per_request ${(worker.cpuMs / requests).toFixed(3)} ms`);
    console.log(`BENCH ${name}.dostream_cpu_per_request ${(base.cpuMs / requests).toFixed(3)} ms`);
    console.log(`BENCH ${name}.worker_session_wall ${(worker.wallMs / ROUNDS).toFixed(0)} ms`);
    console.log(`BENCH ${name}.dostream_session_wall ${(base.wallMs / ROUNDS).toFixed(0)} ms`);
    child.send("stop");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

await main();
