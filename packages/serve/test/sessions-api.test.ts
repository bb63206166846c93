import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { listSessionRows, readSessionView, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse } from "./support/sse-client.js";

const world = useServeWorlds();

describe("the session API over real HTTP (filesystem store)", () => {
  it("starts a session, waits for its answer, and lists and shows it as `podkit session list|show --json` do", async () => {
    const w = await world();
    w.double.enqueue({ parts: [{ type: "text", text: "hello from the pod" }] });
    const started = await http(w.url("/sessions"), { json: { message: "say hello", wait: true } });
    expect(started.status, started.text).toBe(200);
    const body = started.body as { sessionId: string; status: string; text: string };
    expect(body).toMatchObject({ status: "finished", text: "hello from the pod" });

    const list = await http(w.url("/sessions"));
    expect(list.body).toEqual(JSON.parse(JSON.stringify(await listSessionRows(w.store))));
    expect(list.body).toMatchObject([{ sessionId: body.sessionId, turns: 1, firstInput: "say hello" }]);

    const show = await http(w.url(`/sessions/${body.sessionId}`));
    const expected = await readSessionView(w.store, body.sessionId);
    expect(show.body).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(show.body).toMatchObject({
      tree: { sessionId: body.sessionId, status: "finished", pendingApprovals: [], children: [] },
    });
  });

  it("a session directory without a segment (a crash's debris) is left out of GET /sessions with a warning, never a 404 for everyone", async () => {
    const warnings: string[] = [];
    const w = await world({ server: { onWarning: (message) => warnings.push(message) } });
    w.double.enqueue({ parts: [{ type: "text", text: "hi" }] });
    const started = await http(w.url("/sessions"), { json: { message: "hello", wait: true } });
    const { sessionId } = started.body as { sessionId: string };
    const debris = "01900000-0000-7000-8000-00000000beef";
    await mkdir(join(sessionsRoot(w.workspace), debris), { recursive: true });
    const list = await http(w.url("/sessions"));
    expect(list.status, list.text).toBe(200);
    expect((list.body as { sessionId: string }[]).map((row) => row.sessionId)).toEqual([sessionId]);
    expect(warnings).toEqual([`session ${debris} left out of the listing: it has no segment`]);
    // The viewer's home page lists from the same route.
    expect((await http(w.url("/"))).status).toBe(200);
  });

  it("continues a session with a new message and streams both turns as committed entries in order", async () => {
    const w = await world();
    w.double.enqueue(
      { parts: [{ type: "text", text: "first" }] },
      { parts: [{ type: "text", text: "second" }] },
    );
    const started = await http(w.url("/sessions"), { json: { message: "one" } });
    expect(started.status, started.text).toBe(201);
    const { sessionId, events } = started.body as { sessionId: string; events: string };
    expect(events).toBe(`/sessions/${sessionId}/events`);
    const stream = await openSse(w.url(events));
    expect(stream.status).toBe(200);
    await stream.waitFor((e) => e.event === "entry" && e.data.includes('"run_completed"'));
    const again = await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "two" } });
    expect(again.status, again.text).toBe(202);
    await stream.waitFor(
      (_, all) => entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2,
    );
    stream.close();

    const entries = entriesOf(stream.events);
    expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i)); // no gap, no duplicate
    const turn = ["invoke", "user_input", "llm_usage", "assistant_item", "turn_end", "run_completed"];
    expect(entries.map((e) => e.entry.kind)).toEqual(["segment_start", ...turn, ...turn]);
    const ids = entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of entries) expect(e.id).toMatch(new RegExp(`^${e.segment}:${e.index}:[A-Za-z0-9_-]{8}$`));
    // A live event marks the end of the replay.
    expect(stream.events.some((e) => e.event === "live")).toBe(true);
  });

  it("resumes after Last-Event-ID or ?after= with exactly the entries that followed", async () => {
    const w = await world();
    w.double.enqueue({ parts: [{ type: "text", text: "answer" }] });
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "q", wait: true } })).body as {
      sessionId: string;
    };
    const full = await openSse(w.url(`/sessions/${sessionId}/events`));
    await full.waitFor((e) => e.event === "live");
    full.close();
    const all = entriesOf(full.events);
    const cut = all[3] as (typeof all)[number];

    const byHeader = await openSse(w.url(`/sessions/${sessionId}/events`), { "last-event-id": cut.id });
    await byHeader.waitFor((e) => e.event === "live");
    byHeader.close();
    expect(entriesOf(byHeader.events).map((e) => e.id)).toEqual(all.slice(4).map((e) => e.id));

    const byQuery = await openSse(w.url(`/sessions/${sessionId}/events?after=${cut.segment}:${cut.index}`));
    await byQuery.waitFor((e) => e.event === "live");
    byQuery.close();
    expect(entriesOf(byQuery.events).map((e) => e.raw)).toEqual(entriesOf(byHeader.events).map((e) => e.raw));

    // A check that no longer matches the log: the client is told to drop the segment and gets it again.
    const stale = `${cut.segment}:${cut.index}:AAAAAAAA`;
    const reset = await openSse(w.url(`/sessions/${sessionId}/events`), { "last-event-id": stale });
    await reset.waitFor((e) => e.event === "live");
    reset.close();
    expect(reset.events.find((e) => e.event === "reset")?.data).toBe(`{"segment":"${cut.segment}"}`);
    expect(entriesOf(reset.events).map((e) => e.id)).toEqual(all.map((e) => e.id));
  });
});
