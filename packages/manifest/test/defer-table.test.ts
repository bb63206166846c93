import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

// Deferred tools in the manifest (docs/tools-deferred.md): `defer` per MCP server and per tool
// package, `[tools] defer_auto_share` for "auto".

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
  await t.mkdir("proj/.podkit");
});
afterEach(async () => {
  await t.cleanup();
});

const load = (file: string) => loadManifest({ file, overlays: [], env: t.env("proj") });

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

describe("defer", () => {
  it("is off by default, with a share of a tenth of the context window for auto", async () => {
    const loaded = await load(
      await t.write("proj/a.toml", `${MINIMAL}[[mcp.server]]\nname = "gh"\ncommand = "gh-mcp"\n`),
    );
    expect(loaded.manifest.tools.defer).toEqual({});
    expect(loaded.manifest.tools.defer_auto_share).toBe(0.1);
    expect(loaded.provenance.get("tools.defer_auto_share")).toMatchObject({ layer: { kind: "builtin" } });
    expect(loaded.manifest.mcp.server[0]?.defer).toBeUndefined();
  });

  it('takes true, false or "auto" per server and per listed package', async () => {
    const loaded = await load(
      await t.write(
        "proj/b.toml",
        `${MINIMAL}[tools]\npackages = ["@acme/jira", "./local.js"]\ndefer_auto_share = 0.25\n[tools.defer]\n"@acme/jira" = "auto"\n"./local.js" = true\n[[mcp.server]]\nname = "gh"\ncommand = "gh-mcp"\ndefer = "auto"\n[[mcp.server]]\nname = "fs"\nurl = "http://127.0.0.1:9/mcp"\ndefer = false\n`,
      ),
    );
    expect(loaded.manifest.tools.defer).toEqual({ "@acme/jira": "auto", "./local.js": true });
    expect(loaded.manifest.tools.defer_auto_share).toBe(0.25);
    expect(loaded.manifest.mcp.server.map((s) => s.defer)).toEqual(["auto", false]);
  });

  it("a bad value is an error naming the file, the line and the key", async () => {
    const file = await t.write(
      "proj/c.toml",
      `${MINIMAL}[[mcp.server]]\nname = "gh"\ncommand = "gh-mcp"\ndefer = "sometimes"\n`,
    );
    const error = await failure(load(file));
    expect(error.file).toBe(file);
    expect(error.keyPath).toBe("mcp.server[0].defer");
    expect(error.line).toBe(8);
    expect(error.message).toContain('expected true, false or "auto"');
  });

  it("defer_auto_share must be a share above 0 and at most 1", async () => {
    for (const value of ["0", "1.5", '"half"']) {
      const error = await failure(
        load(await t.write("proj/d.toml", `${MINIMAL}[tools]\ndefer_auto_share = ${value}\n`)),
      );
      expect(error.keyPath).toBe("tools.defer_auto_share");
    }
  });

  it("a deferral for a package the manifest does not list is an error, not a no-op", async () => {
    const error = await failure(
      load(
        await t.write(
          "proj/e.toml",
          `${MINIMAL}[tools]\npackages = ["@acme/jira"]\n[tools.defer]\n"@acme/jria" = true\n`,
        ),
      ),
    );
    expect(error.keyPath).toBe('tools.defer."@acme/jria"');
    expect(error.message).toMatch(/which tools.packages does not list \(it lists "@acme\/jira"\)/);
  });
});
