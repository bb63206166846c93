// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { type CapturedRequest, requestMedia, type Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { noisePng, ONE_PIXEL_GIF, onePagePdf } from "../../../test-support/media-files.js";
import {
  type Item,
  MEDIA_CAPABILITIES,
  type MediaRef,
  MemoryMediaStore,
  sniffMedia,
  type Tool,
  type ToolMedia,
} from "../src/index.js";
import { NO_MEDIA } from "../src/media/capabilities.js";
import { planRequestMedia } from "../src/media/request-media.js";
import { startDouble, toolServer, workerFor } from "./helpers.js";

// Media in tool results (docs/media.md), through the real AI SDK adapters and the provider double:
// a tool's image reaches Anthropic, OpenAI Responses and Gemini as an image block inside the tool
// result, and OpenAI Chat as one message after the results (never as base64 text); history holds
// digests only; each digest is sent once per request.

const png = noisePng(120, 90, 3);
const base64 = png.toString("base64");

function screenshotTool(media: () => ToolMedia[] = () => [{ mediaType: "image/png", data: png }]): Tool {
  return {
    name: "screenshot",
    description: "Takes a screenshot.",
    inputSchema: z.object({}),
    execute: () => ({ summary: "screenshot taken", media: media() }),
  };
}

const call = (id: string) => ({
  parts: [{ type: "tool_call" as const, name: "screenshot", arguments: {}, id }],
});
const answer = { parts: [{ type: "text" as const, text: "I see a screenshot." }] };

async function screenshotRun(wire: Wire, tool = screenshotTool(), calls: string[] = ["call_1"]) {
  const double = await startDouble(wire);
  double.enqueue({ parts: calls.flatMap((id) => call(id).parts) }, answer);
  const { worker, persisted, events } = workerFor(double, { tools: toolServer(tool) });
  const result = await worker.run("Take a screenshot and tell me what you see.");
  expect(result.status).toBe("finished");
  return { double, worker, persisted, events, second: double.requests[1] as CapturedRequest };
}

describe("a tool's image reaches the model as an image, never as text", () => {
  it.each(["anthropic", "openai-responses", "google"] as const)(
    "%s: an image block inside the tool result, the bytes the tool returned",
    async (wire) => {
      const { second, persisted } = await screenshotRun(wire);
      const blocks = requestMedia(second, wire);
      expect(blocks.map(({ in: where, callId, mediaType }) => ({ where, callId, mediaType }))).toEqual([
        { where: "tool_result", callId: "call_1", mediaType: "image/png" },
      ]);
      expect(Buffer.from(blocks[0]?.data ?? []).equals(png)).toBe(true);
      // Once, as the block: base64 inside a text would be a second copy.
      expect(second.rawBody.split(base64).length - 1).toBe(1);
      expect(second.rawBody.length).toBeLessThan(2 * png.length);
      const result = persisted.find((item) => item.type === "tool_result");
      expect(result).toMatchObject({
        summary: "screenshot taken",
        media: [{ type: "media", media_type: "image/png", bytes: png.length, width: 120, height: 90 }],
      });
      expect(JSON.stringify(persisted)).not.toContain(base64.slice(0, 64));
    },
  );

  it("openai-chat: the tool message is a short text, and one user message after it carries the image", async () => {
    const { second, persisted } = await screenshotRun("openai-chat");
    const messages = second.body.messages as any[];
    const tool = messages.findIndex((message) => message.role === "tool");
    expect(messages[tool].content).toBe(
      "screenshot taken\n[image/png 120×90: in the message after the tool results]",
    );
    expect(messages[tool + 1].role).toBe("user");
    const blocks = requestMedia(second, "openai-chat");
    expect(blocks.map(({ in: where, role }) => ({ where, role }))).toEqual([
      { where: "message", role: "user" },
    ]);
    expect(Buffer.from(blocks[0]?.data ?? []).equals(png)).toBe(true);
    expect(second.rawBody.split(base64).length - 1).toBe(1);
    expect(second.rawBody.length).toBeLessThan(2 * png.length);
    // The message is committed after the results, so a replay sends it too.
    const types = persisted.map((item) =>
      item.type === "message" ? `${item.type}:${item.role}` : item.type,
    );
    expect(types).toEqual([
      "message:user",
      "tool_call",
      "tool_result",
      "message:system",
      "message:assistant",
    ]);
    const attachment = persisted[3] as Extract<Item, { type: "message" }>;
    expect(attachment.media).toEqual((persisted[2] as Extract<Item, { type: "tool_result" }>).media);
    expect(attachment.content[0]?.text).toBe("[The file returned by the tool calls above: image/png 120×90]");
    expect(JSON.stringify(persisted)).not.toContain(base64.slice(0, 64));
  });

  it("anthropic: the same image from two calls is sent once; the second place says it is the same", async () => {
    const { second, persisted } = await screenshotRun("anthropic", screenshotTool(), ["call_1", "call_2"]);
    const blocks = requestMedia(second, "anthropic");
    expect(blocks.map((block) => block.callId)).toEqual(["call_1"]);
    const results = second.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
    const repeated = results.find(
      (part: any) => part.type === "tool_result" && part.tool_use_id === "call_2",
    );
    expect(repeated.content).toBe("screenshot taken\n[image/png 120×90: the same file as shown above]");
    const digests = persisted.flatMap((item) => (item.type === "tool_result" ? (item.media ?? []) : []));
    expect(new Set(digests.map((ref) => ref.digest)).size).toBe(1);
  });

  it("openai-chat: two calls of a batch get one message after their results, each image in it once", async () => {
    const other = noisePng(40, 30, 9);
    let n = 0;
    const tool = screenshotTool(() => [{ mediaType: "image/png", data: n++ === 0 ? png : other }]);
    const { second, persisted } = await screenshotRun("openai-chat", tool, ["call_1", "call_2"]);
    const roles = (second.body.messages as any[]).map((message) => message.role);
    expect(roles.slice(-4)).toEqual(["assistant", "tool", "tool", "user"]);
    expect(requestMedia(second, "openai-chat").map((block) => block.data.length)).toEqual([
      png.length,
      other.length,
    ]);
    expect(persisted.filter((item) => item.type === "message" && item.media !== undefined)).toHaveLength(1);
  });

  it("a part whose bytes are not an image is refused by its signature, whatever the tool calls it", async () => {
    const fake = Buffer.from("#!/bin/sh\necho not an image\n");
    const tool = screenshotTool(() => [{ mediaType: "image/png", data: fake }]);
    const { second, persisted } = await screenshotRun("anthropic", tool);
    expect(requestMedia(second, "anthropic")).toEqual([]);
    const result = persisted.find((item) => item.type === "tool_result");
    expect(result).toMatchObject({
      summary: "screenshot taken\n[image/png not shown: its bytes are not an image or PDF podkit reads]",
    });
    expect(result).not.toHaveProperty("media");
  });

  it("a restored history whose media the store has lost gets a note in their place, and a warning", async () => {
    const double = await startDouble("anthropic");
    double.enqueue(answer);
    const lost: MediaRef = {
      type: "media",
      media_type: "image/png",
      digest: `sha256:${"ab".repeat(32)}`,
      bytes: 1000,
      width: 10,
      height: 10,
    };
    const history: Item[] = [
      { type: "message", role: "user", content: [{ type: "text", text: "look" }] },
      { type: "tool_call", call_id: "call_1", name: "screenshot", arguments: "{}" },
      { type: "tool_result", call_id: "call_1", summary: "screenshot taken", media: [lost] },
    ];
    const { worker, events } = workerFor(double, { history, tools: toolServer(screenshotTool()) });
    await worker.resume();
    const results = (double.requests[0] as CapturedRequest).body.messages.flatMap((m: any) =>
      Array.isArray(m.content) ? m.content : [],
    );
    expect(results.find((part: any) => part.type === "tool_result").content).toBe(
      `screenshot taken\n[image/png 10×10: not available, its stored bytes (${lost.digest}) are missing]`,
    );
    expect(events.some((event) => event.type === "warning" && event.message.includes(lost.digest))).toBe(
      true,
    );
  });
});

describe("what a request carries is planned from history alone", () => {
  const ref = (seed: number, bytes = 100): MediaRef => ({
    type: "media",
    media_type: "image/png",
    digest: `sha256:${seed.toString(16).padStart(2, "0").repeat(32)}`,
    bytes,
    width: 4,
    height: 4,
  });
  const result = (id: string, media: MediaRef[]): Item => ({
    type: "tool_result",
    call_id: id,
    summary: id,
    media,
  });
  const bytesOf = (...refs: MediaRef[]) => new Map(refs.map((r) => [r.digest, new Uint8Array(r.bytes)]));

  it("keeps the newest parts within the provider's limit per request and notes the older ones", () => {
    const [a, b, c] = [ref(1), ref(2), ref(3)];
    const items = [
      result("one", [a as MediaRef]),
      result("two", [b as MediaRef]),
      result("three", [c as MediaRef]),
    ];
    const plan = planRequestMedia(
      items,
      { ...MEDIA_CAPABILITIES.anthropic, maxPartsPerRequest: 2 },
      bytesOf(a as MediaRef, b as MediaRef, c as MediaRef),
    );
    expect(plan.get(0)?.sent).toEqual([]);
    expect(plan.get(0)?.notes).toEqual([
      "[image/png 4×4: left out of this request, over what the provider takes in one request]",
    ]);
    expect(plan.get(1)?.sent.map((part) => part.ref.digest)).toEqual([b?.digest]);
    expect(plan.get(2)?.sent.map((part) => part.ref.digest)).toEqual([c?.digest]);
    const byBytes = planRequestMedia(
      items,
      { ...MEDIA_CAPABILITIES.anthropic, maxBytesPerRequest: 250 },
      bytesOf(a as MediaRef, b as MediaRef, c as MediaRef),
    );
    expect([0, 1, 2].map((index) => byBytes.get(index)?.sent.length)).toEqual([0, 1, 1]);
  });

  it("sends nothing on a wire podkit does not know, and says so", () => {
    const a = ref(1);
    const plan = planRequestMedia([result("one", [a])], NO_MEDIA, bytesOf(a));
    expect(plan.get(0)).toEqual({
      sent: [],
      notes: ["[image/png 4×4: not shown, this model takes no images or documents]"],
    });
  });

  it("notes a type the wire does not take (GIF on Gemini) instead of sending it", () => {
    const gif = { ...ref(1), media_type: "image/gif" };
    const plan = planRequestMedia([result("one", [gif])], MEDIA_CAPABILITIES.google, bytesOf(gif));
    expect(plan.get(0)?.notes).toEqual(["[image/gif 4×4: not shown, this model does not take image/gif]"]);
  });

  it("ignores a malformed reference (a hand-edited log) instead of failing the request", () => {
    const broken = {
      type: "tool_result",
      call_id: "x",
      summary: "x",
      media: [{ type: "media", digest: "../../etc" }],
    };
    expect(planRequestMedia([broken as Item], MEDIA_CAPABILITIES.anthropic, new Map()).size).toBe(0);
  });
});

describe("sniffMedia reads a file's own signature", () => {
  it.each([
    ["PNG with its size", noisePng(33, 7), { mediaType: "image/png", width: 33, height: 7 }],
    ["GIF with its size", ONE_PIXEL_GIF, { mediaType: "image/gif", width: 1, height: 1 }],
    [
      "JPEG with its size",
      Buffer.from(
        "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
        "base64",
      ),
      { mediaType: "image/jpeg", width: 1, height: 1 },
    ],
    [
      "lossless WebP with its size",
      Buffer.from("UklGRh4AAABXRUJQVlA4TBEAAAAvJAAFEAdQmkrUqoCBiOh/AAA=", "base64"),
      { mediaType: "image/webp", width: 37, height: 21 },
    ],
    [
      "lossy WebP with its size",
      Buffer.from("UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=", "base64"),
      { mediaType: "image/webp", width: 1, height: 1 },
    ],
    ["PDF", onePagePdf(), { mediaType: "application/pdf" }],
  ])("%s", (_what, bytes, expected) => {
    expect(sniffMedia(bytes)).toEqual(expected);
  });

  it("is undefined for text, an empty file and a truncated PNG signature", () => {
    expect(sniffMedia(Buffer.from("hello"))).toBeUndefined();
    expect(sniffMedia(new Uint8Array())).toBeUndefined();
    expect(sniffMedia(png.subarray(0, 4))).toBeUndefined();
  });
});

describe("MemoryMediaStore, the default of a worker without a store", () => {
  const context = (provider: keyof typeof MEDIA_CAPABILITIES) => ({
    callId: "c",
    toolName: "t",
    capabilities: MEDIA_CAPABILITIES[provider],
    signal: new AbortController().signal,
  });

  it("stores the bytes under their digest and gives them back", async () => {
    const store = new MemoryMediaStore();
    const ref = (await store.put({ mediaType: "image/png", data: png }, context("anthropic"))) as MediaRef;
    expect(ref.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Buffer.from(await store.get(ref.digest)).equals(png)).toBe(true);
  });

  it("refuses an image over the provider's edge: it does not downscale (the pod's store does)", async () => {
    const store = new MemoryMediaStore();
    const wide = noisePng(2049, 1);
    expect(await store.put({ mediaType: "image/png", data: wide }, context("openai"))).toMatch(
      /2049×1 px, larger than this provider takes \(2048 px\)/,
    );
  });
});
