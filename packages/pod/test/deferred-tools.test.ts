// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ToolCallItem } from "@podkit/llm-worker";
import { type McpServerDouble, mcpServerDoubleCommand, startMcpServerDouble } from "@podkit/testkit";
import { deferredCallOf } from "@podkit/tools";
import { afterEach, describe, expect, it } from "vitest";
import { PermissionPolicy } from "../src/permissions/permissions.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";

// Deferred tools (docs/tools-deferred.md): real MCP servers (the testkit's double as a child
// process over stdio, and over HTTP), the real AI SDK adapters on the provider double's wires.

const world = usePodWorlds();
const httpDoubles: McpServerDouble[] = [];
afterEach(async () => {
  await Promise.all(httpDoubles.splice(0).map((double) => double.close()));
});

/** An `[[mcp.server]]` "big" running the stdio double with `tools` generated tools, deferred. */
function bigServer(tools = 200, defer: string = "true"): string {
  const { command, args } = mcpServerDoubleCommand({ tools, callLog: "mcp-calls.jsonl" });
  return [
    `[[mcp.server]]\nname = "big"\ncommand = ${JSON.stringify(command)}\nargs = ${JSON.stringify(args)}\ndefer = ${defer}`,
    // The double lives in this repository, outside the pod's scope: no OS sandbox here.
    '[sandbox]\nbackend = "none"',
  ].join("\n");
}

async function mcpCalls(workspace: string): Promise<{ name: string; arguments: unknown }[]> {
  const file = join(workspace, "mcp-calls.jsonl");
  if (!existsSync(file)) return [];
  return (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** The tools array of every captured request, as sent. */
const toolsArrays = (requests: readonly { body: any }[]) => requests.map((r) => JSON.stringify(r.body.tools));

/** The tool names of the first captured request (OpenAI Chat's `function.name`, else `name`). */
const firstToolNames = (requests: readonly { body: any }[]): string[] =>
  (requests[0]?.body.tools ?? []).map((t: any) => t.function?.name ?? t.name);

describe("200 deferred MCP tools", () => {
  it.each([
    ["anthropic", "tool_search_tool_bm25_20251119"],
    ["openai-responses", "tool_search"],
  ] as const)(
    "on %s: native tool search, every definition sent with defer_loading, the array never changes",
    async (wire, searchType) => {
      const w = await world({ double: { wire }, manifestExtra: bigServer() });
      const pod = await w.pod();
      w.double.enqueue(
        toolCall("mcp__big__get_invoice", { id: "INV-1" }, "call_g1"),
        text("got it"),
        toolCall("mcp__big__update_customer", { id: "C-9", fields: { tier: "gold" } }, "call_u1"),
        text("updated"),
        text("bye"),
      );
      await pod.run("find invoice INV-1");
      await pod.run("make C-9 gold");
      await pod.run("thanks");

      const arrays = toolsArrays(w.double.requests);
      expect(arrays).toHaveLength(5);
      expect(new Set(arrays).size).toBe(1);
      const tools = (w.double.requests[0]?.body.tools ?? []) as any[];
      const mcp = tools.filter((t) => (t.name ?? "").startsWith("mcp__big__"));
      expect(mcp).toHaveLength(200);
      expect(mcp.every((t) => t.defer_loading === true)).toBe(true);
      // The pod's own tools are loaded as usual, and the provider's search tool comes last.
      expect(tools.find((t) => t.name === "read_file")?.defer_loading).toBeUndefined();
      expect(tools.at(-1)).toMatchObject({ type: searchType });
      expect(tools.map((t) => t.name)).not.toContain("find_tools");
      expect((await mcpCalls(w.workspace)).map((c) => c.name)).toEqual(["get_invoice", "update_customer"]);
    },
  );

  it("on openai-chat: find_tools and call_tool from the first request; found schemas come back in results", async () => {
    const w = await world({ double: { wire: "openai-chat" }, manifestExtra: bigServer() });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("find_tools", { query: "search unpaid invoices" }, "call_f1"),
      toolCall("call_tool", { name: "mcp__big__search_invoice", arguments: { query: "unpaid" } }, "call_c1"),
      text("3 unpaid"),
      toolCall("call_tool", { name: "mcp__big__archive_ticket", arguments: { id: "T-4" } }, "call_c2"),
      text("archived"),
    );
    await pod.run("which invoices are unpaid?");
    await pod.run("archive ticket T-4");

    const arrays = toolsArrays(w.double.requests);
    expect(new Set(arrays).size).toBe(1);
    const names = firstToolNames(w.double.requests);
    expect(names).toEqual(["call_tool", "find_tools", "glob", "grep", "read_file"]);
    const entries = await sessionEntries(w.workspace);
    const found = entries.find(
      (e) => e.kind === "tool_result" && e.item.type === "tool_result" && e.item.call_id === "call_f1",
    );
    const content = (found as any).item.content as string;
    const definitions = JSON.parse(content) as { name: string; input_schema: any }[];
    expect(definitions[0]?.name).toBe("mcp__big__search_invoice");
    expect(definitions[0]?.input_schema).toMatchObject({ required: ["query"] });
    // The result reached the model in the next request.
    expect(JSON.stringify(w.double.requests[1]?.body.messages)).toContain("mcp__big__search_invoice");
    expect(await mcpCalls(w.workspace)).toEqual([
      { name: "search_invoice", arguments: { query: "unpaid" }, era: "modern" },
      { name: "archive_ticket", arguments: { id: "T-4" }, era: "modern" },
    ]);
  });

  it("call_tool with invalid arguments or an unknown name is an error result; the server never sees the call", async () => {
    const w = await world({ double: { wire: "openai-chat" }, manifestExtra: bigServer(20) });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("call_tool", { name: "mcp__big__get_invoice", arguments: { number: 7 } }, "call_bad"),
      toolCall("call_tool", { name: "mcp__big__get_invoce", arguments: { id: "7" } }, "call_unknown"),
      toolCall("call_tool", { name: "read_file", arguments: { path: "README.md" } }, "call_direct"),
      text("gave up"),
    );
    await pod.run("get invoice 7");
    const results = (await sessionEntries(w.workspace)).flatMap((e) =>
      e.kind === "tool_result" && e.item.type === "tool_result" ? [e.item] : [],
    );
    expect(results).toMatchObject([
      {
        call_id: "call_bad",
        is_error: true,
        summary: expect.stringMatching(/^invalid arguments for "mcp__big__get_invoice"/),
      },
      {
        call_id: "call_unknown",
        is_error: true,
        summary: expect.stringMatching(
          /no deferred tool is named "mcp__big__get_invoce" \(close: mcp__big__get_invoice/,
        ),
      },
      {
        call_id: "call_direct",
        is_error: true,
        summary: expect.stringMatching(/on your tool list: call it directly/),
      },
    ]);
    expect(await mcpCalls(w.workspace)).toEqual([]);
  });

  it('"auto" defers a server only when its definitions pass [tools] defer_auto_share of the context window', async () => {
    // A hundredth of the default 200k window: 2,000 tokens. 5 definitions stay under it, 200 pass it.
    const share = "[tools]\ndefer_auto_share = 0.01";
    const small = await world({
      double: { wire: "openai-chat" },
      manifestExtra: `${bigServer(5, '"auto"')}\n${share}`,
    });
    const offered = await small.pod();
    small.double.enqueue(text("hi"));
    await offered.run("hi");
    const smallNames = firstToolNames(small.double.requests);
    expect(smallNames).toContain("mcp__big__create_invoice");
    expect(smallNames).not.toContain("find_tools");

    const large = await world({
      double: { wire: "openai-chat" },
      manifestExtra: `${bigServer(200, '"auto"')}\n${share}`,
    });
    const deferred = await large.pod();
    large.double.enqueue(text("hi"));
    await deferred.run("hi");
    const largeNames = firstToolNames(large.double.requests);
    expect(largeNames).toEqual(["call_tool", "find_tools", "glob", "grep", "read_file"]);
  });
});

/** A tool package with a deferred write tool that checks the scope, and a read tool. */
const NOTES_PACKAGE = `
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { definePodkitToolPackage } from ${JSON.stringify(new URL("../../tools/dist/index.js", import.meta.url).href)};

const schema = { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path"], additionalProperties: false };
export default definePodkitToolPackage({
  name: "notes",
  tools: (ctx) => [
    () => [
      {
        name: "note_write",
        description: "Write a note to a file of the project.",
        inputSchema: schema,
        async execute({ path, text }) {
          const check = await ctx.scope.check(resolve(ctx.workspace, path), "write");
          if (!check.ok) return { summary: check.message, is_error: true, denied: { by: "scope", rule: "outside the scope", reason: check.message } };
          await writeFile(check.path, text ?? "");
          return { summary: "wrote " + path };
        },
      },
      {
        name: "note_read",
        description: "Read a note file of the project.",
        readOnly: true,
        inputSchema: schema,
        async execute({ path }) {
          const check = await ctx.scope.check(resolve(ctx.workspace, path), "read");
          if (!check.ok) return { summary: check.message, is_error: true };
          return { summary: await readFile(check.path, "utf8") };
        },
      },
    ],
  ],
});
`;

function notesWorld(extra = "") {
  return world({
    double: { wire: "openai-chat" },
    files: { "project/tools/notes.mjs": NOTES_PACKAGE, "project/note.txt": "remember the milk" },
    manifestExtra: [
      '[tools]\npackages = ["../tools/notes.mjs"]',
      '[tools.defer]\n"../tools/notes.mjs" = true',
      '[[scope.allow]]\ntarget = ".."\npermission = "write"',
      extra,
    ].join("\n"),
  });
}

const writeThroughPair = (path: string, id = "call_w") =>
  toolCall("call_tool", { name: "note_write", arguments: { path, text: "hello" } }, id);

describe("authority through call_tool", () => {
  it("positive control: without a rule, call_tool reaches the deferred write tool and it writes", async () => {
    const w = await notesWorld();
    const pod = await w.pod();
    w.double.enqueue(writeThroughPair("a.txt"), text("written"));
    expect(await pod.run("write it")).toMatchObject({ status: "finished" });
    expect(await readFile(join(w.workspace, "a.txt"), "utf8")).toBe("hello");
  });

  it("a rule that asks about the deferred tool asks about call_tool's inner call; it runs once allowed", async () => {
    const w = await notesWorld(
      '[[permissions.rule]]\ntool = "note_write"\naction = "ask"\nreason = "notes are reviewed"',
    );
    const pod = await w.pod();
    w.double.enqueue(writeThroughPair("a.txt"));
    const result = await pod.run("write it");
    expect(result.status).toBe("awaiting_approval");
    expect(result.approvals?.[0]).toMatchObject({
      tool: "note_write",
      arguments: '{"path":"a.txt","text":"hello"}',
      reason: "notes are reviewed",
    });
    expect(existsSync(join(w.workspace, "a.txt"))).toBe(false);

    await pod.answerApproval("call_w", { decision: "allow" });
    w.double.enqueue(text("written"));
    expect(await pod.resume()).toMatchObject({ status: "finished" });
    expect(await readFile(join(w.workspace, "a.txt"), "utf8")).toBe("hello");
  });

  it("the attack without the unwrapping: a rule on the deferred tool does not match a call named call_tool", () => {
    const outer: ToolCallItem = {
      type: "tool_call",
      call_id: "c",
      name: "call_tool",
      arguments: JSON.stringify({ name: "note_write", arguments: { path: "a.txt" } }),
    };
    const policy = new PermissionPolicy("default", [{ tool: "note_write", action: "deny" }], () => false);
    expect(policy.decide(outer)).toEqual({ action: "none" });
    expect(policy.decide(deferredCallOf(outer) as ToolCallItem)).toMatchObject({ action: "deny" });
  });

  it("a deny rule and read_only mode stop call_tool's write; a read through call_tool still runs", async () => {
    const w = await notesWorld(
      '[[permissions.rule]]\ntool = "note_*"\nargs = { path = "secret*" }\naction = "deny"',
    );
    const pod = await w.pod({ mode: "read_only" });
    w.double.enqueue(
      writeThroughPair("a.txt", "call_ro"),
      toolCall("call_tool", { name: "note_read", arguments: { path: "secret.txt" } }, "call_deny"),
      toolCall("call_tool", { name: "note_read", arguments: { path: "note.txt" } }, "call_read"),
      text("done"),
    );
    await pod.run("go");
    const entries = await sessionEntries(w.workspace);
    const results = Object.fromEntries(
      entries.flatMap((e) =>
        e.kind === "tool_result" && e.item.type === "tool_result" ? [[e.item.call_id, e.item]] : [],
      ),
    );
    expect(results.call_ro).toMatchObject({
      is_error: true,
      summary: expect.stringContaining("read_only mode: note_write"),
    });
    expect(results.call_deny).toMatchObject({ is_error: true, summary: expect.stringContaining("denied") });
    expect(results.call_read).toMatchObject({ summary: "remember the milk" });
    expect(existsSync(join(w.workspace, "a.txt"))).toBe(false);
    const decisions = entries.flatMap((e) =>
      e.kind === "extension" && e.domain === "policy.decision" ? [e.payload as any] : [],
    );
    expect(decisions.map((d) => [d.call_id, d.tool, d.decided_by])).toEqual([
      ["call_ro", "note_write", "mode"],
      ["call_deny", "note_read", "rule"],
    ]);
  });

  it("the scope holds inside call_tool: a path outside it is refused and logged as the deferred tool's denial", async () => {
    const w = await notesWorld();
    const pod = await w.pod();
    w.double.enqueue(writeThroughPair("../../outside.txt", "call_out"), text("refused"));
    await pod.run("write outside");
    const entries = await sessionEntries(w.workspace);
    const result = entries.find((e) => e.kind === "tool_result") as any;
    expect(result.item).toMatchObject({
      is_error: true,
      summary: expect.stringMatching(/write access to .* denied/),
    });
    expect(existsSync(join(w.root, "outside.txt"))).toBe(false);
    const decision = entries.find((e) => e.kind === "extension" && e.domain === "policy.decision") as any;
    expect(decision.payload).toMatchObject({ call_id: "call_out", tool: "note_write", decided_by: "scope" });
  });
});

describe("a deferred MCP server whose tools change mid-session", () => {
  async function changedWorld(wire: "openai-chat" | "anthropic") {
    const double = await startMcpServerDouble({ tools: 30, era: "modern" });
    httpDoubles.push(double);
    const warnings: string[] = [];
    const w = await world({
      double: { wire },
      manifestExtra: `[[mcp.server]]\nname = "big"\nurl = ${JSON.stringify(double.url)}\ndefer = true`,
    });
    const pod = await w.pod({ onWarning: (warning) => warnings.push(warning.message) });
    return { w, pod, double, warnings };
  }

  it("on the pair: a log entry and a notification; find_tools finds the new tool, call_tool calls it; the array stays", async () => {
    const { w, pod, double, warnings } = await changedWorld("openai-chat");
    w.double.enqueue(text("ready"));
    await pod.run("hello");
    double.changeTools();
    await expect
      .poll(() => warnings.some((m) => m.includes("mcp.tools_changed") || m.includes("changed its tools")))
      .toBe(true);

    w.double.enqueue(
      toolCall("find_tools", { query: "weekly digest of team activity" }, "call_find"),
      toolCall("call_tool", { name: "mcp__big__added_tool_1", arguments: { week: "2026-W31" } }, "call_new"),
      text("digest sent"),
    );
    await pod.run("send the weekly digest");

    expect(new Set(toolsArrays(w.double.requests)).size).toBe(1);
    const entries = await sessionEntries(w.workspace);
    const at = entries.findIndex((e) => e.kind === "extension" && e.domain === "mcp.tools_changed");
    expect(entries[at]).toMatchObject({
      payload: {
        server: "big",
        added: ["mcp__big__added_tool_1"],
        removed: [],
        changed: ["mcp__big__create_invoice"],
        applied: true,
      },
    });
    expect(entries[at + 1]).toMatchObject({
      kind: "system_item",
      item: {
        kind: "notification",
        body: expect.stringContaining("Use find_tools to read their current definitions"),
      },
    });
    const found = entries.find(
      (e) => e.kind === "tool_result" && e.item.type === "tool_result" && e.item.call_id === "call_find",
    ) as any;
    expect(found.item.content).toContain('"name": "mcp__big__added_tool_1"');
    expect(double.calls.map((call) => call.name)).toEqual(["added_tool_1"]);
    // The model was told before its next request.
    expect(JSON.stringify(w.double.requests[1]?.body.messages)).toContain(
      "changed its tools; added: mcp__big__added_tool_1",
    );
  });

  it("with native tool search: the change is logged and told, and the session keeps its tools", async () => {
    const { w, pod, double, warnings } = await changedWorld("anthropic");
    w.double.enqueue(text("ready"));
    await pod.run("hello");
    double.changeTools();
    await expect.poll(() => warnings.some((m) => m.includes("changed its tools"))).toBe(true);
    w.double.enqueue(toolCall("mcp__big__added_tool_1", { week: "2026-W31" }, "toolu_new"), text("cannot"));
    await pod.run("send the weekly digest");

    expect(new Set(toolsArrays(w.double.requests)).size).toBe(1);
    const entries = await sessionEntries(w.workspace);
    const change = entries.find((e) => e.kind === "extension" && e.domain === "mcp.tools_changed") as any;
    expect(change.payload).toMatchObject({ added: ["mcp__big__added_tool_1"], applied: false });
    expect(JSON.stringify(entries)).toContain("Your tools stay as they were when this session began");
    const result = entries.find((e) => e.kind === "tool_result") as any;
    expect(result.item).toMatchObject({
      is_error: true,
      summary: expect.stringContaining('unknown tool "mcp__big__added_tool_1"'),
    });
    expect(double.calls).toEqual([]);
  });
});
