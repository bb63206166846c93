import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolServer } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import {
  definePodkitToolPackage,
  loadToolPackages,
  ToolPackageExportError,
  ToolPackageNotFoundError,
  type ToolWarning,
} from "../src/index.js";
import { MINIMAL, modelCalls, startDouble, tempRoot } from "./helpers.js";
import { FIXTURE_SERVER, running } from "./mcp/support.js";

const EXAMPLE_POD = resolve(fileURLToPath(import.meta.url), "../../../../examples/tickets-pod");

async function load(manifestFile: string, cwd: string) {
  return loadManifest({ file: manifestFile, env: { cwd, home: join(cwd, ".home"), env: {} } });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: unknown) => error,
  );
}

describe("the example tool package", () => {
  it("is loaded through the example manifest and its tool is called by the model with the manifest's options", async () => {
    const loaded = await load(join(EXAMPLE_POD, "manifest.toml"), EXAMPLE_POD);
    const warnings: ToolWarning[] = [];
    const set = await loadToolPackages(loaded, { warn: (w) => warnings.push(w) });
    expect(set.packages).toEqual(["@podkit/tools", "podkit-tools-tickets"]);
    const server = new ToolServer();
    set.register(server);
    expect(await server.flushPending()).toEqual(["glob", "grep", "read_file", "ticket_get"]);

    const double = await startDouble();
    const results = await modelCalls(double, server, [
      { name: "ticket_get", arguments: { number: 7 } },
      { name: "ticket_get", arguments: { number: 99 } },
    ]);
    // "PK" comes from [tools.options."podkit-tools-tickets"] project = "PK".
    expect(results.map((r) => r.summary)).toEqual([
      "PK-7: bash leaves background processes running [open]",
      "PK-99 does not exist",
    ]);
    const tools = double.requests[0]?.body.tools as { name: string; description: string }[];
    expect(tools.find((tool) => tool.name === "ticket_get")?.description).toContain("Look up a PK ticket");
    await set.close();
    expect(warnings).toEqual([]);
  });
});

describe("loading packages from a manifest", () => {
  it("a missing package is an error naming it, the manifest that lists it and where it was looked for", async () => {
    const t = await tempRoot();
    const manifest = await t.write(
      "ws/pods/pod.toml",
      `${MINIMAL}[tools]\npackages = ["podkit-tools-nowhere"]\n`,
    );
    const error = await failure(loadToolPackages(await load(manifest, t.path("ws")), { warn: () => {} }));
    expect(ToolPackageNotFoundError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('tool package "podkit-tools-nowhere"');
    expect(message).toContain(`listed in ${manifest}`);
    expect(message).toContain(
      `looked in ${t.path("ws/pods/node_modules/podkit-tools-nowhere")}, ${t.path("ws/node_modules/podkit-tools-nowhere")}`,
    );
    expect((error as ToolPackageNotFoundError).hint).toContain("npm install podkit-tools-nowhere");
  });

  it("a module without a package export is an error saying what it exports instead", async () => {
    const t = await tempRoot();
    await t.write(
      "ws/tools/bad.mjs",
      "export default { name: 'x', tools() { return []; } };\nexport const helper = 1;\n",
    );
    const manifest = await t.write("ws/pod.toml", `${MINIMAL}[tools]\npackages = ["./tools/bad.mjs"]\n`);
    const error = await failure(loadToolPackages(await load(manifest, t.path("ws")), { warn: () => {} }));
    expect(ToolPackageExportError.isInstance(error)).toBe(true);
    expect(ToolPackageNotFoundError.isInstance(error)).toBe(false);
    const message = (error as Error).message;
    expect(message).toContain(
      `tool package "./tools/bad.mjs" (listed in ${manifest}) (${t.path("ws/tools/bad.mjs")}) cannot be used`,
    );
    expect(message).toContain("`default`: an object without the podkit package marker");
    expect(message).toContain("`helper`: a number");
  });

  it("resolves a path package from its manifest's directory, exported as podkitToolPackage, passes its options, runs onClose in reverse order", async () => {
    const t = await tempRoot();
    const toolsUrl = new URL("../src/index.ts", import.meta.url).href;
    await t.write(
      "ws/pods/local.mjs",
      `import { definePodkitToolPackage } from ${JSON.stringify(toolsUrl)};
       export const podkitToolPackage = definePodkitToolPackage({
         name: "local",
         tools(ctx) {
           globalThis.__podkitLocal = { options: ctx.options, workspace: ctx.workspace, closed: [] };
           ctx.onClose(() => { globalThis.__podkitLocal.closed.push("first"); });
           ctx.onClose(() => { throw new Error("second failed"); });
           ctx.onClose(() => { globalThis.__podkitLocal.closed.push("third"); });
           return [() => ({ name: "local_echo", description: "echo", inputSchema: { type: "object" }, execute: () => ({ summary: "ok" }) })];
         },
       });`,
    );
    const manifest = await t.write(
      "ws/pods/pod.toml",
      `${MINIMAL}[tools]\npackages = ["./local.mjs"]\n[tools.options."./local.mjs"]\ngreeting = "hi"\nlimits = { max = 3 }\n`,
    );
    const warnings: ToolWarning[] = [];
    const set = await loadToolPackages(await load(manifest, t.path("ws")), { warn: (w) => warnings.push(w) });
    const state = (
      globalThis as { __podkitLocal?: { options: unknown; workspace: string; closed: string[] } }
    ).__podkitLocal;
    expect(state?.options).toEqual({ greeting: "hi", limits: { max: 3 } });
    expect(state?.workspace).toBe(t.path("ws"));
    await set.close();
    await set.close();
    expect(state?.closed).toEqual(["third", "first"]);
    expect(warnings).toEqual([
      expect.objectContaining({
        code: "tools.close_failed",
        message: expect.stringContaining("second failed"),
      }),
    ]);
  });

  it("takes packages given in code (the MCP seam) after the manifest's, and closes them", async () => {
    const t = await tempRoot();
    const manifest = await t.write("ws/pod.toml", `${MINIMAL}[tools]\nbuiltin = ["read_file"]\n`);
    let closed = false;
    let signal: AbortSignal | undefined;
    const extra = definePodkitToolPackage({
      name: "mcp",
      tools(ctx) {
        signal = ctx.signal;
        ctx.onClose(() => {
          closed = true;
        });
        return [
          () => ({
            name: "mcp__srv__ping",
            description: "ping",
            inputSchema: { type: "object" },
            execute: () => ({ summary: "pong" }),
          }),
        ];
      },
    });
    const set = await loadToolPackages(await load(manifest, t.path("ws")), {
      warn: () => {},
      extraPackages: [extra],
    });
    const server = new ToolServer();
    set.register(server);
    expect(await server.flushPending()).toEqual(["mcp__srv__ping", "read_file"]);
    expect(signal?.aborted).toBe(false);
    await set.close();
    expect(closed).toBe(true);
    expect(signal?.aborted).toBe(true);
  });
});

describe("MCP servers declared in the manifest", () => {
  it("come in as the mcp package without code, and closing the tool set stops their processes", async () => {
    const t = await tempRoot();
    const manifest = await t.write(
      "ws/pod.toml",
      // Outside the sandbox: the fixture server lives in this repository, outside the pod's scope,
      // and the test reads its pid (test/sandbox/ starts a stdio server inside the sandbox).
      `${MINIMAL}[[mcp.server]]\nname = "fx"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FIXTURE_SERVER)}]\n[sandbox]\nbackend = "none"\n`,
    );
    const warnings: ToolWarning[] = [];
    const set = await loadToolPackages(await load(manifest, t.path("ws")), { warn: (w) => warnings.push(w) });
    expect(set.packages).toEqual(["@podkit/tools", "mcp"]);
    const server = new ToolServer();
    set.register(server);
    const names = await server.flushPending();
    expect(names).toContain("mcp__fx__echo");
    const pid = JSON.parse(
      (
        await server.execute(
          { type: "tool_call", call_id: "c1", name: "mcp__fx__pid", arguments: "{}" },
          new AbortController().signal,
        )
      ).summary,
    ).pid as number;
    expect(running(pid)).toBe(true);
    await set.close();
    expect(running(pid)).toBe(false);
    expect(warnings).toEqual([]);
  });
});
