import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { compactionTable, compactRequests, compactResponder } from "./compaction-harness.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";

// The disposable compaction worker's tools, driven by a scripted compaction worker
// through the provider double: each scripted response is one tool call, in order.
const world = usePodWorlds();
const SECRET = "SECRET-BESIDE-THE-WORKSPACE";

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;

/** The tool results the compaction worker got back, by the tool call's name, in order. */
function toolResults(
  requests: readonly CapturedRequest[],
): { name: string; text: string; isError: boolean }[] {
  const last = requests.at(-1)?.body as Body;
  const names = new Map<string, string>();
  const results: { name: string; text: string; isError: boolean }[] = [];
  for (const message of last?.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === "tool_use") names.set(part.id, part.name);
      if (part.type === "tool_result") {
        results.push({
          name: names.get(part.tool_use_id) ?? "?",
          text: JSON.stringify(part.content),
          isError: part.is_error === true,
        });
      }
    }
  }
  return results;
}

/** A pod with two turns of history, compacted by hand with the scripted compaction worker. */
async function compactWith(script: ScriptedResponse[], table: Record<string, number> = {}) {
  const w = await world({
    // The pod may read its workspace; `outside/` beside it is not in the scope.
    manifestExtra: `${compactionTable({
      threshold: 100000,
      request_threshold: 100000,
      retained_tokens: 50,
      ...table,
    })}\n[[scope.allow]]\ntarget = ".."\npermission = "read"`,
    files: {
      "project/small.md": "SMALL-FILE-CONTENT\n",
      "project/big.md": `BIG-FILE-CONTENT ${"lorem ipsum ".repeat(400)}\n`,
      "outside/secret.txt": SECRET,
    },
    double: { measureInputTokens: true, respond: compactResponder({ script }) },
  });
  const pod = await w.pod();
  w.double.enqueue(text("a"), text("b"));
  await pod.run("one");
  await pod.run("two");
  const outcome = await pod.compact();
  return { w, pod, outcome, compact: compactRequests(w.double.requests) };
}

describe("the compaction worker's tools", () => {
  it("mark_read_required is refused beyond auto_read_budget_tokens; what fits is loaded into the new history", async () => {
    const { pod, outcome, compact } = await compactWith(
      [
        toolCall("mark_read_required", { path: "big.md" }),
        toolCall("mark_read_required", { path: "small.md" }),
        toolCall("write_summary", { summary: "the summary" }),
        text("done"),
      ],
      // big.md is about 1200 tokens, small.md about 5.
      { auto_read_budget_tokens: 200 },
    );
    expect(outcome.status).toBe("compacted");
    const results = toolResults(compact);
    expect(results.map((result) => [result.name, result.isError])).toEqual([
      ["mark_read_required", true],
      ["mark_read_required", false],
      ["write_summary", false],
    ]);
    expect(results[0]?.text).toContain("not marked: big.md");
    expect(results[0]?.text).toContain("200-token auto-read budget");
    const history = JSON.stringify(pod.history);
    expect(history).toContain("SMALL-FILE-CONTENT");
    expect(history).not.toContain("BIG-FILE-CONTENT");
  });

  it("positive control: with a budget that fits, the same big file is marked and loaded", async () => {
    const { pod, compact } = await compactWith(
      [
        toolCall("mark_read_required", { path: "big.md" }),
        toolCall("write_summary", { summary: "the summary" }),
        text("done"),
      ],
      { auto_read_budget_tokens: 4000 },
    );
    expect(toolResults(compact)[0]?.isError).toBe(false);
    expect(JSON.stringify(pod.history)).toContain("BIG-FILE-CONTENT");
  });

  it("write_summary may be called again: the last call wins", async () => {
    const { pod, outcome } = await compactWith([
      toolCall("write_summary", { summary: "FIRST-DRAFT of the summary" }),
      toolCall("write_summary", { summary: "FINAL-VERSION of the summary" }),
      text("done"),
    ]);
    expect(outcome.status).toBe("compacted");
    const history = JSON.stringify(pod.history);
    expect(history).toContain("FINAL-VERSION of the summary");
    expect(history).not.toContain("FIRST-DRAFT");
  });

  it("read_file is confined to the pod's scope: a path outside is denied, a path inside is read", async () => {
    const { w, pod, compact } = await compactWith([
      toolCall("read_file", { path: "small.md" }),
      toolCall("read_file", { path: "../outside/secret.txt" }),
      toolCall("mark_read_required", { path: "../outside/secret.txt" }),
      toolCall("write_summary", { summary: "the summary" }),
      text("done"),
    ]);
    // The file really exists beside the workspace: only the scope keeps it out.
    expect(await readFile(join(w.root, "outside/secret.txt"), "utf8")).toBe(SECRET);
    const results = toolResults(compact);
    expect(results.map((result) => [result.name, result.isError])).toEqual([
      ["read_file", false],
      ["read_file", true],
      ["mark_read_required", true],
      ["write_summary", false],
    ]);
    expect(results[0]?.text).toContain("SMALL-FILE-CONTENT");
    expect(results[1]?.text).toMatch(/outside|scope/i);
    expect(JSON.stringify(w.double.requests.map((request) => request.body))).not.toContain(SECRET);
    expect(JSON.stringify(pod.history)).not.toContain(SECRET);
  });
});
