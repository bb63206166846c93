import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ScriptedResponse } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { useDispatchWorlds } from "./support/dispatch-world.js";
import { type ServeProcess, startServe } from "./support/serve-process.js";

// A dispatched run that stops awaiting approval, answered over HTTP: the server does not continue
// it itself (that left the dispatcher's run stale); the one continuation requeues it, a worker
// finishes it, and `podkit runs` shows it settled. A later `podkit approve` never requeues it.

const world = useDispatchWorlds(usePostgresDatabases(), {
  // bash runs in the OS sandbox (docs/sandbox.md): it writes ran.txt because the scope lets it.
  prepare: (manifest) =>
    `${manifest.replace("builtin = []", "builtin = []\nbash = true")}\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n`,
});
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});

const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });

describe("a dispatched run answered over HTTP", { timeout: 300_000 }, () => {
  it("is requeued, finished by a worker and settled in podkit runs; podkit approve afterwards requeues nothing", async () => {
    const { double, ws, env, podkit, worker, runIn } = world();
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_w", name: "bash", arguments: { command: "echo ran >> ran.txt" } },
        ],
      },
      text("ran it"),
    );
    const runId = (await podkit(["submit", "run the script"])).stdout.trim();
    worker();
    const waiting = await runIn(runId, "awaiting_approval");
    const sessionId = waiting.sessionId as string;
    const ran = async () => (await readFile(join(ws.workspace, "ran.txt"), "utf8").catch(() => "")).trim();
    expect(await ran()).toBe("");

    serve = await startServe(ws.workspace, env);
    const answered = await fetch(`${serve.url}/sessions/${sessionId}/approvals/toolu_w`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "allow", by: "alice" }),
    });
    expect(answered.status).toBe(202);
    expect(await answered.json()).toMatchObject({ next: "requeued", runId, resumed: false });

    const done = await runIn(runId, "completed");
    expect(done).toMatchObject({ result: "finished" });
    expect(await ran()).toBe("ran");
    // Exactly one attempt resumed it, on the worker (not the server); the log says how it ended.
    const log = done.log as string[];
    expect(log.filter((line) => line.includes("resumed on"))).toHaveLength(1);
    expect(log.at(-1)).toContain("ended completed (finished)");

    // A second answer is refused, and the finished run is never queued again.
    const again = await podkit(["approve", sessionId, "toolu_w", "--allow"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already answered");
    const after = JSON.parse((await podkit(["runs", "show", runId, "--json"])).stdout) as Record<
      string,
      unknown
    >;
    expect(after).toMatchObject({ state: "completed", attempts: done.attempts });
    expect(serve.stderr()).not.toContain("internal error");
  });
});
