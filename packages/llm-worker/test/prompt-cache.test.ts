import { simulatePromptCache, type Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { textMessage } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

const SYSTEM_PROMPT = `You are a careful reviewer.\n${"Follow the house rules for every change. ".repeat(200)}`;

describe("prompt stability over a 10-turn tool session", () => {
  it.each(WIRES)(
    "%s: identical system prompt bytes and tool order on every request; cache share reported",
    async (wire: Wire) => {
      const double = await startDouble(wire);
      const read = recordingTool("read_file", {
        content: (text) => `contents of ${text}\n${"line\n".repeat(300)}`,
      });
      const grep = recordingTool("grep");
      const write = recordingTool("write_file");
      for (let turn = 0; turn < 10; turn++) {
        double.enqueue(
          {
            parts: [
              {
                type: "tool_call",
                name: ["read_file", "grep", "write_file"][turn % 3] as string,
                arguments: { text: `f${turn}` },
              },
            ],
          },
          { parts: [{ type: "text", text: `Turn ${turn} done.` }] },
        );
      }
      const { worker } = workerFor(double, {
        systemPrompt: SYSTEM_PROMPT,
        tools: toolServer(write.tool, read.tool, grep.tool),
      });

      for (let turn = 0; turn < 10; turn++) {
        const result = await worker.run(`Please do step ${turn}.`);
        expect(result.status).toBe("finished");
      }

      const view = VIEWS[wire];
      const requests = bodies(double);
      expect(requests).toHaveLength(20);
      const systemBytes = requests.map((body) => Buffer.from(view.systemText(body), "utf8"));
      for (const bytes of systemBytes) expect(bytes.equals(Buffer.from(SYSTEM_PROMPT, "utf8"))).toBe(true);
      const toolsJson = requests.map((body) => JSON.stringify(body.tools));
      expect(new Set(toolsJson).size).toBe(1);
      expect(view.toolNames(requests[0])).toEqual(["grep", "read_file", "write_file"]);

      const report = simulatePromptCache(double.requests, wire);
      console.log(
        `prompt cache (${wire}, 10 turns, 20 requests): cachedShare=${report.cachedShare.toFixed(3)} ` +
          `input=${report.totals.inputTokens} read=${report.totals.cacheReadTokens} write=${report.totals.cacheWriteTokens}`,
      );
      expect(report.requests.slice(1).every((r) => r.cacheReadTokens > 0)).toBe(true);
      expect(report.cachedShare).toBeGreaterThan(0.7);
    },
  );

  it("anthropic: breakpoints sit on the system prompt, the previous request's last item and the newest item", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "plan", signature: "s1" },
          { type: "tool_call", name: "echo", arguments: { text: "a" } },
        ],
      },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker } = workerFor(double, { tools: toolServer(echo.tool), config: { reasoning: 1024 } });

    await worker.run("go");

    const second = bodies(double)[1];
    const marked: string[] = [];
    for (const part of second.system) if (part.cache_control) marked.push(`system:${part.text.slice(0, 10)}`);
    for (const message of second.messages) {
      for (const part of message.content) if (part.cache_control) marked.push(`${message.role}:${part.type}`);
    }
    expect(marked).toEqual(["system:You are a ", "user:text", "user:tool_result"]);
    expect(marked.length).toBeLessThanOrEqual(4);
  });

  it("anthropic: a worker restored with previousRequestLength sends the bytes the worker that never stopped sends", async () => {
    const script = (double: Awaited<ReturnType<typeof startDouble>>) =>
      double.enqueue(
        { parts: [{ type: "tool_call", id: "toolu_a", name: "echo", arguments: { text: "a" } }] },
        { parts: [{ type: "text", text: "first" }] },
        { parts: [{ type: "text", text: "second" }] },
      );
    const continuous = await startDouble("anthropic");
    script(continuous);
    const original = workerFor(continuous, { tools: toolServer(recordingTool("echo").tool) }).worker;
    const usage: number[] = [];
    original.subscribe((event) => {
      if (event.type === "usage") usage.push(event.usage.historyLen);
    });
    await original.run("one");
    await original.run("two");

    // The same conversation, stopped after turn one and rebuilt from its history and usage.
    const restoredDouble = await startDouble("anthropic");
    script(restoredDouble);
    const before = workerFor(restoredDouble, { tools: toolServer(recordingTool("echo").tool) }).worker;
    await before.run("one");
    const restore = (previousRequestLength?: number) =>
      workerFor(restoredDouble, {
        tools: toolServer(recordingTool("echo").tool),
        history: before.history,
        ...(previousRequestLength === undefined ? {} : { previousRequestLength }),
      }).worker;
    await restore(usage[1]).run("two");
    expect(restoredDouble.requests.map((r) => r.rawBody)).toEqual(continuous.requests.map((r) => r.rawBody));

    // Without it the first request after the restore loses the breakpoint the previous one wrote.
    restoredDouble.enqueue({ parts: [{ type: "text", text: "second" }] });
    await restore().run("two");
    expect(restoredDouble.requests.at(-1)?.rawBody).not.toBe(continuous.requests.at(-1)?.rawBody);
  });

  it("anthropic: a stable prefix named by continue_with keeps a breakpoint, so a request that rewrote what follows still reads it", async () => {
    const LONG = "an answer long enough to be worth caching. ".repeat(40);
    const TURNS = 14;
    const session = async (stablePrefixEnd: number | undefined) => {
      const double = await startDouble("anthropic");
      for (let turn = 0; turn < TURNS; turn++)
        double.enqueue({ parts: [{ type: "text", text: `${turn} ${LONG}` }] });
      const { worker } = workerFor(double);
      const shortened = textMessage("assistant", "short");
      worker.setInterceptor({
        // The last request sends item #3 (the second answer) shortened, as a prune step would: more than
        // Anthropic's 20-block lookback lies between it and the breakpoints of the previous request.
        preRequest: ({ items }) => ({
          action: "continue_with",
          items: items.map((item, index) => (index === 3 && items.length > 2 * TURNS - 2 ? shortened : item)),
          ...(stablePrefixEnd === undefined ? {} : { stablePrefixEnd }),
        }),
      });
      for (let turn = 0; turn < TURNS; turn++) await worker.run(`question ${turn}`);
      return simulatePromptCache(double.requests, "anthropic").requests.at(-1);
    };
    const withStable = await session(2);
    const without = await session(undefined);
    // Without the breakpoint only the system prompt is found; with it, the first three items are read too.
    expect(without?.cacheReadTokens).toBeLessThan(20);
    expect(withStable?.cacheReadTokens).toBeGreaterThan((without?.cacheReadTokens ?? 0) + 400);
  });
});
