import { rm } from "node:fs/promises";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// Sub-pods seen from the CLI: `run --json` tags a child's events with its pod path, `session list`
// puts children under their parent and `session show` draws the tree.

const ROLE = `
[subpods.reviewer]
description = "reviews code, read-only"
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
[[subpods.reviewer.scope.allow]]
target = ".."
permission = "read"
`;

let double: ProviderDouble;
let root: string;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

describe("sub-pods in the CLI", () => {
  it("run --json carries the child's events with its path; session list and show draw the tree", async () => {
    const ws = await doubleWorkspace(double.baseUrl, ROLE);
    root = ws.root;
    const podkit = (...args: string[]) =>
      runBin(args, { cwd: ws.workspace, env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" } });
    double.enqueue(
      { parts: [{ type: "tool_call", name: "spawn_pod", arguments: { role: "reviewer", task: "review" } }] },
      { parts: [{ type: "text", text: "looks fine" }] },
      { parts: [{ type: "text", text: "the reviewer agrees" }] },
    );
    const run = await podkit("run", "--json", "get a review");
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const childText = events.find(
      (e) => e.type === "subpod" && (e.event as { type: string }).type === "text_delta",
    );
    expect(childText).toMatchObject({ path: "root › reviewer#1", event: { delta: "looks fine" } });
    expect(double.requests[1]?.body.system?.[0]?.text).toMatch(/^REVIEWER/);

    const rows = JSON.parse((await podkit("session", "list", "--json")).stdout) as {
      sessionId: string;
      parent?: { sessionId: string; role: string; depth: number };
    }[];
    expect(rows).toHaveLength(2);
    const child = rows.find((row) => row.parent !== undefined);
    const parent = rows.find((row) => row.parent === undefined);
    expect(child?.parent).toMatchObject({ sessionId: parent?.sessionId, role: "reviewer", depth: 1 });

    const list = await podkit("session", "list");
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]?.startsWith(parent?.sessionId as string)).toBe(true);
    expect(lines[1]?.startsWith(`└ ${child?.sessionId}  [reviewer]`)).toBe(true);

    const show = await podkit("session", "show", child?.sessionId as string);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("sub-pod tree (open one with `podkit session show <id>`):");
    expect(show.stdout).toContain(`  root ${parent?.sessionId}  1 turn(s)`);
    expect(show.stdout).toContain(`    └ reviewer (depth 1) ${child?.sessionId}  1 turn(s)  ← this session`);
  });
});
