import { symlink, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { requestMedia } from "@podkit/testkit";
import { beforeEach, describe, expect, it } from "vitest";
import { noisePng, ONE_PIXEL_GIF, onePagePdf } from "../../../test-support/media-files.js";
import { MINIMAL, modelCalls, type PodTools, podTools, startDouble, tempRoot } from "./helpers.js";

// read_file on images and PDFs (docs/media.md): recognised by the bytes' own signature, returned as
// media in memory (never base64 text), under the same scope and canonical-path rules as text.

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;

const JPEG_1X1 = Buffer.from(
  "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
  "base64",
);
const WEBP_37X21 = Buffer.from("UklGRh4AAABXRUJQVlA4TBEAAAAvJAAFEAdQmkrUqoCBiOh/AAA=", "base64");

beforeEach(async () => {
  t = await tempRoot();
  ws = t.path("ws");
  const manifest = await t.write(
    "ws/pod.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n[[scope.deny]]\ntarget = "private"\npermission = "read"\n`,
  );
  await t.write("outside/secret.png", "");
  await writeFile(t.path("outside/secret.png"), noisePng(4, 4, 11));
  tools = await podTools(manifest, ws);
});

describe("read_file on an image or a PDF", () => {
  it.each([
    ["shot.png", noisePng(120, 90), "image/png", "shot.png: image/png 120×90, 32 KB (attached)"],
    ["pixel.gif", ONE_PIXEL_GIF, "image/gif", "pixel.gif: image/gif 1×1, 1 KB (attached)"],
    ["photo.jpg", JPEG_1X1, "image/jpeg", "photo.jpg: image/jpeg 1×1, 1 KB (attached)"],
    ["logo.webp", WEBP_37X21, "image/webp", "logo.webp: image/webp 37×21, 1 KB (attached)"],
    ["paper.pdf", onePagePdf(), "application/pdf", "paper.pdf: application/pdf, 1 KB (attached)"],
  ])("%s comes back as media with the file's bytes", async (name, bytes, mediaType, summary) => {
    await writeFile(join(ws, name), bytes);
    const output = await tools.call("read_file", { path: name });
    expect(output.is_error).toBeUndefined();
    expect(output.summary).toBe(summary);
    expect(output.content).toBeUndefined();
    expect(output.media?.map((part) => [part.mediaType, part.name])).toEqual([[mediaType, name]]);
    expect(Buffer.from(output.media?.[0]?.data ?? []).equals(bytes)).toBe(true);
  });

  it("goes by the bytes, not the name: a renamed PNG is an image, a .png holding text is text", async () => {
    await writeFile(join(ws, "renamed.txt"), noisePng(8, 8));
    await writeFile(join(ws, "fake.png"), "not an image\n");
    expect((await tools.call("read_file", { path: "renamed.txt" })).media?.[0]?.mediaType).toBe("image/png");
    const fake = await tools.call("read_file", { path: "fake.png" });
    expect(fake.media).toBeUndefined();
    expect(fake.content).toBe("     1\tnot an image");
  });

  it("keeps the scope: a denied image, and a symlink to one outside it, are refused without bytes", async () => {
    await t.write("ws/private/face.png", "");
    await writeFile(join(ws, "private/face.png"), noisePng(4, 4));
    await symlink("../outside/secret.png", join(ws, "link.png"));
    for (const path of ["private/face.png", "link.png", t.path("outside/secret.png")]) {
      const output = await tools.call("read_file", { path });
      expect(output.is_error, path).toBe(true);
      expect(output.media, path).toBeUndefined();
    }
  });

  it("refuses an image over read_file's 16 MiB cap before reading it", async () => {
    await writeFile(join(ws, "huge.png"), noisePng(2, 2));
    await truncate(join(ws, "huge.png"), 16 * 1024 * 1024 + 1);
    const output = await tools.call("read_file", { path: "huge.png" });
    expect(output.is_error).toBe(true);
    expect(output.summary).toMatch(/more than read_file reads/);
    expect(output.media).toBeUndefined();
  });

  it("reaches the model through a real worker as an image block, and history holds only its digest", async () => {
    const png = noisePng(64, 48, 5);
    await writeFile(join(ws, "shot.png"), png);
    const double = await startDouble();
    const results = await modelCalls(double, tools.server, [
      { name: "read_file", arguments: { path: "shot.png" } },
    ]);
    expect(results[0].media).toEqual([
      expect.objectContaining({ media_type: "image/png", bytes: png.length, width: 64, height: 48 }),
    ]);
    const blocks = requestMedia(double.requests[1] as (typeof double.requests)[number], "anthropic");
    expect(blocks.map((block) => block.in)).toEqual(["tool_result"]);
    expect(Buffer.from(blocks[0]?.data ?? []).equals(png)).toBe(true);
    expect(JSON.stringify(results)).not.toContain(png.toString("base64").slice(0, 64));
  });
});
