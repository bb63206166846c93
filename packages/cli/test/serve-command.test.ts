import { rm } from "node:fs/promises";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { entriesOf, http, openSse, type SseEvent } from "../../serve/test/support/sse-client.js";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import { CHILD_BASH_CALL, enqueueDelegation, HELPER_ROLE } from "./support/helper-role.js";
import { startServe } from "./support/serve-process.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit serve` as a user starts it: real child processes, the provider double, the workspace's
// files or a real PostgreSQL server (docs/serve.md).

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";

interface SessionRowJson {
  sessionId: string;
  status: string;
  parent?: { sessionId: string; role: string; depth: number };
}
interface TreeJson extends SessionRowJson {
  children: TreeJson[];
}
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
  it.each(["filesystem", "postgres"] as const)(
    "on the %s store, GET /sessions and /sessions/:id are `session list|show --json`: a tree of sub-pods with a child's pending approval",
    async (kind) => {
      const storeConfig =
        kind === "postgres" ? `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n` : "";
      ws = await doubleWorkspace(double.baseUrl, `${storeConfig}${HELPER_ROLE}`);
      const env: Record<string, string> = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" };
      if (kind === "postgres") env[URL_VARIABLE] = await database();
      enqueueDelegation(double);
      const serve = await startServe(ws.workspace, env);
      try {
        const started = await http(`${serve.url}/sessions`, { json: { message: "delegate", wait: true } });
        // The child's pending call ends the root's run too (its spawn_pod is suspended on it).
        expect(started.body).toMatchObject({ status: "awaiting_approval" });
        const rootId = (started.body as { sessionId: string }).sessionId;

        const list = await runBin(["session", "list", "--json"], { cwd: ws.workspace, env });
        expect(list.code, list.stderr).toBe(0);
        const rows = JSON.parse(list.stdout) as SessionRowJson[];
        expect((await http(`${serve.url}/sessions`)).body).toEqual(rows);
        const child = rows.find((row) => row.parent?.sessionId === rootId);
        const grandchild = rows.find((row) => row.parent?.sessionId === child?.sessionId);
        expect(child?.parent).toMatchObject({ role: "helper", depth: 1 });
        expect(grandchild?.parent).toMatchObject({ role: "helper", depth: 2 });
        expect(child).toMatchObject({
          status: "awaiting_approval",
          pendingApprovals: [{ callId: CHILD_BASH_CALL, tool: "bash", pending: true }],
        });

        const ids = [rootId, child?.sessionId as string, grandchild?.sessionId as string];
        const shows = await Promise.all(
          ids.map((id) => runBin(["session", "show", id, "--json"], { cwd: ws.workspace, env })),
        );
        for (const [i, id] of ids.entries()) {
          const show = shows[i] as Awaited<ReturnType<typeof runBin>>;
          expect(show.code, show.stderr).toBe(0);
          const shown = JSON.parse(show.stdout) as { sessionId: string; tree: TreeJson };
          expect((await http(`${serve.url}/sessions/${id}`)).body, id).toEqual(shown);
          // Each shows the same tree, from the root: its child waiting, with its grandchild.
          expect(shown.sessionId).toBe(id);
          expect(shown.tree).toMatchObject({
            sessionId: rootId,
            status: "awaiting_approval",
            pendingApprovals: [],
            children: [
              {
                sessionId: child?.sessionId,
                status: "awaiting_approval",
                pendingApprovals: [{ callId: CHILD_BASH_CALL }],
                children: [{ sessionId: grandchild?.sessionId, status: "finished", children: [] }],
              },
            ],
          });
        }
        expect(serve.stderr()).not.toContain("internal error");
      } finally {
        expect(await serve.stop()).toBe(0);
      }
    },
    120_000,
  );

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
      // A turn with a tool call through two servers: generous for a busy machine.
      await Promise.all([onFirst.waitFor(done, 60_000), onSecond.waitFor(done, 60_000)]);
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
