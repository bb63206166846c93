import { request } from "node:http";
import type { Item } from "@podkit/llm-worker";
import { FsStore, type Store, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

const world = useServeWorlds();

/** The store, recording the name and first argument of every call that reaches it. */
function recordingStore(workspace: string, calls: string[]): Store<Item> {
  const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(`${String(property)} ${JSON.stringify(args[0])}`);
        return value.apply(target, args);
      };
    },
  });
}

const UNKNOWN = "0190f6f2-5f7e-7cc3-9a5b-000000000000";

describe("bad input", () => {
  it("malformed JSON is a 400 with a message; a body that is not declared JSON is a 415", async () => {
    const w = await world();
    const malformed = await http(w.url("/sessions"), {
      body: '{"message": "hi"',
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: expect.stringMatching(/^malformed JSON body: /) });
    const wrongShape = await http(w.url("/sessions"), { json: { message: 42 } });
    expect(wrongShape.status).toBe(400);
    expect((wrongShape.body as { error: string }).error).toMatch(/^invalid request body: message: /);
    const unknownKey = await http(w.url("/sessions"), { json: { message: "hi", model: "x" } });
    expect(unknownKey.status).toBe(400);
    // A form post from another web page (no CORS preflight for text/plain) is refused before any run.
    const plain = await http(w.url("/sessions"), {
      body: '{"message":"hi"}',
      headers: { "content-type": "text/plain" },
    });
    expect(plain.status).toBe(415);
    expect(w.double.requests).toHaveLength(0);
  });

  it("an unknown session is a 404 on every session route", async () => {
    const w = await world();
    for (const [path, method] of [
      [`/sessions/${UNKNOWN}`, "GET"],
      [`/sessions/${UNKNOWN}/events`, "GET"],
      [`/sessions/${UNKNOWN}/eval-compare`, "GET"],
      [`/sessions/${UNKNOWN}/messages`, "POST"],
    ] as const) {
      const response = await http(w.url(path), method === "POST" ? { json: { message: "hi" } } : {});
      expect(response.status, path).toBe(404);
      expect(response.body).toMatchObject({ error: `no such session: ${UNKNOWN}` });
    }
    expect((await http(w.url(`/sessions/${UNKNOWN}/interrupt`), { json: {} })).status).toBe(409);
    expect((await http(w.url("/nowhere"))).status).toBe(404);
  });

  it("a body over 1 MiB is a 413, with or without a Content-Length", async () => {
    const w = await world();
    const big = JSON.stringify({ message: "x".repeat(1024 * 1024) });
    const declared = await http(w.url("/sessions"), {
      body: big,
      headers: { "content-type": "application/json" },
    });
    expect(declared.status).toBe(413);
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(
        w.url("/sessions"),
        { method: "POST", headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 17; i++) req.write("x".repeat(64 * 1024)); // no Content-Length: chunked
      req.end();
    });
    expect(chunked).toBe(413);
    // Just under the cap is read (and then refused for its content, not its size).
    const under = await http(w.url("/sessions"), {
      body: "x".repeat(1024 * 1024 - 1),
      headers: { "content-type": "application/json" },
    });
    expect(under.status).toBe(400);
    expect(w.double.requests).toHaveLength(0);
  });

  it("path-like and SQL-like session ids are a 400 and never reach the store", async () => {
    const calls: string[] = [];
    const w = await world({ store: (workspace) => recordingStore(workspace, calls) });
    // Positive control: a well-formed id does reach the store (so the recorder would see a bad one).
    expect((await http(w.url(`/sessions/${UNKNOWN}`))).status).toBe(404);
    expect(calls.some((call) => call.includes(UNKNOWN))).toBe(true);
    calls.length = 0;
    const attacks = [
      "..%2F..%2F..%2Fetc%2Fpasswd",
      "...",
      "%2e%2e%2fx",
      "x'%20OR%20'1'%3D'1",
      "a;DROP%20TABLE%20podkit_entries",
      "a%00b",
      "-rf",
    ];
    for (const id of attacks) {
      for (const suffix of ["", "/events", "/eval-compare", "/messages", "/interrupt"]) {
        const post = suffix === "/messages" || suffix === "/interrupt";
        const response = await http(
          w.url(`/sessions/${id}${suffix}`),
          post ? { json: { message: "hi" } } : {},
        );
        expect([400, 404], `${id}${suffix}: ${response.text}`).toContain(response.status);
        expect(response.text).not.toContain("    at ");
      }
    }
    expect(calls).toEqual([]);
    // The stream position is checked the same way.
    expect((await http(w.url(`/sessions/${UNKNOWN}/events?after=..%2Fx:1`))).status).toBe(400);
    expect(calls).toEqual([]);
  });
});
