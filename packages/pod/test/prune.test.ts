import { simulatePromptCache } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { compactionTable, lookupTools } from "./compaction-harness.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

/** Tool results the request sent with their output (`found …` summary plus content) vs summary only. */
function sentResults(request: { body: { messages: { content: unknown }[] } }) {
  const results: { withContent: boolean }[] = [];
  for (const message of request.body.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; content?: unknown }[]) {
      if (part.type === "tool_result")
        results.push({ withContent: JSON.stringify(part.content).includes("data data") });
    }
  }
  return results;
}

async function toolSession(minSavings: number, turns = 16) {
  const w = await world({
    manifestExtra: compactionTable({
      threshold: 1000000,
      request_threshold: 1000000,
      prune_protected_tokens: 1500,
      prune_min_savings: minSavings,
    }),
    toolPackages: [lookupTools(2000)],
    double: { measureInputTokens: true },
  });
  const pod = await w.pod();
  for (let turn = 1; turn <= turns; turn++) {
    w.double.enqueue(toolCall("lookup", { q: `item ${turn}` }), text(`answer ${turn}`));
    await pod.run(`look up item ${turn}`);
  }
  return { w, pod };
}

describe("prune", () => {
  it("drops old tool output from requests only: history and the log keep it, summaries are always sent", async () => {
    const { w, pod } = await toolSession(1500);
    const last = w.double.requests.at(-1) as never;
    const results = sentResults(last);
    expect(results.length).toBe(16);
    expect(results.filter((r) => !r.withContent).length).toBeGreaterThan(8);
    expect(results.at(-1)?.withContent).toBe(true);
    expect(JSON.stringify((last as { body: unknown }).body)).toContain("found item 1");
    expect(
      pod.history.filter((item) => item.type === "tool_result" && item.content !== undefined),
    ).toHaveLength(16);
    const entries = await sessionEntries(w.workspace);
    const logged = entries.filter((entry) => entry.kind === "tool_result");
    expect(logged).toHaveLength(16);
    expect(logged.every((entry) => JSON.stringify(entry).includes("data data"))).toBe(true);
    expect(entries.some((entry) => entry.kind === "extension" && entry.domain === "pod.prune")).toBe(true);
  });

  it("prunes in stable steps: far fewer prefix changes, and a higher cache-read share, than a boundary that creeps every request", async () => {
    const stable = await toolSession(1500);
    const creeping = await toolSession(1);
    const share = (requests: typeof stable.w.double.requests) =>
      simulatePromptCache(requests, "anthropic").cachedShare;
    const steps = (entries: Awaited<ReturnType<typeof sessionEntries>>) =>
      entries.filter((entry) => entry.kind === "extension").length;
    const stableSteps = steps(await sessionEntries(stable.w.workspace));
    const creepingSteps = steps(await sessionEntries(creeping.w.workspace));
    expect(stableSteps).toBeLessThan(creepingSteps / 2);
    expect(share(stable.w.double.requests)).toBeGreaterThan(share(creeping.w.double.requests) + 0.1);
  });

  it("a restored pod sends the same pruned prefix it sent before (the boundary is in the log)", async () => {
    const { w, pod } = await toolSession(1500, 12);
    const restored = await w.restore(pod.sessionId as string);
    w.double.enqueue(text("after restore"));
    await restored.run("anything else?");
    const [before, after] = w.double.requests.slice(-2).map(sentResults);
    expect(after?.slice(0, before?.length)).toEqual(before);
  });
});
