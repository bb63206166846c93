import { describe, expect, it } from "vitest";
import { McpConfigError, type McpServerSpec, mcpToolPackage } from "../../src/index.js";

function configError(servers: McpServerSpec[]): McpConfigError {
  try {
    mcpToolPackage(servers);
  } catch (error) {
    if (McpConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an McpConfigError");
}

describe("[[mcp.server]] entries given to mcpToolPackage", () => {
  it("needs exactly one of command and url", () => {
    expect(configError([{ name: "none" }]).message).toMatch(
      /\[\[mcp.server\]\] "none": give exactly one of `command` .* and `url`/,
    );
    expect(configError([{ name: "both", command: "x", url: "http://127.0.0.1:1/mcp" }]).server).toBe("both");
  });

  it("refuses stdio keys on an HTTP server and headers_env on a stdio server", () => {
    expect(configError([{ name: "h", url: "http://127.0.0.1:1/mcp", env: { A: "b" } }]).message).toMatch(
      /env only apply to a stdio server/,
    );
    expect(
      configError([{ name: "s", command: "x", headers_env: { Authorization: "TOKEN" } }]).message,
    ).toMatch(/`headers_env` only applies to an HTTP server/);
  });

  it("names the key that is wrong", () => {
    expect(configError([{ name: "u", url: "ftp://example.com" }]).message).toMatch(/url: expected an http/);
    expect(configError([{ name: "t", command: "x", timeout_ms: -1 }]).message).toMatch(/timeout_ms/);
    expect(configError([{ name: "bad name", command: "x" }]).message).toMatch(
      /name: expected a name of letters/,
    );
    expect(
      configError([{ name: "h", url: "http://127.0.0.1:1/mcp", headers_env: { Authorization: "not a var" } }])
        .message,
    ).toMatch(/headers_env.Authorization: expected an environment variable name/);
  });

  it("refuses two servers with the same name", () => {
    expect(
      configError([
        { name: "a", command: "x" },
        { name: "a", command: "y" },
      ]).message,
    ).toMatch(/"a": two servers share this name/);
  });

  it("is identified by its marker, not by its name", () => {
    const error = configError([{ name: "none" }]);
    expect(McpConfigError.isInstance(error)).toBe(true);
    expect(McpConfigError.isInstance(Object.assign(new Error("x"), { name: "McpConfigError" }))).toBe(false);
  });
});
