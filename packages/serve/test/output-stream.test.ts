import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, SessionLog } from "@podkit/session-store";
import type { ScriptedResponse } from "@podkit/testkit";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { SessionFeed } from "../src/feed/session-feed.js";
import { sseStream } from "../src/feed/sse-response.js";
import { DraftBoard } from "../src/runs/draft-board.js";
import { useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse, type SseEvent } from "./support/sse-client.js";

// A typed answer as it streams (docs/output.md, "Streaming"), over HTTP: `event: output.partial` on
// a session's event stream, `data-output-partial` / `data-output` parts in the UI message stream.

const world = useServeWorlds();

const SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: {
      type: "array",
      items: {
        type: "object",
        properties: { line: { type: "integer" }, note: { type: "string" } },
        required: ["line", "note"],
      },
    },
  },
  required: ["verdict", "findings"],
};

const ANSWER = {
  verdict: "reject",
  findings: [
    { line: 12, note: "a note, with [brackets] and {braces}" },
    { line: 40, note: "second" },
    { line: 77, note: "third" },
  ],
};

const answer = (args: unknown, id: string, chunkSize?: number): ScriptedResponse => ({
  parts: [
    {
      type: "tool_call",
      id,
      name: "final_answer",
      arguments: args as Record<string, unknown>,
      ...(chunkSize === undefined ? {} : { chunkSize }),
    },
  ],
});

async function typedWorld() {
  const w = await world({ manifestExtra: '[output]\nschema = "answer.schema.json"' });
  await writeFile(join(w.workspace, ".podkit", "answer.schema.json"), JSON.stringify(SCHEMA));
  return w;
}

interface PartialFrame {
  segment: string;
  after: number;
  callId: string;
  partial: Record<string, unknown>;
  elements: { property: string; index: number; value: unknown; valid: boolean }[];
}

const partialsOf = (events: readonly SseEvent[]) =>
  events.filter((e) => e.event === "output.partial").map((e) => JSON.parse(e.data) as PartialFrame);

describe("GET /sessions/:id/events: output.partial", () => {
  it("partials arrive in order, each element once, and the last equals the final answer", async () => {
    const w = await typedWorld();
    w.double.enqueue(
      answer({ verdict: "approve", findings: [] }, "call_first"),
      answer(ANSWER, "call_streamed", 6),
    );
    const first = await http(w.url("/sessions"), { json: { message: "first", wait: true } });
    const { sessionId } = first.body as { sessionId: string };
    const stream = await openSse(w.url(`/sessions/${sessionId}/events`));
    await stream.waitFor((e) => e.event === "live");
    const partialsBefore = partialsOf(stream.events).length;

    await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "review it" } });
    await stream.waitFor(
      (_, all) => entriesOf(all).filter((x) => x.entry.kind === "run_completed").length === 2,
    );
    stream.close();

    // Nothing of the first turn's answer is replayed: partials are for the response streaming now.
    expect(partialsBefore).toBe(0);
    const partials = partialsOf(stream.events);
    expect(partials.length).toBeGreaterThan(3);
    expect(new Set(partials.map((p) => p.callId))).toEqual(new Set(["call_streamed"]));
    const counts = partials.map((p) => (Array.isArray(p.partial.findings) ? p.partial.findings.length : 0));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(partials.flatMap((p) => p.elements)).toEqual(
      ANSWER.findings.map((value, index) => ({
        property: "findings",
        index,
        value,
        valid: true,
        issues: [],
      })),
    );
    const outputs = entriesOf(stream.events).filter(
      (e) => e.entry.kind === "extension" && e.entry.domain === "final_output",
    );
    const final = outputs.at(-1)?.entry.payload as { value: unknown; call_id: string };
    expect(final).toMatchObject({ call_id: "call_streamed" });
    expect(partials.at(-1)?.partial).toEqual(final.value);
    // On the wire the last partial precedes the entry that records the answer.
    const lastPartial = stream.events.findLastIndex((e) => e.event === "output.partial");
    const recorded = stream.events.findIndex((e) => e.raw === outputs.at(-1)?.raw);
    expect(lastPartial).toBeLessThan(recorded);
    // Each names the response it belongs to: the segment and the entries committed before it began.
    expect(new Set(partials.map((p) => `${p.segment}:${p.after}`)).size).toBe(1);
  });

  it("a client that saw an answer begin gets its last partial, even when the run ended before it read again", async () => {
    const root = await mkdtemp(join(tmpdir(), "podkit-serve-partial-"));
    const store = new FsStore<Item>({ root });
    try {
      const log = await SessionLog.create(store, { systemPrompt: "test", config: {} });
      const { sessionId, segmentId } = log.state;
      const drafts = new DraftBoard();
      const feed = await SessionFeed.open(store, sessionId, drafts);
      const reader = sseStream(feed, feed.start(undefined), { keepaliveMs: 60_000, onClose: () => {} })
        .pipeThrough(new TextDecoderStream())
        .getReader();
      const readUntil = async (text: string) => {
        let got = "";
        while (!got.includes(text)) got += (await reader.read()).value ?? "";
        return got;
      };
      await readUntil("event: live");
      const partial = (value: Record<string, unknown>) => ({
        type: "output_partial" as const,
        callId: "call_1",
        partial: value,
        elements: [],
      });
      drafts.begin(sessionId, segmentId, 1);
      drafts.output(sessionId, partial({ verdict: "app" }));
      expect(await readUntil("event: output.partial")).toContain('"partial":{"verdict":"app"}');
      // The answer completes and the run ends (the preview is cleared) before this client reads again.
      drafts.output(sessionId, partial({ verdict: "approve" }));
      drafts.clear(sessionId);
      const rest = await readUntil("event: output.partial");
      expect(rest).toContain('"partial":{"verdict":"approve"}');
      // Nothing more of that answer: a client connecting now gets no preview of it.
      await reader.cancel();
      const late = sseStream(feed, feed.start(undefined), { keepaliveMs: 60_000, onClose: () => {} })
        .pipeThrough(new TextDecoderStream())
        .getReader();
      let replay = "";
      while (!replay.includes("event: live")) replay += (await late.read()).value ?? "";
      drafts.begin(sessionId, segmentId, 1);
      replay += (await late.read()).value ?? "";
      expect(replay).not.toContain("output.partial");
      await late.cancel();
      feed.close();
    } finally {
      await store.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("POST /chat: data-output-partial and data-output parts", () => {
  it("streams the answer as one data part replaced in place, then the checked answer", async () => {
    const w = await typedWorld();
    w.double.enqueue(answer(ANSWER, "call_ui", 7));
    const transport = new DefaultChatTransport<UIMessage>({ api: w.url("/chat") });
    const stream: ReadableStream<UIMessageChunk> = await transport.sendMessages({
      chatId: "chat-1",
      messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "review it" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const [forChunks, forMessage] = stream.tee();
    const chunks: UIMessageChunk[] = [];
    const reading = (async () => {
      for await (const chunk of forChunks) chunks.push(chunk);
    })();
    let message: UIMessage | undefined;
    for await (const state of readUIMessageStream({ stream: forMessage, terminateOnError: true }))
      message = state;
    await reading;

    const partials = chunks.filter((c) => c.type === "data-output-partial") as {
      id: string;
      data: { callId: string; partial: Record<string, unknown>; elements: { index: number }[] };
    }[];
    expect(partials.length).toBeGreaterThan(3);
    expect(partials.every((p) => p.id === "call_ui" && p.data.callId === "call_ui")).toBe(true);
    const final = chunks.find((c) => c.type === "data-output") as { data: unknown } | undefined;
    expect(final?.data).toEqual(ANSWER);
    expect(partials.at(-1)?.data.partial).toEqual(ANSWER);
    // Elements accumulate: each chunk carries every element completed so far.
    expect(partials.at(-1)?.data.elements.map((e) => e.index)).toEqual([0, 1, 2]);
    // The message keeps one partial part (the last), and the answer.
    const parts = message?.parts ?? [];
    expect(parts.filter((p) => p.type === "data-output-partial")).toEqual([
      { type: "data-output-partial", id: "call_ui", data: partials.at(-1)?.data },
    ]);
    expect(parts.filter((p) => p.type === "data-output")).toEqual([{ type: "data-output", data: ANSWER }]);
    // The answer comes before the message's finish.
    const order = chunks.map((c) => c.type);
    expect(order.indexOf("data-output")).toBeLessThan(order.indexOf("finish"));
  });
});
