import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse, type SseConnection } from "./support/sse-client.js";

const world = useServeWorlds();

/** Open descriptors of this process, which is also the server's. */
const openDescriptors = () => readdirSync("/proc/self/fd").length;

/** Waits (bounded) until `check` holds. */
async function eventually(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("event streams under load", () => {
  it("1,000 connects and disconnects leave the open-descriptor count flat", async () => {
    const w = await world();
    w.double.enqueue({ parts: [{ type: "text", text: "answer" }] });
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "q", wait: true } })).body as {
      sessionId: string;
    };
    const url = w.url(`/sessions/${sessionId}/events`);
    const cycle = async () => {
      const stream = await openSse(url);
      await stream.waitFor((e) => e.event === "live");
      stream.close();
      await stream.closed;
    };
    for (let i = 0; i < 20; i++) await cycle(); // warm up: lazy modules, the first feed
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = openDescriptors();

    // Positive control: streams held open do show up in the count.
    const held: SseConnection[] = [];
    for (let i = 0; i < 50; i++) held.push(await openSse(url));
    await Promise.all(held.map((s) => s.waitFor((e) => e.event === "live")));
    expect(openDescriptors()).toBeGreaterThanOrEqual(before + 50);
    for (const stream of held) stream.close();
    await Promise.all(held.map((s) => s.closed));

    for (let batch = 0; batch < 20; batch++) await Promise.all(Array.from({ length: 50 }, cycle));
    await eventually(
      () => openDescriptors() <= before + 4,
      `descriptors back to ${before} (now ${openDescriptors()})`,
    );
    expect(openDescriptors()).toBeLessThanOrEqual(before + 4);
  }, 120_000);

  it("200 clients on one live session each get every committed event, in order, once", async () => {
    const w = await world({ manifestExtra: '[[scope.allow]]\ntarget = ".."\npermission = "read"' });
    w.double.enqueue(
      { parts: [{ type: "text", text: "warming up" }] },
      {
        parts: [
          { type: "reasoning", text: "look around", signature: "s" },
          { type: "tool_call", name: "glob", arguments: { pattern: "**/*" } },
        ],
      },
      { parts: [{ type: "tool_call", name: "glob", arguments: { pattern: "*.md" } }] },
      { parts: [{ type: "text", text: "done looking around: nothing here", chunkSize: 3 }] },
    );
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "start", wait: true } }))
      .body as {
      sessionId: string;
    };
    const url = w.url(`/sessions/${sessionId}/events`);
    const clients = await Promise.all(Array.from({ length: 200 }, () => openSse(url)));
    await Promise.all(clients.map((c) => c.waitFor((e) => e.event === "live")));
    const second = await http(w.url(`/sessions/${sessionId}/messages`), {
      json: { message: "look around", wait: true },
    });
    expect(second.status, second.text).toBe(200);
    const finished = (_: unknown, all: Parameters<typeof entriesOf>[0]) =>
      entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2;
    await Promise.all(clients.map((c) => c.waitFor(finished, 20_000)));
    for (const client of clients) client.close();

    const replay = await openSse(url);
    await replay.waitFor((e) => e.event === "live");
    replay.close();
    const expected = entriesOf(replay.events).map((e) => e.raw);
    expect(expected.length).toBeGreaterThan(15);
    for (const [n, client] of clients.entries()) {
      expect(
        entriesOf(client.events).map((e) => e.raw),
        `client ${n}`,
      ).toEqual(expected);
    }
  }, 120_000);
});
