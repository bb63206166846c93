import type { Item } from "@podkit/llm-worker";
import { FsStore, type Store, sessionsRoot } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { startServer } from "../src/index.js";
import { doublePods, useServeWorlds } from "./support/serve-world.js";
import { http, openSse, type SseEvent } from "./support/sse-client.js";

const world = useServeWorlds();
const database = usePostgresDatabases();
/** Polls so slow that only a notification can tell a server of another's writes within a test. */
const NO_POLL = { withoutWatcherMs: 600_000, safetyNetMs: 600_000 };
const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });

interface Row {
  sessionId: string;
  status: string;
  turns: number;
}
const rowsOf = (events: readonly SseEvent[], kind: string) =>
  events.filter((event) => event.event === kind).map((event) => JSON.parse(event.data) as Row | Row[]);

describe("the session list, live", () => {
  it("sends the listing, then each new session and each change of status as it is committed", async () => {
    const w = await world();
    w.double.enqueue(text("first"));
    const first = (await http(w.url("/sessions"), { json: { message: "one", wait: true } })).body as Row;

    const list = await openSse(w.url("/sessions"));
    expect(list.status).toBe(200);
    await list.waitFor((event) => event.event === "sessions");
    const [snapshot] = rowsOf(list.events, "sessions") as Row[][];
    expect(snapshot?.map((row) => row.sessionId)).toEqual([first.sessionId]);
    // Exactly `GET /sessions`.
    expect(snapshot).toEqual((await http(w.url("/sessions"))).body);

    // A new session appears, then its run's end.
    w.double.enqueue(text("second"));
    const second = (await http(w.url("/sessions"), { json: { message: "two", wait: true } })).body as Row;
    await list.waitFor(
      (event) =>
        event.event === "session" &&
        (JSON.parse(event.data) as Row).sessionId === second.sessionId &&
        (JSON.parse(event.data) as Row).status === "finished",
    );
    // A new turn in the first session changes its row.
    w.double.enqueue(text("again"));
    await http(w.url(`/sessions/${first.sessionId}/messages`), { json: { message: "again", wait: true } });
    await list.waitFor(
      (event) =>
        event.event === "session" &&
        (JSON.parse(event.data) as Row).sessionId === first.sessionId &&
        (JSON.parse(event.data) as Row).turns === 2,
    );
    list.close();
  });

  it("sees a session another writer started, through the watcher or the poll", async () => {
    const w = await world();
    const list = await openSse(w.url("/sessions"));
    await list.waitFor((event) => event.event === "sessions");
    expect(rowsOf(list.events, "sessions")).toEqual([[]]);
    // Another writer on the same files: not this server's pods, so nobody tells the server.
    const other = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    try {
      w.double.enqueue(text("elsewhere"));
      const pod = await doublePods(w.workspace, w.double).create(other);
      await pod.run("from another process").result;
      const sessionId = pod.sessionId as string;
      await pod.close();
      await list.waitFor(
        (event) =>
          event.event === "session" &&
          (JSON.parse(event.data) as Row).sessionId === sessionId &&
          (JSON.parse(event.data) as Row).status === "finished",
      );
    } finally {
      await other.close();
      list.close();
    }
  });

  it("a client that reconnects gets the whole listing again", async () => {
    const w = await world();
    w.double.enqueue(text("one"));
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "one", wait: true } }))
      .body as Row;
    for (let i = 0; i < 2; i++) {
      const list = await openSse(w.url("/sessions"));
      await list.waitFor((event) => event.event === "sessions");
      expect((rowsOf(list.events, "sessions")[0] as Row[]).map((row) => row.sessionId)).toEqual([sessionId]);
      list.close();
      await list.closed;
    }
  });

  it("on PostgreSQL, a session run by another server appears, woken by NOTIFY (a deaf server does not see it)", async () => {
    const url = await database();
    const w = await world({ store: () => new PostgresStore<Item>({ url }) });
    const open = async (store: Store<Item>) => {
      const server = await startServer({
        store,
        pods: doublePods(w.workspace, w.double),
        port: 0,
        pollIntervals: NO_POLL,
      });
      const list = await openSse(`${server.url}/sessions`);
      await list.waitFor((event) => event.event === "sessions");
      return { server, list };
    };
    const otherStore = new PostgresStore<Item>({ url });
    const deafStore = new PostgresStore<Item>({ url });
    const other = await open(otherStore);
    // The same server without notifications: only its (600 s) poll could tell it.
    const control = await open(
      new Proxy(deafStore, {
        get: (target, property) =>
          property === "listenForAppends" ? undefined : Reflect.get(target, property, target),
      }),
    );
    try {
      w.double.enqueue(text("stored"));
      const { sessionId } = (await http(w.url("/sessions"), { json: { message: "one", wait: true } }))
        .body as Row;
      await other.list.waitFor(
        (event) =>
          event.event === "session" &&
          (JSON.parse(event.data) as Row).sessionId === sessionId &&
          (JSON.parse(event.data) as Row).status === "finished",
      );
      // Positive control: without the notification the new session is not there.
      expect(control.list.events.filter((event) => event.event === "session")).toEqual([]);
    } finally {
      other.list.close();
      control.list.close();
      await other.server.close();
      await control.server.close();
      await otherStore.close();
      await deafStore.close();
    }
  });
});
