import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { useDispatchWorlds } from "./support/dispatch-world.js";

// A sub-pod's session continued through `podkit submit --session <child>` and run by `podkit worker`
// gets its role's authority — the read-only reviewer's tools, scope and depth — never the root's.
// The positive control is the same call submitted for the root's session: it writes.

const ROLES = `
[[scope.allow]]
target = ".."
permission = "write"
[subpods.reviewer]
description = "reviews code, read-only"
max_depth = 1
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
[[subpods.reviewer.scope.allow]]
target = "../src"
permission = "read"
`;

const world = useDispatchWorlds(usePostgresDatabases(), {
  extra: ROLES,
  prepare: (manifest) => manifest.replace("builtin = []", 'builtin = ["read_file", "write_file"]'),
});

const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });
const call = (name: string, args: Record<string, unknown>, id: string): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args, id }],
});
const write = (id: string) => call("write_file", { path: "src/owned.txt", content: "pwned\n" }, id);

describe("sub-pods: submit --session <child> and the worker keep the child's authority", {
  timeout: 300_000,
}, () => {
  it("the read-only reviewer, run by a worker from a submit to its session, cannot write and keeps its tools and depth", async () => {
    const { double, ws, podkit, worker, runIn } = world();
    await mkdir(join(ws.workspace, "src"), { recursive: true });
    const tools = (index: number) =>
      ((double.requests[index]?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map(
        (t) => t.name,
      );
    const completed = (runId: string) => runIn(runId, "completed") as Promise<{ sessionId: string }>;
    worker();
    double.enqueue(
      call("spawn_pod", { role: "reviewer", task: "review" }, "c-spawn"),
      text("looks fine"),
      text("done"),
    );
    const first = await podkit(["submit", "review the code"]);
    expect(first.code, first.stderr).toBe(0);
    const root = await completed(first.stdout.trim());
    const rows = JSON.parse((await podkit(["session", "list", "--json"])).stdout) as {
      sessionId: string;
      parent?: { sessionId: string; depth: number };
    }[];
    const child = rows.find((row) => row.parent?.sessionId === root.sessionId);
    expect(child?.parent?.depth).toBe(1);
    const throughParent = tools(1);

    // The door: a run submitted for the child's own session.
    double.enqueue(write("c-door"), text("tried"));
    const asked = double.requests.length;
    const door = await podkit(["submit", "--session", child?.sessionId as string, "write src/owned.txt"]);
    expect(door.code, door.stderr).toBe(0);
    await completed(door.stdout.trim());
    expect(existsSync(join(ws.workspace, "src", "owned.txt"))).toBe(false);
    expect(tools(asked)).toEqual(throughParent);
    expect(tools(asked)).not.toContain("spawn_pod");
    const shown = await podkit(["session", "show", child?.sessionId as string, "--json"]);
    const view = JSON.parse(shown.stdout) as { segments: { turns: { tools: { isError: boolean }[] }[] }[] };
    expect(view.segments.at(-1)?.turns.at(-1)?.tools).toMatchObject([{ isError: true }]);
    expect(
      (JSON.parse((await podkit(["session", "list", "--json"])).stdout) as typeof rows).find(
        (r) => r.sessionId === child?.sessionId,
      )?.parent?.depth,
    ).toBe(1);

    // Positive control: the same call for the root's session writes.
    double.enqueue(write("r-door"), text("wrote"));
    const own = await podkit(["submit", "--session", root.sessionId, "write src/owned.txt"]);
    await completed(own.stdout.trim());
    expect(existsSync(join(ws.workspace, "src", "owned.txt"))).toBe(true);
  });
});
