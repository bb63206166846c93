import { rm } from "node:fs/promises";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { entriesOf, http, openSse, type SseEvent } from "../../serve/test/support/sse-client.js";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import { startServe } from "./support/serve-process.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit serve` as a user starts it: real child processes, the provider double, the workspace's
// files or a real PostgreSQL server (docs/serve.md).

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";
let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const entryBytes = (events: readonly SseEvent[]) =>
  events
    .filter((e) => e.event === "entry")
    .map((e) => e.raw)
    .join("");

describe("podkit serve", () => {
  it("serves the workspace's sessions: GET /sessions and /sessions/:id are `session list|show --json`", async () => {
    ws = await doubleWorkspace(double.baseUrl);
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" };
    const serve = await startServe(ws.workspace, env);
    try {
      double.enqueue({ parts: [{ type: "text", text: "served" }] });
      const started = await http(`${serve.url}/sessions`, { json: { message: "over http", wait: true } });
      expect(started.body).toMatchObject({ status: "finished", text: "served" });
      const { sessionId } = started.body as { sessionId: string };
      const list = await runBin(["session", "list", "--json"], { cwd: ws.workspace, env });
      expect((await http(`${serve.url}/sessions`)).body).toEqual(JSON.parse(list.stdout));
      const show = await runBin(["session", "show", sessionId, "--json"], { cwd: ws.workspace, env });
      expect((await http(`${serve.url}/sessions/${sessionId}`)).body).toEqual(JSON.parse(show.stdout));
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.stderr()).toContain("podkit serve: stopping");
  }, 120_000);

  it("refuses to listen beyond loopback without PODKIT_SERVE_TOKEN: one line, a hint, exit 1", async () => {
    ws = await doubleWorkspace(double.baseUrl);
    const result = await runBin(["serve", "--host", "0.0.0.0", "--port", "0"], {
      cwd: ws.workspace,
      env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: refusing to listen on 0\.0\.0\.0 without a token.*\nhint: set PODKIT_SERVE_TOKEN/,
    );
    expect(result.stderr).not.toContain("    at ");
    const port = await runBin(["serve", "--port", "99999"], {
      cwd: ws.workspace,
      env: { HOME: ws.home, ANTHROPIC_API_KEY: "k" },
    });
    expect(port.code).toBe(1);
    expect(port.stderr).toMatch(/^error: --port must be a port number/);
  }, 120_000);

  it("on PostgreSQL, a second serve process streams the same session and its events match byte for byte", async () => {
    ws = await doubleWorkspace(
      double.baseUrl,
      `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
    );
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: await database() };
    const first = await startServe(ws.workspace, env);
    const second = await startServe(ws.workspace, env);
    try {
      double.enqueue(
        { parts: [{ type: "text", text: "turn one" }] },
        { parts: [{ type: "tool_call", name: "read_file", arguments: { path: ".podkit/manifest.toml" } }] },
        { parts: [{ type: "text", text: "turn two, after reading the manifest", chunkSize: 4 }] },
      );
      const { sessionId } = (await http(`${first.url}/sessions`, { json: { message: "one", wait: true } }))
        .body as {
        sessionId: string;
      };
      const onFirst = await openSse(`${first.url}/sessions/${sessionId}/events`);
      const onSecond = await openSse(`${second.url}/sessions/${sessionId}/events`);
      await Promise.all([onFirst, onSecond].map((s) => s.waitFor((e) => e.event === "live")));
      await http(`${first.url}/sessions/${sessionId}/messages`, { json: { message: "two" } });
      const done = (_: unknown, all: readonly SseEvent[]) =>
        entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2;
      await Promise.all([onFirst.waitFor(done, 15_000), onSecond.waitFor(done, 15_000)]);
      onFirst.close();
      onSecond.close();
      expect(entriesOf(onSecond.events).length).toBeGreaterThan(10);
      expect(entryBytes(onSecond.events)).toBe(entryBytes(onFirst.events));
      // Only the server running the turn has its live preview.
      expect(onFirst.events.some((e) => e.event === "draft")).toBe(true);
      expect(onSecond.events.some((e) => e.event === "draft" || e.event === "delta")).toBe(false);
      // And the second server continues the session from the database.
      double.enqueue({ parts: [{ type: "text", text: "turn three, elsewhere" }] });
      const third = await http(`${second.url}/sessions/${sessionId}/messages`, {
        json: { message: "three", wait: true },
      });
      expect(third.body).toMatchObject({ status: "finished", text: "turn three, elsewhere" });
    } finally {
      expect(await first.stop()).toBe(0);
      expect(await second.stop()).toBe(0);
    }
  }, 120_000);
});
