import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { sniffMedia } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { mcpToolPackage } from "../../src/index.js";
import { loadPackage } from "./support.js";

// A real MCP server's image: @modelcontextprotocol/server-everything's `get-tiny-image` answers
// text, a PNG image block, and text. The image goes out as media, never as base64 in the text.

const EVERYTHING = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);

describe("server-everything's tiny image", () => {
  it("comes back as one PNG media part, with a marker where it stood in the text", async () => {
    const loaded = await loadPackage(
      mcpToolPackage([{ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"] }]),
    );
    expect(loaded.names).toContain("mcp__everything__get-tiny-image");
    const output = await loaded.call("mcp__everything__get-tiny-image", {});
    expect(output.is_error).toBeUndefined();
    expect(output.media).toHaveLength(1);
    const data = output.media?.[0]?.data ?? new Uint8Array();
    expect(sniffMedia(data)).toEqual({ mediaType: "image/png", width: 20, height: 20 });
    const text = `${output.summary}\n${output.content ?? ""}`;
    expect(text).toContain("Here's the image you requested:");
    expect(text).toMatch(/\[image: image\/png, \d+ bytes; attached\]/);
    expect(text).not.toContain(Buffer.from(data).toString("base64").slice(0, 40));
  }, 60_000);
});
