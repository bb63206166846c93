import { describe, expect, it } from "vitest";
import { mcpToolPackage } from "../../src/index.js";
import { eventually, eventuallyAsync, fixturePids, loadPackage, startHttpFixture } from "./support.js";

const TOKEN = "s3cret-token-value";

/** An HTTP `[[mcp.server]]` whose Authorization header comes from the variable FX_TOKEN. */
function httpServer(url: string, extra: { timeout_ms?: number } = {}) {
  return { name: "web", url, headers_env: { Authorization: "FX_TOKEN" }, ...extra };
}

describe("MCP server over Streamable HTTP on 127.0.0.1", () => {
  it("lists and calls tools with the header taken from the named environment variable", async () => {
    const fixture = await startHttpFixture({ FIXTURE_TOKEN: TOKEN });
    const loaded = await loadPackage(mcpToolPackage([httpServer(fixture.url)]), {
      FX_TOKEN: `Bearer ${TOKEN}`,
    });

    expect(loaded.names).toContain("mcp__web__echo");
    expect(loaded.names).toHaveLength(8);
    expect(await loaded.call("mcp__web__echo", { text: "over http" })).toEqual({
      summary: "echo: over http",
    });
    expect(await loaded.call("mcp__web__fail", { reason: "nope" })).toEqual({
      summary: "mcp__web__fail failed: refused: nope",
      is_error: true,
    });
    expect(loaded.warnings).toEqual([]);
  });

  it("a wrong token is refused by the server (the header really is sent); neither it nor the URL's query is reported", async () => {
    const fixture = await startHttpFixture({ FIXTURE_TOKEN: TOKEN });
    const loaded = await loadPackage(mcpToolPackage([httpServer(`${fixture.url}?key=url-secret-456`)]), {
      FX_TOKEN: "Bearer wrong-value-123",
    });

    expect(loaded.names).toEqual([]);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatchObject({ code: "mcp.server_unavailable", source: "mcp:web" });
    expect(loaded.warnings[0]?.message).toMatch(/401|Unauthorized|bearer token/i);
    expect(loaded.warnings[0]?.message).not.toContain("wrong-value-123");
    expect(loaded.warnings[0]?.message).not.toContain("url-secret-456");
  });

  it("a header variable that is not set gives a warning naming the variable, and no tools", async () => {
    const fixture = await startHttpFixture({ FIXTURE_TOKEN: TOKEN });
    const loaded = await loadPackage(mcpToolPackage([httpServer(fixture.url)]), {});

    expect(loaded.names).toEqual([]);
    expect(loaded.warnings[0]?.message).toMatch(
      /header "Authorization" takes its value from the environment variable FX_TOKEN, which is not set/,
    );
  });

  it("a call past its timeout is a tool error with a warning", async () => {
    const fixture = await startHttpFixture();
    // The timeout holds for the checks below too: short next to the sleep, long enough for a
    // quick call to be answered on a busy machine (one that timed out would count a second
    // cancellation).
    const loaded = await loadPackage(mcpToolPackage([{ name: "web", url: fixture.url, timeout_ms: 2_000 }]));

    const output = await loaded.call("mcp__web__sleep", { ms: 60_000 });

    expect(output.is_error).toBe(true);
    expect(output.summary).toMatch(/did not answer within 2000 ms/);
    expect(loaded.warnings.map((w) => w.code)).toEqual(["mcp.call_timeout"]);
    // The cancellation is its own POST; wait until the server has processed it.
    expect(
      await eventuallyAsync(async () => (await loaded.call("mcp__web__cancellations", {})).summary === "1"),
    ).toBe(true);
  });

  it("a server killed mid-call gives a tool error and a warning well before the call's timeout", async () => {
    const fixture = await startHttpFixture();
    const loaded = await loadPackage(mcpToolPackage([{ name: "web", url: fixture.url, timeout_ms: 25_000 }]));
    const { pid } = await fixturePids(loaded, "web");

    const pending = loaded.call("mcp__web__sleep", { ms: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(pid, "SIGKILL");
    const output = await pending;

    expect(output.is_error).toBe(true);
    expect(output.summary).toMatch(/mcp__web__sleep failed: MCP server "web" is no longer running/);
    expect(loaded.warnings.map((w) => [w.code, w.source])).toEqual([["mcp.server_exited", "mcp:web"]]);
  });

  it("tools/list_changed over the session's event stream is reported, not applied", async () => {
    const fixture = await startHttpFixture();
    const loaded = await loadPackage(mcpToolPackage([{ name: "web", url: fixture.url }]));
    const before = loaded.server.names();

    // The notification travels on the session's GET event stream, which the client opens on its own
    // schedule; a change made before it is open is lost, so keep changing until one arrives.
    const reported = await eventuallyAsync(async () => {
      expect((await loaded.call("mcp__web__add_tool", {})).summary).toBe("added");
      return loaded.warnings.some((w) => w.code === "mcp.tools_changed");
    });

    expect(reported).toBe(true);
    expect(loaded.warnings.filter((w) => w.code === "mcp.tools_changed")).toHaveLength(1);
    expect(loaded.server.names()).toEqual(before);
  });

  it("closing the tools ends the server-side session", async () => {
    const fixture = await startHttpFixture();
    const loaded = await loadPackage(mcpToolPackage([{ name: "web", url: fixture.url }]));
    const opened = fixture.lines
      .find((line) => line.startsWith("SESSION_OPENED "))
      ?.slice("SESSION_OPENED ".length);
    expect(opened).toBeDefined();

    await loaded.close();

    expect(await eventually(() => fixture.lines.includes(`SESSION_CLOSED ${opened}`))).toBe(true);
  });
});
