// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Item, MediaRef } from "@podkit/llm-worker";
import { FsStore, sessionsRoot } from "@podkit/session-store";
import { type CapturedRequest, type ProviderDoubleOptions, requestMedia } from "@podkit/testkit";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { noisePng, onePagePdf } from "../../../test-support/media-files.js";
import type { Pod } from "../src/pod/pod.js";
import { compactionTable } from "./compaction-harness.js";
import { readAllSegments, text, toolCall, usePodWorlds, type World } from "./pod-harness.js";

// Images and PDFs in tool results through the pod (docs/media.md): stored as blobs of the session
// store, fitted to the provider, named by digest in the log (never base64), sent where each wire
// takes them, and replayed byte for byte after a restore.

const world = usePodWorlds();
type Wire = ProviderDoubleOptions["wire"];

const READ = `[[scope.allow]]\ntarget = ".."\npermission = "read"\n`;
/** A 200×150 PNG of noise: about 90 KB that do not compress, so a request's size is the image's. */
const SHOT = noisePng(200, 150, 42);
const SHOT_BASE64 = SHOT.toString("base64");

async function imageWorld(wire: Wire, extra = "", systemPrompt = "You look at screens."): Promise<World> {
  const w = await world({ systemPrompt, manifestExtra: `${READ}${extra}`, double: { wire } });
  await writeFile(join(w.workspace, "shot.png"), SHOT);
  return w;
}

/** The raw text of every segment file of the world's sessions. */
async function rawLogs(w: World): Promise<string> {
  const texts: string[] = [];
  for (const key of (await readAllSegments(w.workspace)).keys()) {
    const [session, segment] = key.split("/") as [string, string];
    texts.push(await readFile(join(sessionsRoot(w.workspace), session, `${segment}.jsonl`), "utf8"));
  }
  return texts.join("");
}

async function blobOf(w: World, digest: string): Promise<Buffer> {
  const store = new FsStore({ root: sessionsRoot(w.workspace) });
  try {
    return Buffer.from(await store.blobs.get(digest));
  } finally {
    await store.close();
  }
}

async function blobCount(w: World): Promise<number> {
  const store = new FsStore({ root: sessionsRoot(w.workspace) });
  let count = 0;
  try {
    for await (const _ of store.blobs.list()) count++;
  } finally {
    await store.close();
  }
  return count;
}

const resultMedia = (pod: Pod): MediaRef[] =>
  pod.history.flatMap((item) => (item.type === "tool_result" ? (item.media ?? []) : []));

async function readShot(w: World, input = "What does shot.png show?") {
  const pod = await w.pod();
  w.double.enqueue(toolCall("read_file", { path: "shot.png" }, "call_shot"), text("A screenshot."));
  expect(await pod.run(input)).toMatchObject({ status: "finished" });
  return { pod, second: w.double.requests[1] as CapturedRequest };
}

describe("read_file of a PNG through the pod", () => {
  it.each(["anthropic", "openai-responses"] as const)(
    "%s: an image block inside the tool result; the log names a blob, never the bytes",
    async (wire) => {
      const w = await imageWorld(wire);
      const { pod, second } = await readShot(w);
      const blocks = requestMedia(second, wire);
      expect(blocks.map(({ in: where, callId }) => ({ where, callId }))).toEqual([
        { where: "tool_result", callId: "call_shot" },
      ]);
      expect(Buffer.from(blocks[0]?.data ?? []).equals(SHOT)).toBe(true);
      expect(second.rawBody.length).toBeLessThan(2 * SHOT.length);
      const [ref] = resultMedia(pod);
      expect(ref).toMatchObject({ media_type: "image/png", bytes: SHOT.length, width: 200, height: 150 });
      expect((await blobOf(w, (ref as MediaRef).digest)).equals(SHOT)).toBe(true);
      const log = await rawLogs(w);
      expect(log).toContain((ref as MediaRef).digest);
      expect(log).not.toContain(SHOT_BASE64.slice(0, 48));
      expect(log).not.toContain(SHOT_BASE64.slice(-48));
    },
  );

  it("openai-chat: a short text in the tool message, then one user message with the image, committed to the log", async () => {
    const w = await imageWorld("openai-chat");
    const { pod, second } = await readShot(w);
    const messages = second.body.messages as any[];
    const tool = messages.findIndex((message) => message.role === "tool");
    expect(messages[tool].content).toMatch(
      /^shot\.png: image\/png 200×150, \d+ KB \(attached\)\n\[image\/png 200×150: in the message after the tool results\]$/,
    );
    expect(messages[tool + 1]).toMatchObject({ role: "user" });
    const blocks = requestMedia(second, "openai-chat");
    expect(blocks.map(({ in: where, role }) => ({ where, role }))).toEqual([
      { where: "message", role: "user" },
    ]);
    expect(Buffer.from(blocks[0]?.data ?? []).equals(SHOT)).toBe(true);
    expect(second.rawBody.split(SHOT_BASE64).length - 1).toBe(1);
    expect(second.rawBody.length).toBeLessThan(2 * SHOT.length);
    // The message is in the log as an attachment, right after the result, naming the same blob.
    const entries = [...(await readAllSegments(w.workspace)).values()][0] ?? [];
    const at = entries.findIndex((entry) => entry.kind === "tool_result");
    const attachment = entries[at + 1] as any;
    expect(attachment).toMatchObject({
      kind: "system_item",
      item: {
        kind: "attachment",
        body: pod.catalog.render("media_attachment", { count: 1, files: "image/png 200×150" }),
        media: resultMedia(pod),
      },
    });
    expect(await rawLogs(w)).not.toContain(SHOT_BASE64.slice(0, 48));
  });

  it("a PDF reaches Anthropic as a document block in the tool result", async () => {
    const w = await imageWorld("anthropic");
    const pdf = onePagePdf("terms");
    await writeFile(join(w.workspace, "terms.pdf"), pdf);
    const pod = await w.pod();
    w.double.enqueue(toolCall("read_file", { path: "terms.pdf" }, "call_pdf"), text("Terms."));
    await pod.run("read terms.pdf");
    const blocks = requestMedia(w.double.requests[1] as CapturedRequest, "anthropic");
    expect(blocks.map(({ in: where, mediaType }) => ({ where, mediaType }))).toEqual([
      { where: "tool_result", mediaType: "application/pdf" },
    ]);
    expect(Buffer.from(blocks[0]?.data ?? []).equals(pdf)).toBe(true);
    expect(resultMedia(pod)).toEqual([
      expect.objectContaining({ media_type: "application/pdf", name: "terms.pdf" }),
    ]);
  });
});

describe("restore and replay", () => {
  /**
   * One session in a fresh world: turn 1 reads the image, turn 2 asks again; with `restore` the
   * pod is restored between them, and shot.png is overwritten first, so bytes read from the file
   * again would differ from what the log's blob holds.
   */
  async function session(wire: Wire, restore: boolean): Promise<string[]> {
    const w = await imageWorld(wire, "", "You look at screens. {{ date }}");
    let { pod } = await readShot(w);
    await writeFile(join(w.workspace, "shot.png"), noisePng(200, 150, 7));
    const sessionId = pod.sessionId as string;
    if (restore) {
      await pod.close();
      pod = await w.restore(sessionId);
    }
    w.double.enqueue(text("Still a screenshot."));
    await pod.run("And now?");
    // Two sessions cannot share their session id (OpenAI's prompt cache key) and temp directory
    // (the scope in the system prompt); everything else must be the same bytes.
    return w.double.requests.map((request) =>
      request.rawBody.split(sessionId).join("<session>").split(w.root).join("<root>"),
    );
  }

  it.each(["anthropic", "openai-responses", "openai-chat"] as const)(
    "%s: a restored session sends byte-identical requests, its image from the blob",
    async (wire) => {
      const continuous = await session(wire, false);
      const restored = await session(wire, true);
      expect(restored).toHaveLength(3);
      expect(restored[2]).toContain(SHOT_BASE64);
      expect(restored).toEqual(continuous);
    },
  );
});

describe("a log with media from the fixture corpus (session-store's v3/media.jsonl)", () => {
  it("restores under the pod's strict item schema; blobs the store lacks reach the model as notes", async () => {
    const w = await imageWorld("anthropic");
    const fixture = await readFile(
      new URL("../../session-store/test/fixtures/v3/media.jsonl", import.meta.url),
      "utf8",
    );
    const start = JSON.parse(fixture.slice(0, fixture.indexOf("\n"))) as {
      session_id: string;
      segment_id: string;
    };
    const dir = join(sessionsRoot(w.workspace), start.session_id);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${start.segment_id}.jsonl`), fixture);
    const warnings: string[] = [];
    const pod = await w.restore(start.session_id, { onWarning: (warning) => warnings.push(warning.message) });
    const attachment = pod.history.find((item) => item.type === "message" && item.media !== undefined);
    expect(attachment).toMatchObject({
      role: "system",
      media: [expect.objectContaining({ width: 20, height: 20 })],
    });
    expect(resultMedia(pod)).toHaveLength(3);
    w.double.enqueue(text("I cannot see them any more."));
    await pod.run("look again");
    const request = w.double.requests[0] as CapturedRequest;
    expect(requestMedia(request, "anthropic")).toEqual([]);
    expect(request.rawBody).toContain(
      "[image/png 1568×980: not available, its stored bytes (sha256:3f1c9a7e",
    );
    expect(warnings.some((message) => message.includes("sha256:3f1c9a7e"))).toBe(true);
  });
});

const EVERYTHING = join(
  dirname(
    createRequire(join(import.meta.dirname, "..", "..", "tools", "package.json")).resolve(
      "@modelcontextprotocol/server-everything/package.json",
    ),
  ),
  "dist",
  "index.js",
);

describe("an image from a real MCP server (server-everything's get-tiny-image)", () => {
  it.each(["anthropic", "openai-responses", "openai-chat"] as const)(
    "%s: reaches the model as an image block, never as text",
    async (wire) => {
      const w = await world({
        systemPrompt: "You look at screens.",
        manifestExtra: [
          `[[mcp.server]]\nname = "everything"\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([EVERYTHING, "stdio"])}`,
          '[sandbox]\nbackend = "none"',
        ].join("\n"),
        double: { wire },
      });
      const pod = await w.pod();
      w.double.enqueue(toolCall("mcp__everything__get-tiny-image", {}, "call_logo"), text("The MCP logo."));
      expect(await pod.run("show me the logo")).toMatchObject({ status: "finished" });
      const second = w.double.requests[1] as CapturedRequest;
      const blocks = requestMedia(second, wire);
      expect(blocks).toHaveLength(1);
      expect(blocks[0]?.mediaType).toBe("image/png");
      expect(blocks[0]?.in).toBe(wire === "openai-chat" ? "message" : "tool_result");
      const [ref] = resultMedia(pod);
      expect(ref).toMatchObject({ width: 20, height: 20 });
      const logo = Buffer.from(blocks[0]?.data ?? []);
      expect(second.rawBody.split(logo.toString("base64")).length - 1).toBe(1);
      expect(await rawLogs(w)).not.toContain(logo.toString("base64").slice(0, 40));
      await pod.close();
    },
    60_000,
  );
});

describe("fitting, dedupe, budget and prune", () => {
  it("downscales a large image to the provider's long edge before storing it", async () => {
    const w = await imageWorld("anthropic");
    const big = await sharp({
      create: { width: 4000, height: 3000, channels: 3, background: { r: 20, g: 120, b: 200 } },
    })
      .png()
      .toBuffer();
    await writeFile(join(w.workspace, "big.png"), big);
    const pod = await w.pod();
    w.double.enqueue(toolCall("read_file", { path: "big.png" }), text("Big."));
    await pod.run("read big.png");
    const [ref] = resultMedia(pod);
    expect(ref).toMatchObject({
      media_type: "image/png",
      width: 1568,
      height: 1176,
      scaled_from: { width: 4000, height: 3000 },
    });
    const stored = await blobOf(w, (ref as MediaRef).digest);
    expect(await sharp(stored).metadata()).toMatchObject({ width: 1568, height: 1176, format: "png" });
    const [block] = requestMedia(w.double.requests[1] as CapturedRequest, "anthropic");
    expect(Buffer.from(block?.data ?? []).equals(stored)).toBe(true);
  });

  it("recompresses an image over the provider's bytes (Anthropic: 5 MB) as a JPEG under it", async () => {
    const w = await imageWorld("anthropic");
    const heavy = noisePng(1500, 1500, 3); // 6.75 MB of noise, within the long edge
    expect(heavy.length).toBeGreaterThan(5 * 1024 * 1024);
    await writeFile(join(w.workspace, "heavy.png"), heavy);
    const pod = await w.pod();
    w.double.enqueue(toolCall("read_file", { path: "heavy.png" }), text("Heavy."));
    await pod.run("read heavy.png");
    const [ref] = resultMedia(pod);
    expect(ref).toMatchObject({ media_type: "image/jpeg", width: 1500, height: 1500 });
    expect((ref as MediaRef).bytes).toBeLessThanOrEqual(5 * 1024 * 1024);
  });

  it("stores the same image once and sends it once per request", async () => {
    const w = await imageWorld("anthropic");
    await writeFile(join(w.workspace, "copy.png"), SHOT);
    const pod = await w.pod();
    w.double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "read_file", arguments: { path: "shot.png" }, id: "call_a" },
          { type: "tool_call", name: "read_file", arguments: { path: "copy.png" }, id: "call_b" },
        ],
      },
      text("Twice the same."),
    );
    await pod.run("compare shot.png and copy.png");
    const digests = resultMedia(pod).map((ref) => ref.digest);
    expect(digests).toHaveLength(2);
    expect(new Set(digests).size).toBe(1);
    expect(await blobCount(w)).toBe(1);
    const second = w.double.requests[1] as CapturedRequest;
    expect(requestMedia(second, "anthropic").map((block) => block.callId)).toEqual(["call_a"]);
    expect(second.rawBody.split(SHOT_BASE64).length - 1).toBe(1);
    expect(second.rawBody).toContain("[image/png 200×150: the same file as shown above]");
  });

  it("keeps a turn's [media] budget: a part past it is a note, and the next turn starts afresh", async () => {
    const w = await imageWorld("anthropic", "[media]\nmax_images_per_turn = 1\n");
    await writeFile(join(w.workspace, "other.png"), noisePng(30, 20, 5));
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("read_file", { path: "shot.png" }, "call_1"),
      toolCall("read_file", { path: "other.png" }, "call_2"),
      text("Only one."),
      toolCall("read_file", { path: "other.png" }, "call_3"),
      text("Now the other."),
    );
    await pod.run("read both");
    const results = pod.history.filter(
      (item): item is Extract<Item, { type: "tool_result" }> => item.type === "tool_result",
    );
    expect(results[0]?.media).toHaveLength(1);
    expect(results[1]?.media).toBeUndefined();
    expect(results[1]?.summary).toContain(
      pod.catalog.render("media_over_budget", {
        file: "image/png 30×20",
        max_images: 1,
        max_bytes: 20 * 1024 * 1024,
      }),
    );
    await pod.run("read the other one now");
    const third = pod.history.filter((item) => item.type === "tool_result")[2] as Extract<
      Item,
      { type: "tool_result" }
    >;
    expect(third.media).toHaveLength(1);
  });

  it("a pod with [media] enabled = false stores nothing and tells the model", async () => {
    const w = await imageWorld("anthropic", "[media]\nenabled = false\n");
    const { pod, second } = await readShot(w);
    expect(resultMedia(pod)).toEqual([]);
    expect(requestMedia(second, "anthropic")).toEqual([]);
    expect(second.rawBody).toContain(
      "[image/png 200×150 not shown: this pod does not send images to the model ([media] enabled = false)]",
    );
    expect(await blobCount(w)).toBe(0);
  });

  it("a prune replaces an old image with the catalog's marker in the request; history keeps it", async () => {
    const w = await imageWorld(
      "anthropic",
      compactionTable({
        threshold: 900000,
        request_threshold: 900000,
        prune_protected_tokens: 20,
        prune_min_savings: 10,
      }),
    );
    const { pod } = await readShot(w);
    w.double.enqueue(text("Noted."), text("Still noted."));
    await pod.run("Thanks. Anything else?");
    await pod.run("And again?");
    const last = w.double.requests.at(-1) as CapturedRequest;
    expect(requestMedia(last, "anthropic")).toEqual([]);
    expect(last.rawBody).not.toContain(SHOT_BASE64.slice(0, 48));
    expect(last.rawBody).toContain(pod.catalog.render("media_elided", { file: "image/png 200×150" }));
    expect(resultMedia(pod)).toHaveLength(1);
  });
});
