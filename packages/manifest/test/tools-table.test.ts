import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
  await t.mkdir("proj/.podkit");
});
afterEach(async () => {
  await t.cleanup();
});

async function load(file: string, overlays: string[] = []) {
  return loadManifest({ file, overlays, env: t.env("proj") });
}

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

describe("[tools]", () => {
  it("confirm_writes is off by default, settable per layer and a boolean only", async () => {
    const off = await load(await t.write("proj/a.toml", MINIMAL));
    expect(off.manifest.tools.confirm_writes).toBe(false);
    expect(off.provenance.get("tools.confirm_writes")).toMatchObject({ layer: { kind: "builtin" } });
    const on = await load(await t.write("proj/b.toml", `${MINIMAL}[tools]\nconfirm_writes = true\n`));
    expect(on.manifest.tools.confirm_writes).toBe(true);
    const bad = await failure(
      load(await t.write("proj/c.toml", `${MINIMAL}[tools]\nconfirm_writes = "yes"\n`)),
    );
    expect(bad.keyPath).toBe("tools.confirm_writes");
  });

  it("track_files is on by default, settable per layer and a boolean only", async () => {
    const on = await load(await t.write("proj/tf-a.toml", MINIMAL));
    expect(on.manifest.tools.track_files).toBe(true);
    expect(on.provenance.get("tools.track_files")).toMatchObject({ layer: { kind: "builtin" } });
    const off = await load(await t.write("proj/tf-b.toml", `${MINIMAL}[tools]\ntrack_files = false\n`));
    expect(off.manifest.tools.track_files).toBe(false);
    const bad = await failure(load(await t.write("proj/tf-c.toml", `${MINIMAL}[tools]\ntrack_files = 1\n`)));
    expect(bad.keyPath).toBe("tools.track_files");
  });

  it("defaults to the read tools, adds the write tools when a write rule exists, bash off", async () => {
    const readOnly = await load(
      await t.write("proj/a.toml", `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`),
    );
    expect(readOnly.manifest.tools).toMatchObject({
      builtin: ["read_file", "glob", "grep"],
      bash: false,
      bash_env: [],
      packages: [],
      options: {},
    });
    expect(readOnly.provenance.get("tools.builtin")).toMatchObject({
      layer: { kind: "builtin" },
      note: "read tools",
    });

    const writable = await load(
      await t.write("proj/b.toml", `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "write"\n`),
    );
    expect(writable.manifest.tools.builtin).toEqual(["read_file", "glob", "grep", "write_file", "edit_file"]);
  });

  it("resolves packages from the directory of the layer that declared them, with options and provenance", async () => {
    await t.write(
      "proj/.podkit/manifest.toml",
      `[tools]\npackages = ["@acme/workspace-only"]\nbash = true\nbash_env = ["GITHUB_TOKEN"]\n`,
    );
    const file = await t.write(
      "proj/pods/main.toml",
      `${MINIMAL}[tools]\nbuiltin = ["read_file"]\npackages = ["@acme/podkit-tools-jira", "./local-tools.mjs"]\n[tools.options."@acme/podkit-tools-jira"]\nsite = "acme.atlassian.net"\nmax_results = 5\n`,
    );
    const { manifest, provenance, toolPackages } = await load(file);
    expect(manifest.tools.builtin).toEqual(["read_file"]);
    expect(manifest.tools.bash).toBe(true);
    expect(manifest.tools.bash_env).toEqual(["GITHUB_TOKEN"]);
    expect(manifest.tools.packages).toEqual(["@acme/podkit-tools-jira", "./local-tools.mjs"]);
    expect(provenance.get("tools.packages")).toMatchObject({ layer: { kind: "file" }, line: 7 });
    expect(toolPackages).toEqual([
      { specifier: "@acme/podkit-tools-jira", resolveFrom: t.path("proj/pods"), declaredIn: file },
      { specifier: "./local-tools.mjs", resolveFrom: t.path("proj/pods"), declaredIn: file },
    ]);
    expect(manifest.tools.options).toEqual({
      "@acme/podkit-tools-jira": { site: "acme.atlassian.net", max_results: 5 },
    });
    expect(provenance.get("tools.bash")).toMatchObject({ layer: { kind: "workspace" }, line: 3 });
    expect(provenance.get('tools.options."@acme/podkit-tools-jira".site')).toMatchObject({
      layer: { kind: "file" },
    });
  });

  it("is strict: unknown keys, unknown builtin names and options for an undeclared package are errors naming file and key", async () => {
    const unknownKey = await failure(load(await t.write("proj/u.toml", `${MINIMAL}[tools]\nbassh = true\n`)));
    expect(unknownKey.message).toContain("u.toml");
    expect(unknownKey.message).toContain("bassh");

    const badName = await failure(
      load(await t.write("proj/n.toml", `${MINIMAL}[tools]\nbuiltin = ["read_file", "rm_rf"]\n`)),
    );
    expect(badName.message).toContain("tools.builtin[1]");

    const stray = await failure(
      load(await t.write("proj/o.toml", `${MINIMAL}[tools]\npackages = ["a"]\n[tools.options.b]\nx = 1\n`)),
    );
    expect(stray.message).toContain("tools.options.b");
    expect(stray.message).toContain("tools.packages does not list");
    expect(stray.message).toContain("o.toml");
  });

  it("refuses a bash default timeout above the maximum", async () => {
    const error = await failure(
      load(
        await t.write(
          "proj/t.toml",
          `${MINIMAL}[tools]\nbash_timeout_ms = 9000\nbash_max_timeout_ms = 1000\n`,
        ),
      ),
    );
    expect(error.message).toContain("tools.bash_timeout_ms");
  });
});

describe("[[mcp.server]] url, headers_env, timeout_ms", () => {
  it("accepts a Streamable HTTP server whose headers name environment variables", async () => {
    const { manifest } = await load(
      await t.write(
        "proj/m.toml",
        `${MINIMAL}[[mcp.server]]\nname = "remote"\nurl = "http://127.0.0.1:9000/mcp"\nheaders_env = { Authorization = "REMOTE_MCP_AUTH" }\ntimeout_ms = 5000\n`,
      ),
    );
    expect(manifest.mcp.server).toEqual([
      {
        name: "remote",
        url: "http://127.0.0.1:9000/mcp",
        headers_env: { Authorization: "REMOTE_MCP_AUTH" },
        timeout_ms: 5000,
        args: [],
        env: {},
      },
    ]);
  });

  it("needs exactly one of command and url, and refuses a literal header value", async () => {
    const both = await failure(
      load(
        await t.write(
          "proj/b.toml",
          `${MINIMAL}[[mcp.server]]\nname = "x"\ncommand = "srv"\nurl = "http://127.0.0.1/mcp"\n`,
        ),
      ),
    );
    expect(both.message).toContain("sets both command and url");
    const neither = await failure(
      load(await t.write("proj/n.toml", `${MINIMAL}[[mcp.server]]\nname = "x"\n`)),
    );
    expect(neither.message).toContain("needs command");
    const literal = await failure(
      load(
        await t.write(
          "proj/l.toml",
          `${MINIMAL}[[mcp.server]]\nname = "x"\nurl = "http://127.0.0.1/mcp"\nheaders_env = { Authorization = "Bearer abc123" }\n`,
        ),
      ),
    );
    expect(literal.message).toContain("mcp.server[0].headers_env.Authorization");
    expect(literal.message).toContain("environment variable name");
  });
});
