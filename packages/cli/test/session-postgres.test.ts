import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit session list/show` on the PostgreSQL store a manifest selects, end to end: real child
// processes, the provider double, a real PostgreSQL server (issue 17).

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl, `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`);
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const sessionOf = (stderr: string) => /podkit resume (\S+)/.exec(stderr)?.[1] as string;

describe("podkit session on PostgreSQL", () => {
  it("run, resume, session list and session show all go through the database", async () => {
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: await database() };
    const podkit = (args: string[]) => runBin(args, { cwd: ws.workspace, env });

    double.enqueue({ parts: [{ type: "text", text: "first answer" }] });
    const first = await podkit(["run", "first question"]);
    expect(first.code, first.stderr).toBe(0);
    const sessionId = sessionOf(first.stderr);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    double.enqueue({ parts: [{ type: "text", text: "second answer" }] });
    const resumed = await podkit(["resume", sessionId, "second question"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    double.enqueue({ parts: [{ type: "text", text: "other answer" }] });
    const other = sessionOf((await podkit(["run", "another session"])).stderr);

    const list = await podkit(["session", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { sessionId: string; turns: number; firstInput: string }[];
    expect(rows.map((row) => row.sessionId)).toEqual([other, sessionId]); // newest first
    expect(rows[1]).toMatchObject({ turns: 2, firstInput: "first question" });

    const text = await podkit(["session", "list"]);
    expect(text.stdout).toContain(sessionId);
    expect(text.stdout).toContain("first question");

    const show = await podkit(["session", "show", sessionId]);
    expect(show.code, show.stderr).toBe(0);
    for (const fragment of [`session ${sessionId}`, "first question", "second question"]) {
      expect(show.stdout).toContain(fragment);
    }

    // Nothing went to the filesystem store.
    expect(existsSync(join(ws.workspace, ".podkit", "sessions"))).toBe(false);
  });

  it("names the variable to set when the URL is missing, in one line and a hint", async () => {
    const result = await runBin(["session", "list"], { cwd: ws.workspace, env: { HOME: ws.home } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^error: .*\\$${URL_VARIABLE}.*not set\\nhint: export ${URL_VARIABLE}=`),
    );
    expect(result.stderr).not.toContain("    at ");
  });
});
