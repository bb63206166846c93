import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InProcessQueue, submitRun } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import { rewindSession } from "@podkit/pod";
import { describeSession, FsStore, type Store, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type ServeOptions, startServer } from "../src/index.js";
import { doublePods, scratchWorkspace } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

// Issue 42 over HTTP: `POST /sessions/:id/rewind` takes a session served here back to turn N —
// the conversation and the files its pod changed — through `rewindSession`, on sessions a real
// pod recorded (write_file through the server, so the `files.changed` entries and blobs are the
// pod's own), in the workspace the server's pods work in.

/** Lets the pods write the workspace (the default scope only reads it). */
const WRITABLE = `[[scope.allow]]\ntarget = ".."\npermission = "write"`;
const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

interface RewindWorld {
  workspace: string;
  double: ProviderDouble;
  store: Store<Item>;
  url(path: string): string;
  /** A turn through the server, waited for: `responses` are what the model answers. */
  turn(sessionId: string | undefined, message: string, ...responses: ScriptedResponse[]): Promise<string>;
  read(path: string): Promise<string | undefined>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A workspace whose pods write files (a scratch one unless given), a filesystem store (unless
 * given), and a server rewinding in that workspace.
 */
async function world(server: Partial<ServeOptions> = {}, inWorkspace?: string): Promise<RewindWorld> {
  let workspace = inWorkspace;
  if (workspace === undefined) {
    const scratch = await scratchWorkspace(WRITABLE);
    cleanups.push(() => rm(scratch.root, { recursive: true, force: true }));
    workspace = scratch.workspace;
  }
  const double = await startProviderDouble({ wire: "anthropic" });
  cleanups.push(() => double.close());
  const store = server.store ?? new FsStore<Item>({ root: sessionsRoot(workspace) });
  if (server.store === undefined) cleanups.push(() => store.close());
  const started = await startServer({
    store,
    pods: doublePods(workspace, double),
    port: 0,
    workspace,
    ...server,
  });
  cleanups.push(() => started.close());
  const url = (path: string) => `${started.url}${path}`;
  return {
    workspace,
    double,
    store,
    url,
    async turn(sessionId, message, ...responses) {
      double.enqueue(...responses);
      const path = sessionId === undefined ? "/sessions" : `/sessions/${sessionId}/messages`;
      const answer = await http(url(path), { json: { message, wait: true } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toMatchObject({ status: "finished" });
      return (answer.body as { sessionId: string }).sessionId;
    },
    read: (path) => readFile(join(workspace, path), "utf8").catch(() => undefined),
  };
}

const write = (path: string, content: string): ScriptedResponse => ({
  parts: [{ type: "tool_call", name: "write_file", arguments: { path, content } }],
});
const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });

/** Two turns of a real pod: turn 1 writes a.txt; turn 2 rewrites it and creates b.txt. */
async function twoTurns(w: RewindWorld): Promise<string> {
  const sessionId = await w.turn(undefined, "one", write("src/a.txt", "one\n"), text("wrote one"));
  await w.turn(sessionId, "two", write("src/a.txt", "two\n"), write("src/b.txt", "new\n"), text("wrote two"));
  expect(await w.read("src/a.txt")).toBe("two\n");
  expect(await w.read("src/b.txt")).toBe("new\n");
  return sessionId;
}

/** The session's segments and each one's entry count: what a rewind that changed nothing leaves as it was. */
async function logShape(store: Store<Item>, sessionId: string): Promise<Record<string, number>> {
  const shape: Record<string, number> = {};
  for (const segmentId of await store.listSegments(sessionId))
    shape[segmentId] = await store.entryCount({ sessionId, segmentId });
  return shape;
}

const rewind = (w: RewindWorld, sessionId: string, body: unknown) =>
  http(w.url(`/sessions/${sessionId}/rewind`), { json: body });

describe("POST /sessions/:id/rewind", () => {
  it("a dry run lists what would change and changes nothing; the rewind restores the files, forks the conversation after turn N, and the next message continues from there", async () => {
    const w = await world();
    const sessionId = await twoTurns(w);
    const before = await logShape(w.store, sessionId);

    const dry = await rewind(w, sessionId, { toTurn: 1, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toMatchObject({ sessionId, toTurn: 1, dryRun: true, conversation: { action: "fork" } });
    expect((dry.body as { files: unknown[] }).files).toEqual(
      expect.arrayContaining([
        { path: "src/a.txt", action: "write", from: sha("two\n"), to: sha("one\n") },
        { path: "src/b.txt", action: "delete", from: sha("new\n"), to: null },
      ]),
    );
    expect(await w.read("src/a.txt")).toBe("two\n");
    expect(await w.read("src/b.txt")).toBe("new\n");
    expect(await logShape(w.store, sessionId)).toEqual(before);

    const done = await rewind(w, sessionId, { toTurn: 1 });
    expect(done.status, done.text).toBe(200);
    const report = done.body as { dryRun: boolean; conversation: { action: string; headSegmentId: string } };
    expect(report).toMatchObject({ dryRun: false, conversation: { action: "fork" } });
    expect(await w.read("src/a.txt")).toBe("one\n");
    expect(existsSync(join(w.workspace, "src/b.txt"))).toBe(false);
    const overview = await describeSession(w.store, sessionId);
    expect(overview.head.segmentId).toBe(report.conversation.headSegmentId);
    expect(overview.head.forkedFrom).toMatchObject({ atTurn: 1 });

    // The pod this server kept open holds turn 2: the next message must restore the rewound head.
    await w.turn(sessionId, "three", text("after the rewind"));
    const inputs = JSON.stringify(w.double.requests.at(-1)?.body.messages);
    expect(inputs).toContain("one");
    expect(inputs).toContain("three");
    expect(inputs).not.toContain('"two"');
    expect((await describeSession(w.store, sessionId)).head.segmentId).toBe(
      report.conversation.headSegmentId,
    );
  });

  it("refuses with 409 naming every file edited outside the pod and changes nothing; a dry run lists them; force overwrites them", async () => {
    const w = await world();
    const sessionId = await twoTurns(w);
    await writeFile(join(w.workspace, "src/a.txt"), "edited by hand\n");
    const before = await logShape(w.store, sessionId);

    const refused = await rewind(w, sessionId, { toTurn: 1 });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({
      error: expect.stringContaining("src/a.txt"),
      hint: expect.stringContaining('"force": true'),
      refused: [{ path: "src/a.txt", recorded: sha("two\n"), current: sha("edited by hand\n") }],
    });
    expect(refused.text).not.toContain("    at ");
    expect(await w.read("src/a.txt")).toBe("edited by hand\n");
    expect(await w.read("src/b.txt")).toBe("new\n");
    expect(await logShape(w.store, sessionId)).toEqual(before);

    const dry = await rewind(w, sessionId, { toTurn: 1, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toMatchObject({ refused: [{ path: "src/a.txt" }] });

    const forced = await rewind(w, sessionId, { toTurn: 1, force: true });
    expect(forced.status, forced.text).toBe(200);
    expect(await w.read("src/a.txt")).toBe("one\n");
    expect(existsSync(join(w.workspace, "src/b.txt"))).toBe(false);
  });

  it("filesOnly restores the files and leaves the conversation; conversationOnly forks it and leaves the files", async () => {
    const w = await world();
    const sessionId = await twoTurns(w);
    const head = (await describeSession(w.store, sessionId)).head.segmentId;

    const files = await rewind(w, sessionId, { toTurn: 1, filesOnly: true });
    expect(files.status, files.text).toBe(200);
    expect(files.body).toMatchObject({ conversation: { action: "skipped" } });
    expect(await w.read("src/a.txt")).toBe("one\n");
    expect((await describeSession(w.store, sessionId)).head.segmentId).toBe(head);
    // The pod this server kept open has not seen the rewind's record: the next message continues
    // the same head after it, not a drift fork beside it.
    await w.turn(sessionId, "three", text("on we go"));
    const overview = await describeSession(w.store, sessionId);
    expect(overview.head.segmentId).toBe(head);
    expect(overview.otherBranches).toEqual([]);

    const other = await twoTurns(w);
    const conversation = await rewind(w, other, { toTurn: 1, conversationOnly: true });
    expect(conversation.status, conversation.text).toBe(200);
    expect(conversation.body).toMatchObject({ conversation: { action: "fork" }, files: [] });
    expect(await w.read("src/a.txt")).toBe("two\n");
  });

  it("a bad body is a 400 naming the key, never a 500: unknown keys, wrong types, both halves skipped, a turn the session does not have", async () => {
    const w = await world();
    const sessionId = await w.turn(undefined, "one", write("src/a.txt", "one\n"), text("ok"));
    const cases: [unknown, RegExp][] = [
      [{ toTurn: 0, fource: true }, /fource/],
      [{ toTurn: "1" }, /toTurn/],
      [{ toTurn: 1.5 }, /toTurn/],
      [{ toTurn: -1 }, /toTurn/],
      [{}, /toTurn/],
      [{ toTurn: 0, dryRun: "yes" }, /dryRun/],
      [{ toTurn: 0, force: 1 }, /force/],
      [{ toTurn: 0, filesOnly: true, conversationOnly: true }, /conversationOnly/],
      [{ toTurn: 7 }, /no turn 7/],
      [[1], /body/],
    ];
    for (const [body, message] of cases) {
      const answer = await rewind(w, sessionId, body);
      expect(answer.status, `${JSON.stringify(body)}: ${answer.text}`).toBe(400);
      expect((answer.body as { error: string }).error).toMatch(message);
      expect(answer.text).not.toContain("    at ");
    }
    const notJson = await http(w.url(`/sessions/${sessionId}/rewind`), {
      body: '{"toTurn":0}',
      headers: { "content-type": "text/plain" },
    });
    expect(notJson.status).toBe(415);
    expect((await http(w.url("/sessions/..%2F..%2Fetc/rewind"), { json: { toTurn: 0 } })).status).toBe(400);
    expect(await w.read("src/a.txt")).toBe("one\n");
  });

  it("an unknown session is a 404", async () => {
    const w = await world();
    const answer = await rewind(w, "01900000-0000-7000-8000-00000000beef", { toTurn: 0 });
    expect(answer.status, answer.text).toBe(404);
    expect((answer.body as { error: string }).error).toMatch(/no such session/);
  });

  it("is a 409 while the session runs a turn on this server, and changes nothing; once the run ended it goes through", async () => {
    const w = await world();
    const sessionId = await twoTurns(w);
    // The third turn's response stalls after its first event: the run is in progress.
    w.double.enqueue({
      parts: [{ type: "text", text: "thinking about it" }],
      fault: { kind: "stall", afterEvents: 1, ms: 60_000 },
    });
    const started = await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "three" } });
    expect(started.status, started.text).toBe(202);
    const before = await logShape(w.store, sessionId);

    for (const body of [{ toTurn: 1 }, { toTurn: 1, dryRun: true }, { toTurn: 1, filesOnly: true }]) {
      const busy = await rewind(w, sessionId, body);
      expect(busy.status, busy.text).toBe(409);
      expect((busy.body as { error: string }).error).toMatch(/running a turn on this server/);
    }
    expect(await w.read("src/a.txt")).toBe("two\n");
    expect(await logShape(w.store, sessionId)).toEqual(before);
    // Positive control: the library alone does not see the run (the stalled turn appended nothing
    // since it was read), so it is the server's check that refused.
    const unguarded = await rewindSession({
      store: w.store,
      sessionId,
      toTurn: 1,
      workspace: w.workspace,
      dryRun: true,
    });
    expect(unguarded.files.map((file) => file.path).sort()).toEqual(["src/a.txt", "src/b.txt"]);

    expect((await http(w.url(`/sessions/${sessionId}/interrupt`), { json: {} })).status).toBe(202);
    let answer = await rewind(w, sessionId, { toTurn: 1 });
    for (let i = 0; answer.status === 409 && i < 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      answer = await rewind(w, sessionId, { toTurn: 1 });
    }
    expect(answer.status, answer.text).toBe(200);
    expect(await w.read("src/a.txt")).toBe("one\n");
  });

  it("holds the session while it rewinds: a message meanwhile is a 409 and nothing runs; after it the message goes through", async () => {
    // The store's blobs answer the rewind's reads only when released: the rewind is in progress.
    let reached: () => void = () => {};
    const reading = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gatedStore = (workspace: string): Store<Item> => {
      const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
      const blobs = store.blobs;
      const gated: typeof blobs = Object.create(blobs);
      gated.get = async (digest) => {
        reached();
        await released;
        return blobs.get(digest);
      };
      return new Proxy(store, { get: (target, key) => (key === "blobs" ? gated : Reflect.get(target, key)) });
    };
    const { root, workspace } = await scratchWorkspace(WRITABLE);
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const store = gatedStore(workspace);
    cleanups.push(() => store.close());
    const w = await world({ store }, workspace);
    const sessionId = await twoTurns(w);

    const rewinding = rewind(w, sessionId, { toTurn: 1 });
    await reading;
    const requests = w.double.requests.length;
    const message = await http(w.url(`/sessions/${sessionId}/messages`), { json: { message: "three" } });
    expect(message.status, message.text).toBe(409);
    expect((message.body as { error: string }).error).toMatch(/being rewound/);
    const second = await rewind(w, sessionId, { toTurn: 0 });
    expect(second.status, second.text).toBe(409);
    release();
    expect((await rewinding).status).toBe(200);
    expect(w.double.requests.length).toBe(requests);
    expect(await w.read("src/a.txt")).toBe("one\n");

    await w.turn(sessionId, "three", text("after the rewind"));
    expect((await describeSession(w.store, sessionId)).otherBranches).toHaveLength(1); // the line left behind
  });

  it("is a 409 while the server's dispatcher holds an unfinished run of the session; once it is cancelled it goes through", async () => {
    const dispatcher = new InProcessQueue().connect();
    const w = await world({ dispatcher: async () => dispatcher });
    const sessionId = await twoTurns(w);
    const { run } = await submitRun(dispatcher, w.store, {
      pod: "served",
      session: { id: sessionId },
      input: "later",
    });
    expect(run.state).toBe("queued");

    const busy = await rewind(w, sessionId, { toTurn: 1 });
    expect(busy.status, busy.text).toBe(409);
    expect((busy.body as { error: string }).error).toContain(`dispatched run ${run.runId} (queued)`);
    expect(await w.read("src/a.txt")).toBe("two\n");

    await dispatcher.cancel(run.runId);
    const done = await rewind(w, sessionId, { toTurn: 1 });
    expect(done.status, done.text).toBe(200);
    expect(await w.read("src/a.txt")).toBe("one\n");
  });

  it("needs the token like every mutating route, and a server without a workspace answers 501", async () => {
    const token = "a-long-enough-serve-token";
    const w = await world({ token });
    const sessionId = await (async () => {
      w.double.enqueue(write("src/a.txt", "one\n"), text("ok"));
      const answer = await http(w.url("/sessions"), {
        json: { message: "one", wait: true },
        headers: { authorization: `Bearer ${token}` },
      });
      return (answer.body as { sessionId: string }).sessionId;
    })();
    const without = await rewind(w, sessionId, { toTurn: 0 });
    expect(without.status).toBe(401);
    expect(await w.read("src/a.txt")).toBe("one\n");
    // Positive control: with the token the same request goes through.
    const withToken = await http(w.url(`/sessions/${sessionId}/rewind`), {
      json: { toTurn: 0 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(withToken.status, withToken.text).toBe(200);
    expect(await w.read("src/a.txt")).toBeUndefined();

    const blind = await world({ workspace: undefined });
    const other = await blind.turn(undefined, "one", write("src/a.txt", "one\n"), text("ok"));
    const refused = await rewind(blind, other, { toTurn: 0 });
    expect(refused.status, refused.text).toBe(501);
    expect(await blind.read("src/a.txt")).toBe("one\n");
  });
});
