import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Entry } from "@podkit/session-store";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

// A sub-pod's session reached through the HTTP doors — a message to it, an answer to its approval —
// runs with its role's authority (a read-only reviewer's tools, scope and depth), never the root's.
// Each door has its positive control: the same call with the root's authority writes.

const world = useServeWorlds();

const MANIFEST = (extra: string) => `
${extra}
[worker]
system_prompt = "ROOT"
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

/** Routes the double on the system prompt: each pod of the tree has its own queue of answers. */
function route(scripts: Record<string, ScriptedResponse[]>) {
  const requests: Record<string, CapturedRequest[]> = {};
  const respond = (request: CapturedRequest): ScriptedResponse | undefined => {
    // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
    const system: string = (request.body as any).system?.[0]?.text ?? "";
    const key = Object.keys(scripts).find((k) => system.startsWith(k));
    if (key === undefined) return undefined;
    requests[key] = [...(requests[key] ?? []), request];
    return scripts[key]?.shift();
  };
  return { respond, requests, scripts };
}

const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });
const call = (name: string, args: Record<string, unknown>, id: string): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args, id }],
});
const write = (id: string) => call("write_file", { path: "src/owned.txt", content: "pwned\n" }, id);
const tools = (request: CapturedRequest | undefined): string[] =>
  ((request?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);

async function treeWorld(extra: string, scripts: Record<string, ScriptedResponse[]>) {
  const routed = route(scripts);
  const w = await world({ manifestExtra: MANIFEST(extra), double: { respond: routed.respond } });
  await mkdir(join(w.workspace, "src"), { recursive: true });
  await writeFile(join(w.workspace, "src", "app.js"), "ok\n");
  return { w, ...routed };
}

async function childOf(store: { listChildSessions(id: string): Promise<string[]> }, rootId: string) {
  const [child] = await store.listChildSessions(rootId);
  return child as string;
}

async function entriesOf(
  w: {
    store: {
      readAll(ref: { sessionId: string; segmentId: string }): AsyncIterable<Entry>;
      listSegments(id: string): Promise<string[]>;
    };
  },
  sessionId: string,
) {
  const out: Entry[] = [];
  for (const segmentId of (await w.store.listSegments(sessionId)).reverse()) {
    for await (const entry of w.store.readAll({ sessionId, segmentId })) out.push(entry);
  }
  return out;
}

describe("a sub-pod's session through the HTTP doors keeps its role's authority", () => {
  it("POST /sessions/<child>/messages: the reviewer cannot write, gets its role's tools and no spawn_pod", async () => {
    const { w, requests, scripts } = await treeWorld("", {
      ROOT: [call("spawn_pod", { role: "reviewer", task: "review" }, "c-spawn"), text("reviewed")],
      REVIEWER: [text("looks fine")],
    });
    const started = await http(w.url("/sessions"), { json: { message: "review it", wait: true } });
    expect(started.body).toMatchObject({ status: "finished" });
    const rootId = (started.body as { sessionId: string }).sessionId;
    const childId = await childOf(w.store, rootId);
    const throughParent = tools(requests.REVIEWER?.[0]);

    scripts.REVIEWER?.push(write("c-door"), text("tried"));
    const sent = await http(w.url(`/sessions/${childId}/messages`), {
      json: { message: "write src/owned.txt", wait: true },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(false);
    expect(tools(requests.REVIEWER?.at(-2))).toEqual(throughParent);
    expect(tools(requests.REVIEWER?.at(-2))).not.toContain("spawn_pod");
    const results = (await entriesOf(w, childId)).filter((e) => e.kind === "tool_result");
    expect(results.at(-1)).toMatchObject({ item: { call_id: "c-door", is_error: true } });
    for (const start of (await entriesOf(w, childId)).filter((e) => e.kind === "segment_start"))
      expect(start).toMatchObject({ parent: { session_id: rootId, depth: 1 } });

    // Positive control: the root's session, the same call — it writes.
    scripts.ROOT?.push(write("r-door"), text("wrote"));
    await http(w.url(`/sessions/${rootId}/messages`), { json: { message: "write it", wait: true } });
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(true);
  });

  it("an answer to the child's approval over HTTP continues the tree from the root, and the reviewer's write is still refused", async () => {
    const { w, requests, scripts } = await treeWorld("[tools]\nconfirm_writes = true\n", {
      ROOT: [call("spawn_pod", { role: "reviewer", task: "fix it" }, "c-spawn"), text("root done")],
      REVIEWER: [write("c-write"), text("could not write")],
    });
    const started = await http(w.url("/sessions"), { json: { message: "go", wait: true } });
    expect(started.body).toMatchObject({ status: "awaiting_approval" });
    const rootId = (started.body as { sessionId: string }).sessionId;
    const childId = await childOf(w.store, rootId);

    // Answered at the child's door: the one continuation resumes the root (the top of the chain).
    const answered = await http(w.url(`/sessions/${childId}/approvals/c-write`), {
      json: { decision: "allow", by: "alice" },
    });
    expect(answered.status, answered.text).toBe(202);
    expect(answered.body).toMatchObject({
      sessionId: childId,
      next: "resume",
      continuedSessionId: rootId,
      resumed: true,
    });
    for (let i = 0; i < 1500 && (scripts.ROOT?.length ?? 0) > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 1500; i++) {
      const root = await entriesOf(w, rootId);
      if (root.filter((e) => e.kind === "run_completed").length >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(false);
    const childResults = (await entriesOf(w, childId)).filter((e) => e.kind === "tool_result");
    expect(childResults).toMatchObject([{ item: { call_id: "c-write", is_error: true } }]);
    expect(tools(requests.REVIEWER?.at(-1))).toEqual(tools(requests.REVIEWER?.[0]));
    expect(tools(requests.REVIEWER?.at(-1))).not.toContain("spawn_pod");

    // Positive control: the root's own write, asked and allowed over HTTP the same way, writes.
    scripts.ROOT?.push(write("r-write"), text("wrote"));
    const own = await http(w.url(`/sessions/${rootId}/messages`), {
      json: { message: "write it", wait: true },
    });
    expect(own.body).toMatchObject({ status: "awaiting_approval" });
    const allowed = await http(w.url(`/sessions/${rootId}/approvals/r-write`), {
      json: { decision: "allow" },
    });
    expect(allowed.body).toMatchObject({ next: "resume", continuedSessionId: rootId });
    for (let i = 0; i < 1500 && !existsSync(join(w.workspace, "src/owned.txt")); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(true);
  });
});
