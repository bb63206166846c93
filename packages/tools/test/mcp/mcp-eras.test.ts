import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type McpServerDouble, mcpServerDoubleCommand, startMcpServerDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type McpToolsChange, mcpToolPackage } from "../../src/index.js";
import { eventually, loadPackage } from "./support.js";

const doubles: McpServerDouble[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((double) => double.close()));
});

async function httpDouble(options: Parameters<typeof startMcpServerDouble>[0]): Promise<McpServerDouble> {
  const double = await startMcpServerDouble(options);
  doubles.push(double);
  return double;
}

describe("MCP protocol eras", () => {
  it("speaks the stateless 2026-07-28 revision to a modern HTTP server: no handshake, no session, mirrored headers", async () => {
    const double = await httpDouble({ era: "modern", tools: 200 });
    const loaded = await loadPackage(mcpToolPackage([{ name: "big", url: double.url }]));

    // Two pages of 100 tools, every one offered.
    expect(loaded.names).toHaveLength(200);
    const output = await loaded.call("mcp__big__get_invoice", { id: "INV-7" });
    expect(output).toEqual({ summary: 'get_invoice: done {"id":"INV-7"}' });

    expect(double.requests.map((r) => r.method)).not.toContain("initialize");
    expect(double.requests.every((r) => r.headers["mcp-session-id"] === undefined)).toBe(true);
    const call = double.requests.find((r) => r.method === "tools/call");
    expect(call).toMatchObject({
      era: "modern",
      status: 200,
      headers: {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "get_invoice",
      },
    });
    expect(double.calls).toEqual([{ name: "get_invoice", arguments: { id: "INV-7" }, era: "modern" }]);
  });

  it("falls back to the legacy handshake for a server that only speaks it, over HTTP", async () => {
    const double = await httpDouble({ era: "legacy", tools: 3 });
    const loaded = await loadPackage(mcpToolPackage([{ name: "old", url: double.url }]));

    expect(loaded.names).toEqual([
      "mcp__old__create_invoice",
      "mcp__old__get_invoice",
      "mcp__old__list_invoice",
    ]);
    expect((await loaded.call("mcp__old__list_invoice", {})).summary).toBe("list_invoice: done {}");
    // The probe was refused as a legacy server refuses anything before `initialize`; then the handshake.
    expect(double.requests.slice(0, 2).map((r) => [r.method, r.status])).toEqual([
      ["server/discover", 400],
      ["initialize", 200],
    ]);
    expect(double.calls).toEqual([{ name: "list_invoice", arguments: {}, era: "legacy" }]);
    expect(double.sessionsOpened()).toBe(1);
  });

  it("prefers the stateless revision when a server speaks both", async () => {
    const double = await httpDouble({ era: "dual", tools: 2 });
    const loaded = await loadPackage(mcpToolPackage([{ name: "both", url: double.url }]));
    await loaded.call("mcp__both__get_invoice", { id: "1" });
    expect(double.calls.map((call) => call.era)).toEqual(["modern"]);
    expect(double.sessionsOpened()).toBe(0);
  });

  it.each(["modern", "legacy"] as const)("speaks to a %s server over stdio", async (era) => {
    const loaded = await loadPackage(mcpToolPackage([{ name: "sd", ...stdio({ era, tools: 12 }) }]));
    expect(loaded.names).toHaveLength(12);
    expect((await loaded.call("mcp__sd__search_invoice", { query: "unpaid" })).summary).toBe(
      'search_invoice: done {"query":"unpaid"}',
    );
    expect(await calls(loaded.workspace)).toEqual([
      { name: "search_invoice", arguments: { query: "unpaid" }, era },
    ]);
  });
});

describe("a legacy HTTP session that expired", () => {
  it("is opened anew once; an idempotent or read-only call is sent again, another is not", async () => {
    const double = await httpDouble({ era: "legacy", tools: 10 });
    const loaded = await loadPackage(mcpToolPackage([{ name: "crm", url: double.url }]));
    expect(double.sessionsOpened()).toBe(1);

    double.expireSessions();
    // update_invoice is marked idempotent: re-sent on the new session.
    expect(await loaded.call("mcp__crm__update_invoice", { id: "7", fields: { paid: true } })).toEqual({
      summary: 'update_invoice: done {"id":"7","fields":{"paid":true}}',
    });
    expect(double.sessionsOpened()).toBe(2);

    double.expireSessions();
    // get_invoice is read-only: re-sent as well.
    expect((await loaded.call("mcp__crm__get_invoice", { id: "7" })).summary).toBe(
      'get_invoice: done {"id":"7"}',
    );
    expect(double.sessionsOpened()).toBe(3);

    double.expireSessions();
    // create_invoice is neither: the model is told, and the server never saw the call.
    const created = await loaded.call("mcp__crm__create_invoice", { title: "March" });
    expect(created.is_error).toBe(true);
    expect(created.summary).toMatch(/ended its session \(HTTP 404\).*not.*idempotent|neither/);
    expect(double.sessionsOpened()).toBe(4);
    expect(double.calls.map((call) => call.name)).toEqual(["update_invoice", "get_invoice"]);
    // The new session works for the next call (one re-initialisation per expiry).
    expect((await loaded.call("mcp__crm__create_invoice", { title: "March" })).summary).toBe(
      'create_invoice: done {"title":"March"}',
    );
    expect(double.sessionsOpened()).toBe(4);
    expect(loaded.warnings.filter((w) => w.code === "mcp.session_expired")).toHaveLength(3);
    expect(loaded.warnings.filter((w) => w.code === "mcp.server_exited")).toEqual([]);
  });

  it("calls that meet the same expiry share one re-initialisation", async () => {
    const double = await httpDouble({ era: "legacy", tools: 10 });
    const loaded = await loadPackage(mcpToolPackage([{ name: "crm", url: double.url }]));
    double.expireSessions();
    const outputs = await Promise.all([
      loaded.call("mcp__crm__get_invoice", { id: "1" }),
      loaded.call("mcp__crm__get_invoice", { id: "2" }),
      loaded.call("mcp__crm__list_invoice", {}),
    ]);
    expect(outputs.every((output) => output.is_error !== true)).toBe(true);
    expect(double.sessionsOpened()).toBe(2);
  });
});

describe("a server's changed tool list", () => {
  it.each([
    ["modern", "subscriptions/listen"],
    ["legacy", "the session's GET stream"],
  ] as const)(
    "reaches onToolsChanged from a %s HTTP server (%s), and the flushed list stays",
    async (era, _via) => {
      const double = await httpDouble({ era, tools: 5 });
      const changes: McpToolsChange[] = [];
      const loaded = await loadPackage(
        mcpToolPackage([{ name: "crm", url: double.url }], {
          onToolsChanged: (change) => changes.push(change),
        }),
      );
      const before = loaded.server.names();
      // The listen stream (or GET stream) is open before the change is made.
      expect(
        await eventually(() =>
          double.requests.some(
            (r) =>
              (era === "modern" ? r.method === "subscriptions/listen" : r.httpMethod === "GET") &&
              r.status === 200,
          ),
        ),
      ).toBe(true);

      double.changeTools();

      expect(await eventually(() => changes.length > 0)).toBe(true);
      expect(changes[0]).toMatchObject({
        server: "crm",
        added: ["mcp__crm__added_tool_1"],
        removed: [],
        changed: ["mcp__crm__create_invoice"],
      });
      expect(changes[0]?.tools.map((tool) => tool.name)).toContain("mcp__crm__added_tool_1");
      expect(loaded.server.names()).toEqual(before);
      expect(loaded.warnings).toEqual([
        expect.objectContaining({ code: "mcp.tools_changed", message: expect.stringMatching(/not applied/) }),
      ]);
    },
  );

  it("reaches onToolsChanged from a modern stdio server", async () => {
    const changes: McpToolsChange[] = [];
    const loaded = await loadPackage(
      mcpToolPackage(
        [{ name: "sd", ...stdio({ era: "modern", tools: 5, changeToolsOnCall: "list_invoice" }) }],
        {
          onToolsChanged: (change) => changes.push(change),
        },
      ),
    );
    await loaded.call("mcp__sd__list_invoice", {});
    expect(await eventually(() => changes.length > 0)).toBe(true);
    expect(changes[0]).toMatchObject({
      added: ["mcp__sd__added_tool_1"],
      changed: ["mcp__sd__create_invoice"],
    });
  });
});

/** The stdio double, logging its calls into the workspace the package runs in (its cwd). */
function stdio(options: Parameters<typeof mcpServerDoubleCommand>[0]) {
  const { command, args } = mcpServerDoubleCommand({ ...options, callLog: "calls.jsonl" });
  return { command, args: [...args] };
}

async function calls(workspace: string): Promise<unknown[]> {
  const text = await readFile(join(workspace, "calls.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}
