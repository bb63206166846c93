import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { noisePng } from "../../../test-support/media-files.js";
import { requestMedia, type Wire } from "../src/index.js";
import { collect } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { allWires, basicCall, modelFor } from "./support/models.js";

const startDouble = useDoubles();
const reply = { parts: [{ type: "text" as const, text: "ok" }] };
const png = noisePng(8, 6, 7);

/** A tool call, its result with an image inside, then a user message with a second image. */
function promptWithImages(): LanguageModelV3Prompt {
  return [
    { role: "user", content: [{ type: "text", text: "Take a screenshot." }] },
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "a.png" } }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read_file",
          output: {
            type: "content",
            value: [
              { type: "text", text: "a.png" },
              { type: "image-data", data: png.toString("base64"), mediaType: "image/png" },
            ],
          },
        },
      ],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "And this one." },
        { type: "file", data: new Uint8Array(png), mediaType: "image/png" },
      ],
    },
  ];
}

async function send(wire: Wire) {
  const double = await startDouble({ wire, responses: [reply] });
  await collect(
    (await modelFor(wire, double.baseUrl).doStream(basicCall({ prompt: promptWithImages() }))).stream,
  );
  return requestMedia(double.requests[0] as (typeof double.requests)[number], wire);
}

describe("requestMedia reads the image blocks of a captured request", () => {
  it.each(allWires.filter((wire) => wire !== "openai-chat"))(
    "%s: the tool result's image and the message's image, bytes decoded",
    async (wire) => {
      const blocks = await send(wire);
      expect(blocks.map((block) => block.in)).toEqual(["tool_result", "message"]);
      for (const block of blocks) {
        expect(block.mediaType).toBe("image/png");
        expect(Buffer.from(block.data).equals(png)).toBe(true);
      }
      expect(blocks[0]?.callId).toBe("call_1");
    },
  );

  it("openai-chat: only the message's image is a block; the tool result's went out as JSON text", async () => {
    // Why podkit never puts media in a Chat Completions tool result: the AI SDK stringifies them.
    const double = await startDouble({ wire: "openai-chat", responses: [reply] });
    await collect(
      (await modelFor("openai-chat", double.baseUrl).doStream(basicCall({ prompt: promptWithImages() })))
        .stream,
    );
    const request = double.requests[0] as (typeof double.requests)[number];
    expect(requestMedia(request, "openai-chat").map((block) => [block.in, block.role])).toEqual([
      ["message", "user"],
    ]);
    const tool = request.body.messages.find((message: { role: string }) => message.role === "tool");
    expect(typeof tool.content).toBe("string");
    expect(tool.content).toContain(png.toString("base64"));
  });
});
