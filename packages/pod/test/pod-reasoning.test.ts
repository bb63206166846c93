import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { eventsOf } from "./compaction-harness.js";
import { text, usePodWorlds } from "./pod-harness.js";

// Reasoning streamed on the Anthropic wire (the pod's default in these tests) through the real AI
// SDK adapter: the pod passes it on as `reasoning_delta` events, and the next request carries it
// only as the provider requires — a signed `thinking` block, never as text.
const world = usePodWorlds();
const THOUGHT = "First I consider the question, then I weigh both options, and finally I decide.";

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;

/** Every content block of every message in the request, with the message's role. */
function blocks(request: CapturedRequest | undefined): { role: string; type: string; block: Body }[] {
  const out: { role: string; type: string; block: Body }[] = [];
  for (const message of (request?.body as Body)?.messages ?? []) {
    const content =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    for (const block of content) out.push({ role: message.role, type: block.type, block });
  }
  return out;
}

async function turnWithReasoning(signature: string | undefined) {
  const w = await world();
  const pod = await w.pod();
  w.double.enqueue(
    {
      parts: [
        {
          type: "reasoning",
          text: THOUGHT,
          chunkSize: 12,
          ...(signature === undefined ? {} : { signature }),
        },
        { type: "text", text: "the answer" },
      ],
    },
    text("second answer"),
  );
  const events = await eventsOf(pod.run("which option?"));
  await pod.run("and then?");
  return { events, next: w.double.requests[1] };
}

describe("reasoning through the pod (Anthropic wire)", () => {
  it("scripted reasoning shows as reasoning_delta events, in order and before the answer text", async () => {
    const { events } = await turnWithReasoning("sig-1");
    const deltas = events.flatMap((event) => (event.type === "reasoning_delta" ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(THOUGHT);
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf("reasoning_delta")).toBeLessThan(types.indexOf("text_delta"));
  });

  it("the next request carries the signed reasoning as a thinking block (Anthropic requires it), never as text", async () => {
    const { next } = await turnWithReasoning("sig-1");
    const all = blocks(next);
    const thinking = all.filter((entry) => entry.type === "thinking");
    expect(thinking).toEqual([
      {
        role: "assistant",
        type: "thinking",
        block: expect.objectContaining({ thinking: THOUGHT, signature: "sig-1" }),
      },
    ]);
    const texts = all.filter((entry) => entry.type === "text").map((entry) => JSON.stringify(entry.block));
    expect(texts.some((value) => value.includes("the answer"))).toBe(true);
    expect(texts.some((value) => value.includes(THOUGHT))).toBe(false);
  });

  it("unsigned reasoning (nothing the provider needs back) is left out of the next request", async () => {
    const { events, next } = await turnWithReasoning(undefined);
    expect(events.some((event) => event.type === "reasoning_delta")).toBe(true);
    expect(JSON.stringify(next?.body)).toContain("the answer");
    expect(JSON.stringify(next?.body)).not.toContain(THOUGHT);
  });
});
