import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { listSessionRows } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { startServer } from "../src/index.js";
import { doublePods, useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse } from "./support/sse-client.js";

const database = usePostgresDatabases();
const world = useServeWorlds();
/** Polls so slow that only a notification can wake a feed within a test. */
const NO_POLL = { withoutWatcherMs: 600_000, safetyNetMs: 600_000 };

/** The store without its notifications: a reader that can only poll. */
function deaf(store: Store<Item>): Store<Item> {
  return new Proxy(store, {
    get: (target, property) =>
      property === "listenForAppends" ? undefined : Reflect.get(target, property, target),
  });
}

describe("serve on PostgreSQL", () => {
  it("runs, lists, shows and streams sessions kept in the database", async () => {
    const url = await database();
    const w = await world({ store: () => new PostgresStore<Item>({ url }) });
    w.double.enqueue({ parts: [{ type: "text", text: "stored in postgres" }] });
    const started = await http(w.url("/sessions"), { json: { message: "where?", wait: true } });
    expect(started.status, started.text).toBe(200);
    const { sessionId } = started.body as { sessionId: string };
    expect((await http(w.url("/sessions"))).body).toEqual(
      JSON.parse(JSON.stringify(await listSessionRows(w.store))),
    );
    const stream = await openSse(w.url(`/sessions/${sessionId}/events`));
    await stream.waitFor((e) => e.event === "live");
    stream.close();
    expect(entriesOf(stream.events).map((e) => e.entry.kind)).toEqual([
      "segment_start",
      ...["invoke", "user_input", "llm_usage", "assistant_item", "turn_end", "run_completed"],
    ]);
  });

  it("a server on another store streams a session run elsewhere, woken by NOTIFY, byte for byte", async () => {
    const url = await database();
    const w = await world({ store: () => new PostgresStore<Item>({ url }) });
    w.double.enqueue(
      { parts: [{ type: "text", text: "first" }] },
      { parts: [{ type: "text", text: "second answer", chunkSize: 2 }] },
    );
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "one", wait: true } })).body as {
      sessionId: string;
    };
    const open = async (store: Store<Item>) => {
      const server = await startServer({
        store,
        pods: doublePods(w.workspace, w.double),
        port: 0,
        pollIntervals: NO_POLL,
      });
      return { server, stream: await openSse(`${server.url}/sessions/${sessionId}/events`) };
    };
    const otherStore = new PostgresStore<Item>({ url });
    const deafStore = new PostgresStore<Item>({ url });
    const other = await open(otherStore);
    const control = await open(deaf(deafStore));
    try {
      await other.stream.waitFor((e) => e.event === "live");
      await control.stream.waitFor((e) => e.event === "live");
      const local = await openSse(w.url(`/sessions/${sessionId}/events`));
      await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "two", wait: true } });
      const done = (_: unknown, all: Parameters<typeof entriesOf>[0]) =>
        entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2;
      await local.waitFor(done);
      // Bounded well below the 600 s poll: only the notification can have woken it.
      await other.stream.waitFor(done, 20_000);
      local.close();
      const rawOf = (events: Parameters<typeof entriesOf>[0]) => entriesOf(events).map((e) => e.id);
      expect(entriesOf(other.stream.events).map((e) => e.id)).toEqual(rawOf(local.events));
      const bytes = (events: Parameters<typeof entriesOf>[0]) =>
        events
          .filter((e) => e.event === "entry")
          .map((e) => e.raw)
          .join("");
      expect(bytes(other.stream.events)).toBe(bytes(local.events));
      // Positive control: the same server without notifications (and a poll too slow to matter)
      // has not seen the second turn.
      expect(entriesOf(control.stream.events).filter((e) => e.entry.kind === "run_completed")).toHaveLength(
        1,
      );
    } finally {
      other.stream.close();
      control.stream.close();
      await other.server.close();
      await control.server.close();
      await otherStore.close();
      await deafStore.close();
    }
  });

  it("a pod left open on one server is not reused after another server continued the session", async () => {
    const url = await database();
    const w = await world({ store: () => new PostgresStore<Item>({ url }) });
    w.double.enqueue(
      { parts: [{ type: "text", text: "one on A" }] },
      { parts: [{ type: "text", text: "two on B" }] },
      { parts: [{ type: "text", text: "three on A" }] },
    );
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "one", wait: true } })).body as {
      sessionId: string;
    };
    const otherStore = new PostgresStore<Item>({ url });
    const other = await startServer({ store: otherStore, pods: doublePods(w.workspace, w.double), port: 0 });
    try {
      const two = await http(`${other.url}/sessions/${sessionId}/messages`, {
        json: { message: "two", wait: true },
      });
      expect(two.body).toMatchObject({ text: "two on B" });
      const three = await http(w.url(`/sessions/${sessionId}/messages`), {
        json: { message: "three", wait: true },
      });
      expect(three.body).toMatchObject({ text: "three on A" });
    } finally {
      await other.close();
      await otherStore.close();
    }
    // A continued the log as it is now: no drift fork, and the model saw turn two.
    const show = (await http(w.url(`/sessions/${sessionId}`))).body as {
      otherBranches: unknown[];
      segments: { turns: unknown[] }[];
    };
    expect(show.otherBranches).toEqual([]);
    expect(show.segments).toHaveLength(1);
    expect(show.segments[0]?.turns).toHaveLength(3);
    expect(JSON.stringify(w.double.requests[2]?.body)).toContain("two on B");
  });
});
