import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, sessionsRoot } from "@podkit/session-store";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { SubpodSessionError } from "../src/subpods/errors.js";
import { caught } from "./helpers.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();

/** A root that may write the project, and a read-only reviewer that may not spawn further. */
const MANIFEST = `
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

const toolNames = (request: CapturedRequest | undefined): string[] =>
  ((request?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);

const write = (path: string) => toolCall("write_file", { path, content: "pwned\n" });

/** A root that spawned a reviewer child (which answered), and the child's id. */
async function treeWithReviewer() {
  const route = routeBySystemPrompt({
    ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "review src" }), text("reviewed")],
    REVIEWER: [text("looks fine")],
  });
  const w = await world({
    systemPrompt: "ROOT",
    manifestExtra: MANIFEST,
    files: { "project/src/app.js": "ok\n" },
    double: { respond: route.respond },
  });
  const root = await w.pod();
  expect(await root.run("review the code").result).toMatchObject({ status: "finished" });
  const rootId = root.sessionId as string;
  await root.close();
  const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
  const [childId] = await store.listChildSessions(rootId);
  await store.close();
  return { w, route, rootId, childId: childId as string };
}

describe("sub-pods: a child's session opened through Pod.restore keeps its role's authority", () => {
  it("restored from outside with the root's manifest, the read-only reviewer cannot write, gets its role's tools and keeps its depth", async () => {
    const { w, route, rootId, childId } = await treeWithReviewer();
    const throughParent = toolNames(route.requests.REVIEWER?.[0]);

    // The door: the library restores the child's session with the workspace (root) manifest.
    route.scripts.REVIEWER?.push(
      write("src/owned.txt"),
      toolCall("spawn_pod", { role: "reviewer", task: "x" }),
      text("done"),
    );
    const child = await w.restore(childId);
    expect(await child.run("write src/owned.txt").result).toMatchObject({ status: "finished" });
    const asked = route.requests.REVIEWER?.at(-3);
    expect(toolNames(asked)).toEqual(throughParent);
    expect(toolNames(asked)).not.toContain("spawn_pod");
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(false);
    const results = toolResults((await entriesBySession(w.workspace)).get(childId) ?? []).slice(-2);
    expect(results[0]?.isError).toBe(true);
    expect(results[1]).toMatchObject({
      isError: true,
      summary: expect.stringContaining('unknown tool "spawn_pod"'),
    });
    // Its approvals would name its place in the tree, and it still has no children of its own.
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    expect(await store.listChildSessions(childId)).toEqual([]);
    const starts = [...((await entriesBySession(w.workspace)).get(childId) ?? [])].filter(
      (entry) => entry.kind === "segment_start",
    );
    for (const start of starts) expect(start).toMatchObject({ parent: { session_id: rootId, depth: 1 } });
    await store.close();

    // Positive control: the same call with the root's authority writes — the attack is real.
    route.scripts.ROOT?.push(write("src/owned.txt"), text("wrote"));
    const root = await w.restore(rootId);
    await root.run("write src/owned.txt").result;
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(true);
    expect(toolNames(route.requests.ROOT?.at(-1))).toContain("spawn_pod");
  });

  it("through the parent, send_pod gives the child the same tools and the same refusal", async () => {
    const { w, route, rootId, childId } = await treeWithReviewer();
    route.scripts.ROOT?.push(
      toolCall("send_pod", { id: childId, message: "write src/owned.txt" }),
      text("asked"),
    );
    route.scripts.REVIEWER?.push(write("src/owned.txt"), text("could not"));
    const root = await w.restore(rootId);
    await root.run("have the reviewer write").result;
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(false);
    expect(toolNames(route.requests.REVIEWER?.at(-1))).toEqual(toolNames(route.requests.REVIEWER?.[0]));
    const [denied] = toolResults((await entriesBySession(w.workspace)).get(childId) ?? []).slice(-1);
    expect(denied?.isError).toBe(true);
  });

  it("a placement that is not the one the child's log records is refused, and so is a child whose role is gone", async () => {
    const { w, rootId, childId } = await treeWithReviewer();
    const forged = {
      link: { session_id: rootId, call_id: "forged", role: "reviewer", depth: 1 },
      path: "root › reviewer#9",
    };
    const error = await caught(w.restore(childId, w.options({ subpod: forged })));
    expect(SubpodSessionError.isInstance(error)).toBe(true);
    expect(error.message).toContain("is not the child this pod was placed as");
    const rootAsChild = await caught(w.restore(rootId, w.options({ subpod: forged })));
    expect(SubpodSessionError.isInstance(rootAsChild)).toBe(true);

    // The workspace manifest no longer declares the role: the child cannot be opened at all.
    const { writeFile } = await import("node:fs/promises");
    const manifestFile = join(w.workspace, ".podkit/manifest.toml");
    const { readFile } = await import("node:fs/promises");
    const without = (await readFile(manifestFile, "utf8")).replace(/\[subpods\.reviewer[\s\S]*$/, "");
    await writeFile(manifestFile, without);
    await w.reload();
    const gone = await caught(w.restore(childId));
    expect(SubpodSessionError.isInstance(gone)).toBe(true);
    expect(gone.message).toContain('role "reviewer"');
    // Control: the root itself still opens.
    await expect(w.restore(rootId)).resolves.toBeDefined();
  });
});
