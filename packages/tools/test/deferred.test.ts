import { type Tool, ToolServer } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { deferredCallOf } from "../src/deferred/deferred-call.js";
import { closestNames, rankTools, words } from "../src/deferred/rank-tools.js";
import { definitionTokens, ToolDeferral } from "../src/deferred/tool-deferral.js";

const tool = (name: string, description: string): Tool => ({
  name,
  description,
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
  execute: () => ({ summary: `${name} ran` }),
});

const CATALOG = [
  tool("mcp__crm__search_customer", "Search the CRM for customer records matching a text query."),
  tool(
    "mcp__billing__search_invoice",
    "Search the billing system for invoice records matching a text query.",
  ),
  tool("mcp__billing__create_invoice", "Create a new invoice in the billing system."),
  tool("mcp__cal__list_meeting", "List the meetings of the team calendar, newest first."),
];

describe("rankTools (find_tools' ranking)", () => {
  it("splits names and camelCase and folds plurals", () => {
    expect(words("mcp__github__createIssues for boxes and entries")).toEqual([
      "mcp",
      "github",
      "create",
      "issue",
      "for",
      "box",
      "and",
      "entry",
    ]);
  });

  it("ranks by BM25 over name and description, best first, and leaves out what matches no word", () => {
    expect(rankTools(CATALOG, "search unpaid invoices").map((t) => t.name)).toEqual([
      "mcp__billing__search_invoice",
      "mcp__billing__create_invoice",
      "mcp__crm__search_customer",
    ]);
    expect(rankTools(CATALOG, "weather")).toEqual([]);
  });

  it("puts an exact name first and counts a word's beginning", () => {
    expect(rankTools(CATALOG, "mcp__cal__list_meeting")[0]?.name).toBe("mcp__cal__list_meeting");
    expect(rankTools(CATALOG, "meet").map((t) => t.name)).toEqual(["mcp__cal__list_meeting"]);
  });

  it("is deterministic: ties keep name order, the same input gives the same order", () => {
    const twins = [tool("b_tool", "does x"), tool("a_tool", "does x")];
    expect(rankTools(twins, "does").map((t) => t.name)).toEqual(["a_tool", "b_tool"]);
    expect(rankTools(CATALOG, "records query")).toEqual(rankTools(CATALOG, "records query"));
  });

  it("closestNames suggests misspelt names by edit distance", () => {
    const names = CATALOG.map((t) => t.name);
    expect(closestNames("mcp__billing__serch_invoice", names)[0]).toBe("mcp__billing__search_invoice");
    expect(closestNames("weather", names)).toEqual([]);
  });
});

describe("deferredCallOf", () => {
  const outer = (args: unknown, name = "call_tool") => ({
    call_id: "c1",
    name,
    arguments: JSON.stringify(args),
  });

  it("is the inner call, under the outer call's id", () => {
    expect(deferredCallOf(outer({ name: "note_write", arguments: { path: "a" } }))).toEqual({
      type: "tool_call",
      call_id: "c1",
      name: "note_write",
      arguments: '{"path":"a"}',
    });
    expect(deferredCallOf(outer({ name: "note_write" }))?.arguments).toBe("{}");
  });

  it("is undefined for another tool and for arguments that name no tool", () => {
    expect(deferredCallOf(outer({ name: "x" }, "find_tools"))).toBeUndefined();
    expect(deferredCallOf({ call_id: "c", name: "call_tool", arguments: "{not json" })).toBeUndefined();
    expect(deferredCallOf(outer({ name: 3 }))).toBeUndefined();
    expect(deferredCallOf(outer({ name: "x", arguments: [1] }))).toBeUndefined();
  });
});

describe("ToolDeferral", () => {
  it('"auto" defers a source over the threshold and leaves one under it', async () => {
    const big = Array.from({ length: 40 }, (_, i) =>
      tool(`big_${i}`, "a tool with a long enough description ".repeat(4)),
    );
    const tokens = await definitionTokens(big);
    const deferral = new ToolDeferral(tokens - 1);
    const server = new ToolServer();
    for (const factory of deferral.wrap("big", "auto", [() => big])) server.registerTool(factory);
    for (const factory of deferral.wrap("small", "auto", [() => [tool("small_one", "small")]]))
      server.registerTool(factory);
    for (const factory of deferral.wrap("never", false, [
      () => big.map((t) => ({ ...t, name: `n_${t.name}` })),
    ]))
      server.registerTool(factory);
    await server.flushPending();
    expect(server.isDeferred("big_0")).toBe(true);
    expect(server.isDeferred("small_one")).toBe(false);
    expect(server.isDeferred("n_big_0")).toBe(false);
    expect(deferral.decisions.map((d) => [d.source, d.deferred])).toEqual([
      ["big", true],
      ["small", false],
    ]);
  });

  it("the pair materializes only when something was deferred", async () => {
    const descriptions = { findTools: "find", callTool: "call" };
    const none = new ToolDeferral(1_000_000);
    const plain = new ToolServer();
    for (const factory of none.wrap("s", "auto", [() => [tool("one", "one")]])) plain.registerTool(factory);
    plain.registerTool(none.pair(plain, descriptions));
    expect(await plain.flushPending()).toEqual(["one"]);

    const some = new ToolDeferral(1_000_000);
    const server = new ToolServer();
    for (const factory of some.wrap("s", true, [() => [tool("one", "one")]])) server.registerTool(factory);
    server.registerTool(some.pair(server, descriptions));
    expect(await server.flushPending()).toEqual(["call_tool", "find_tools", "one"]);
    const called = await server.execute(
      {
        type: "tool_call",
        call_id: "c",
        name: "call_tool",
        arguments: '{"name":"one","arguments":{"id":"7"}}',
      },
      new AbortController().signal,
    );
    expect(called).toEqual({ summary: "one ran" });
  });
});
