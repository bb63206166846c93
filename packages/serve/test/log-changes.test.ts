import { SessionLog } from "@podkit/session-store";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse, type SseEvent } from "./support/sse-client.js";

const world = useServeWorlds();

/** The log a client holds after applying the stream's events (entries, truncations, resets). */
function heldLog(events: readonly SseEvent[]): string[] {
  let held: { id: string; segment: string; index: number }[] = [];
  for (const event of events) {
    const data = JSON.parse(event.data) as { segment: string | null; index: number; count: number };
    if (event.event === "entry")
      held.push({ id: event.id as string, segment: data.segment as string, index: data.index });
    if (event.event === "truncate")
      held = held.filter((e) => e.segment !== data.segment || e.index < data.count);
    if (event.event === "reset") {
      const from = data.segment === null ? 0 : held.findIndex((e) => e.segment === data.segment);
      if (from >= 0) held = held.slice(0, from);
    }
  }
  return held.map((e) => e.id);
}

async function replayIds(url: string): Promise<string[]> {
  const replay = await openSse(url);
  await replay.waitFor((e) => e.event === "live");
  replay.close();
  return entriesOf(replay.events).map((e) => e.id);
}

describe("the stream follows what happens to the log", () => {
  it("a turn cut from the log (a notification's turn cancelled before any output) is cut from every client, live or resuming", async () => {
    const w = await world();
    w.double.enqueue(
      { parts: [{ type: "text", text: "one" }] },
      { parts: [{ type: "text", text: "three" }] },
    );
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "one", wait: true } })).body as {
      sessionId: string;
    };
    const url = w.url(`/sessions/${sessionId}/events`);
    const live = await openSse(url);
    await live.waitFor((e) => e.event === "live");
    // Another process's pod starts a turn for a notification and is cancelled before the model
    // said anything: that turn (no input of a person's) is rolled back — the log cut to before its
    // invoke, as `Pod` does it.
    const other = await SessionLog.open(w.store, sessionId);
    await other.appendMany([
      { kind: "invoke", trigger: "notify" },
      { kind: "system_item", item: { kind: "notification", body: "two" } },
    ]);
    await live.waitFor((e) => e.event === "entry" && e.data.includes('"body":"two"'));
    const staleId = entriesOf(live.events).at(-1)?.id as string; // a client that leaves now holds this
    await other.truncate(7);
    const cut = await live.waitFor((e) => e.event === "truncate");
    const truncate = cut.find((e) => e.event === "truncate") as SseEvent;
    expect(JSON.parse(truncate.data)).toMatchObject({ count: 7 }); // back to the end of turn 1
    expect(truncate.id).toBe(entriesOf(live.events)[6]?.id);

    await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "three", wait: true } });
    await live.waitFor((e) => e.event === "entry" && e.data.includes('"index":12,'));
    live.close();
    const log = await replayIds(url);
    expect(heldLog(live.events)).toEqual(log);
    // The rolled-back entry's index now holds another entry: the resuming client is told so.
    expect(log).not.toContain(staleId);
    const resumed = await openSse(url, { "last-event-id": staleId });
    await resumed.waitFor((e) => e.event === "live");
    resumed.close();
    expect(resumed.events.some((e) => e.event === "reset")).toBe(true);
    expect(
      heldLog([...live.events.filter((e) => e.event === "entry").slice(0, 9), ...resumed.events]),
    ).toEqual(log);
  });

  it("an interrupt while the first answer streams keeps the user's message (over HTTP as in the CLI)", async () => {
    const w = await world();
    w.double.enqueue({
      parts: [{ type: "text", text: "never committed" }],
      fault: { kind: "stall", afterEvents: 1, ms: 20_000 },
    });
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "keep me" } })).body as {
      sessionId: string;
    };
    const stream = await openSse(w.url(`/sessions/${sessionId}/events`));
    // The answer has begun streaming (its preview reached the client) when the person interrupts.
    await stream.waitFor((e) => e.event === "draft" || e.event === "delta");
    expect((await http(w.url(`/sessions/${sessionId}/interrupt`), { json: {} })).status).toBe(202);
    await stream.waitFor((e) => e.event === "entry" && e.data.includes('"run_errored"'));
    stream.close();
    const kinds = entriesOf(stream.events).map((e) => e.entry.kind);
    expect(kinds).toEqual(["segment_start", "invoke", "user_input", "run_errored"]);
    expect(JSON.stringify(entriesOf(stream.events)[2]?.entry)).toContain("keep me");
    expect(JSON.stringify(entriesOf(stream.events))).not.toContain("never committed");
    const listed = (await http(w.url("/sessions"))).body as {
      sessionId: string;
      firstInput: string;
      status: string;
    }[];
    expect(listed).toMatchObject([{ sessionId, firstInput: "keep me", status: "errored" }]);
  });

  it("follows a compaction into the new segment, and resumes across it", async () => {
    // A compaction request is the pod's conversation with the compaction instruction appended.
    const isCompact = (request: CapturedRequest) =>
      request.rawBody.includes("[Compaction request from the runtime]");
    const w = await world({
      manifestExtra: "[compaction]\nthreshold = 2000\nretained_tokens = 50",
      double: {
        respond: (request) => {
          if (!isCompact(request)) return undefined;
          const answered = request.rawBody.includes("summary written");
          return answered
            ? { parts: [{ type: "text", text: "Summary written." }] }
            : {
                parts: [
                  {
                    type: "tool_call",
                    name: "write_summary",
                    arguments: { summary: "We said hello twice." },
                  },
                ],
              };
        },
      },
    });
    w.double.enqueue(
      {
        parts: [{ type: "text", text: `first ${"long ".repeat(200)}` }],
        usage: { inputTokens: 9000, outputTokens: 400 },
      },
      { parts: [{ type: "text", text: "after the compaction" }] },
    );
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "hello", wait: true } }))
      .body as {
      sessionId: string;
    };
    const url = w.url(`/sessions/${sessionId}/events`);
    const live = await openSse(url);
    await live.waitFor((e) => e.event === "live");
    const firstSegment = entriesOf(live.events)[0]?.segment as string;
    const lastOfFirst = entriesOf(live.events).at(-1)?.id as string;
    const second = await http(w.url(`/sessions/${sessionId}/messages`), {
      json: { message: "again", wait: true },
    });
    expect(second.body).toMatchObject({ text: "after the compaction" });
    await live.waitFor((e) => e.event === "entry" && e.data.includes('"text":"after the compaction"'));
    const next = entriesOf(live.events).find((e) => e.segment !== firstSegment);
    expect(next?.index).toBe(0);
    expect(next?.entry).toMatchObject({
      kind: "segment_start",
      compacted_from: { segment_id: firstSegment, at_turn: 1 },
    });
    await live.waitFor(
      (e) => e.event === "entry" && e.data.includes('"run_completed"') && !e.data.includes(firstSegment),
    );
    live.close();
    const log = await replayIds(url);
    expect(entriesOf(live.events).map((e) => e.id)).toEqual(log);

    const resumed = await openSse(url, { "last-event-id": lastOfFirst });
    await resumed.waitFor((e) => e.event === "live");
    resumed.close();
    expect(entriesOf(resumed.events).map((e) => e.id)).toEqual(log.slice(log.indexOf(lastOfFirst) + 1));
    const show = (await http(w.url(`/sessions/${sessionId}`))).body as { segments: unknown[] };
    expect(show.segments).toHaveLength(2);
  });
});
