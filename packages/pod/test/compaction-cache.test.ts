import type { Item } from "@podkit/llm-worker";
import { type CapturedRequest, simulatePromptCache } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import {
  COMPACTION_INSTRUCTION_MARK,
  compactionTable,
  compactRequests,
  compactResponder,
  eventsOf,
  lookupTools,
  mainRequests,
} from "./compaction-harness.js";
import { readAllSegments, testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

// Issue 24: a compaction request continues the pod's own conversation, so it reads the prompt cache
// the pod's requests wrote. Captured requests of the provider double (Anthropic wire) show it.
const world = usePodWorlds();
const SUMMARY = "Goal: look up alpha, beta and gamma. State: all three found; nothing open.";

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;

/** A request body part as the provider caches it: the cache breakpoints (`cache_control`) left out. */
const bytes = (value: unknown) =>
  JSON.stringify(value, (key, inner) => (key === "cache_control" ? undefined : inner));

/** Every tool result of a request, with the name of its call. */
function toolResults(request: CapturedRequest): { name: string; text: string; isError: boolean }[] {
  const names = new Map<string, string>();
  const results: { name: string; text: string; isError: boolean }[] = [];
  for (const message of (request.body as Body).messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === "tool_use") names.set(part.id, part.name);
      if (part.type === "tool_result") {
        const text = JSON.stringify(part.content);
        results.push({ name: names.get(part.tool_use_id) ?? "?", text, isError: part.is_error === true });
      }
    }
  }
  return results;
}

/** A pod with `[compaction]` (prune on, thresholds out of reach) after three lookup turns. */
async function threeLookups(respond: ReturnType<typeof compactResponder>, extra = {}) {
  const w = await world({
    manifestExtra: compactionTable({
      threshold: 100000,
      request_threshold: 100000,
      retained_tokens: 200,
      prune_protected_tokens: 600,
      prune_min_savings: 300,
    }),
    toolPackages: [lookupTools(2000)],
    double: { respond, measureInputTokens: true },
    ...extra,
  });
  const pod = await w.pod();
  for (const q of ["alpha", "beta", "gamma"]) {
    w.double.enqueue(toolCall("lookup", { q }), text(`${q} found`));
    await pod.run(`look up ${q}`);
  }
  return { w, pod };
}

describe("compaction rides the conversation's prompt cache", () => {
  it("a compaction request repeats the preceding request's tools, system prompt and (pruned) history byte for byte, then the instruction", async () => {
    const { w, pod } = await threeLookups(compactResponder({ summary: SUMMARY }));
    const before = w.double.requests.at(-1) as CapturedRequest;
    // Prune is in force: the oldest lookup's output is no longer sent.
    expect(before.rawBody).not.toContain("alpha: data");
    expect(await pod.compact()).toMatchObject({ status: "compacted" });

    const [compaction] = compactRequests(w.double.requests);
    if (compaction === undefined) throw new Error("no compaction request");
    const sent = before.body as Body;
    const asked = compaction.body as Body;
    expect(bytes(asked.tools)).toBe(bytes(sent.tools));
    expect(asked.tools.map((tool: { name: string }) => tool.name)).toContain("write_summary");
    expect(bytes(asked.system)).toBe(bytes(sent.system));
    expect(bytes(asked.messages.slice(0, sent.messages.length))).toBe(bytes(sent.messages));
    // Appended: the answer committed after that request, then the instruction as the newest user turn.
    expect(asked.messages).toHaveLength(sent.messages.length + 2);
    expect(bytes(asked.messages.at(-2))).toContain("gamma found");
    expect(asked.messages.at(-1).role).toBe("user");
    expect(bytes(asked.messages.at(-1))).toContain(COMPACTION_INSTRUCTION_MARK);

    // Billed as Anthropic would: the compaction request reads everything the request before it sent.
    const report = simulatePromptCache(w.double.requests, "anthropic");
    const at = w.double.requests.indexOf(compaction);
    const previous = report.requests[at - 1];
    expect(report.requests[at]?.cacheReadTokens).toBeGreaterThanOrEqual(previous?.inputTokens ?? Infinity);
    // The worker's second request (after write_summary) reads the first one whole.
    expect(report.requests[at + 1]?.cacheReadTokens).toBeGreaterThanOrEqual(
      report.requests[at]?.inputTokens ?? 0,
    );
  });

  it("a compaction tool the model calls in a normal turn gets the refusal as an error result, and nothing else happens", async () => {
    const w = await world({
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000 }),
      double: { respond: compactResponder({ summary: SUMMARY }) },
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("write_summary", { summary: "sneaky" }), text("carrying on"));
    const handle = pod.run("hello");
    const events = await eventsOf(handle);
    expect(await handle).toMatchObject({ status: "finished", text: "carrying on" });

    const [result] = toolResults(w.double.requests[1] as CapturedRequest);
    expect(result).toMatchObject({ name: "write_summary", isError: true });
    expect(result?.text).toContain("write_summary is only available while the runtime compacts the session");
    expect(compactRequests(w.double.requests)).toHaveLength(0);
    expect(events.some((event) => event.type.startsWith("compaction"))).toBe(false);
    const segments = await readAllSegments(w.workspace);
    expect(segments.size).toBe(1);
    const history = pod.history.filter((item) => item.type === "tool_result");
    expect(history).toMatchObject([{ is_error: true }]);
    expect(JSON.stringify(pod.history)).not.toContain("[Compacted context summary]");
  });

  it("a pod tool the model calls during a compaction is refused without running; the compaction goes on", async () => {
    const calls: string[] = [];
    const w = await world({
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 10 }),
      toolPackages: [testTools({ deploy: () => "deployed" }, calls)],
      double: {
        respond: compactResponder({
          script: [toolCall("deploy"), toolCall("write_summary", { summary: SUMMARY }), text("done")],
        }),
      },
    });
    const pod = await w.pod();
    for (const turn of [1, 2, 3]) {
      w.double.enqueue(text(`answer ${turn}`));
      await pod.run(`question ${turn}`);
    }
    expect(await pod.compact()).toMatchObject({ status: "compacted" });
    expect(calls).toEqual([]);
    const last = compactRequests(w.double.requests).at(-1) as CapturedRequest;
    const results = toolResults(last);
    expect(results.map((result) => [result.name, result.isError])).toEqual([
      ["deploy", true],
      ["write_summary", false],
    ]);
    expect(results[0]?.text).toContain("deploy is not available while you compact the conversation");

    // Positive control: the same tool runs in a normal turn.
    w.double.enqueue(toolCall("deploy"), text("ok"));
    await pod.run("deploy now");
    expect(calls).toEqual(["deploy"]);
  });

  it("after compaction the new segment and a restore are what they were: summary first, the tail verbatim, the same tool list", async () => {
    const { w, pod } = await threeLookups(compactResponder({ summary: SUMMARY }));
    const old = [...pod.history];
    const from = pod.segmentId;
    const outcome = await pod.compact();
    expect(outcome).toMatchObject({ status: "compacted", fromSegmentId: from });

    const segments = await readAllSegments(w.workspace);
    const started = [...segments.values()].map((entries) => entries[0]);
    const next = started.find(
      (entry) => entry?.kind === "segment_start" && entry.compacted_from !== undefined,
    );
    if (next?.kind !== "segment_start") throw new Error("no compacted segment");
    expect(next.compacted_from).toEqual({ segment_id: from, at_turn: 3 });
    const history = next.history as Item[];
    expect(history[0]).toEqual({
      type: "message",
      role: "user",
      content: [
        { type: "text", text: pod.catalog.render("compacted_context_summary", { summary: SUMMARY }) },
      ],
    });
    // The retained tail is the old history's end, verbatim (tool output included).
    const tail = history.slice(1);
    expect(tail.length).toBeGreaterThan(0);
    expect(tail).toEqual(old.slice(old.length - tail.length));
    expect(pod.history).toEqual(history);

    const restored = await w.restore(pod.sessionId as string);
    expect(restored.segmentId).toBe(pod.segmentId);
    expect(restored.history).toEqual(pod.history);
    w.double.enqueue(text("still here"));
    await restored.run("and now?");
    const mains = mainRequests(w.double.requests);
    const first = mains[0]?.body as Body;
    const afterRestore = mains.at(-1)?.body as Body;
    expect(bytes(afterRestore.tools)).toBe(bytes(first.tools));
    expect(JSON.stringify(afterRestore.messages[0])).toContain(SUMMARY);
  });

  it("without [compaction] the pod's list stays as it is; pod.compact() adds the compaction tools to its own request (a cold start there)", async () => {
    const w = await world({ double: { respond: compactResponder({ summary: SUMMARY }) } });
    const pod = await w.pod();
    // Long answers: more than the default retained_tokens (8000) of history.
    for (const turn of [1, 2, 3]) {
      w.double.enqueue(text(`answer ${turn} ${"words ".repeat(3000)}`));
      await pod.run(`question ${turn}`);
    }
    const names = (request: CapturedRequest | undefined) =>
      (((request as CapturedRequest).body as Body).tools ?? []).map((tool: { name: string }) => tool.name);
    const before = names(w.double.requests.at(-1));
    expect(before).not.toContain("write_summary");
    expect(await pod.compact()).toMatchObject({ status: "compacted" });
    const asked = names(compactRequests(w.double.requests)[0]);
    expect(asked).toEqual(expect.arrayContaining([...before, "write_summary", "read_session_items"]));
    expect(asked).toHaveLength(before.length + 5);
  });
});
