import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { blobDigest, type Entry, restoreSession } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { noisePng } from "../../../test-support/media-files.js";
import { type ServeWorld, useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

// `GET /sessions/:id/media/:digest` (docs/serve.md, docs/media.md): the viewer's images. It serves
// a blob only when that session's log names it as media, with the type its bytes say, and refuses
// a malformed digest before it comes near the store.

const world = useServeWorlds();
const SCOPE = `[[scope.allow]]\ntarget = ".."\npermission = "write"`;
const SHOT = noisePng(40, 30, 1);
const OTHER = noisePng(40, 30, 2);

const call = (name: string, args: Record<string, unknown>, id: string) => ({
  parts: [{ type: "tool_call" as const, name, arguments: args, id }],
});
const answer = (text: string) => ({ parts: [{ type: "text" as const, text }] });

/** A session the server's pod records: it reads `file`, then answers. */
async function readingSession(w: ServeWorld, file: string, bytes: Buffer): Promise<string> {
  await writeFile(join(w.workspace, file), bytes);
  w.double.enqueue(call("read_file", { path: file }, `call_${file}`), answer("seen"));
  const started = await http(w.url("/sessions"), { json: { message: `look at ${file}`, wait: true } });
  expect(started.status).toBe(200);
  return (started.body as { sessionId: string }).sessionId;
}

async function mediaOf(w: ServeWorld, sessionId: string): Promise<string[]> {
  const state = await restoreSession(w.store, sessionId);
  return state.history
    .flatMap((item: Item) => (item.type === "tool_result" ? (item.media ?? []) : []))
    .map((ref) => ref.digest);
}

async function get(w: ServeWorld, sessionId: string, digest: string) {
  const response = await fetch(w.url(`/sessions/${sessionId}/media/${digest}`));
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe("GET /sessions/:id/media/:digest", () => {
  it("serves an image the session's log names, with the type its bytes say, nosniff and a sandbox", async () => {
    const w = await world({ manifestExtra: SCOPE });
    const sessionId = await readingSession(w, "shot.png", SHOT);
    const [digest] = await mediaOf(w, sessionId);
    const { response, bytes } = await get(w, sessionId, digest as string);
    expect(response.status).toBe(200);
    expect(bytes.equals(SHOT)).toBe(true);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    // The viewer asks with the digest encoded (`sha256%3A…`): the same blob.
    const encoded = await get(w, sessionId, encodeURIComponent(digest as string));
    expect(encoded.bytes.equals(SHOT)).toBe(true);
  });

  it("refuses a blob the store holds but the session does not name as media: another session's, a file's content", async () => {
    const w = await world({ manifestExtra: SCOPE });
    const mine = await readingSession(w, "shot.png", SHOT);
    const theirs = await readingSession(w, "other.png", OTHER);
    const [their] = await mediaOf(w, theirs);
    // A file the pod wrote: its content is a blob of the store, named by a files.changed entry.
    w.double.enqueue(
      call("write_file", { path: "notes.txt", content: "secret plans\n" }, "call_w"),
      answer("written"),
    );
    expect(
      (await http(w.url(`/sessions/${mine}/messages`), { json: { message: "write notes", wait: true } }))
        .status,
    ).toBe(200);
    const written = await blobDigest(Buffer.from("secret plans\n"));
    const entries: Entry<Item>[] = [];
    for (const segmentId of await w.store.listSegments(mine)) {
      for await (const entry of w.store.readAll({ sessionId: mine, segmentId })) entries.push(entry);
    }
    expect(JSON.stringify(entries)).toContain(written);
    // Positive controls: both blobs are in the store, and each is served where it belongs.
    for (const digest of [their as string, written]) expect(await w.store.blobs?.has(digest)).toBe(true);
    expect(Buffer.from((await w.store.blobs?.get(written)) ?? []).toString("utf8")).toBe("secret plans\n");
    expect((await get(w, theirs, their as string)).response.status).toBe(200);
    for (const digest of [their as string, written]) {
      const { response, bytes } = await get(w, mine, digest);
      expect(response.status, digest).toBe(404);
      expect(bytes.toString("utf8")).not.toContain("secret plans");
    }
  });

  it("refuses a malformed digest with 400 and an unknown session with 404", async () => {
    const w = await world({ manifestExtra: SCOPE });
    const sessionId = await readingSession(w, "shot.png", SHOT);
    for (const bad of [
      "sha256:..%2F..%2F..%2Fetc%2Fpasswd",
      `sha256:${"A".repeat(64)}`,
      `sha256:${"a".repeat(63)}`,
      "md5:d41d8cd98f00b204e9800998ecf8427e",
      "..%2F..%2Fmanifest.toml",
    ]) {
      const { response } = await get(w, sessionId, bad);
      expect(response.status, bad).toBe(400);
    }
    const [digest] = await mediaOf(w, sessionId);
    const unknown = await get(w, "0190f6f2-5f7e-7cc3-9a5b-000000000000", digest as string);
    expect(unknown.response.status).toBe(404);
  });
});
