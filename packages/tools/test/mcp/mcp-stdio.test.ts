import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { mcpToolPackage } from "../../src/index.js";
import { eventually, fixturePids, loadPackage, running, startLoading, stdioServer } from "./support.js";

describe("MCP server over stdio", () => {
  it("lists the server's tools as mcp__<server>__<tool> with its JSON-Schema inputs", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));

    expect(loaded.names).toEqual([
      "mcp__fx__add_tool",
      "mcp__fx__cancellations",
      "mcp__fx__echo",
      "mcp__fx__env",
      "mcp__fx__fail",
      "mcp__fx__media",
      "mcp__fx__pid",
      "mcp__fx__sleep",
    ]);
    const echo = loaded.server.definitions().find((d) => d.name === "mcp__fx__echo");
    expect(echo?.description).toBe("Echoes its text.");
    expect(echo?.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    expect(loaded.warnings).toEqual([]);
  });

  it("a stdio server runs in the workspace, or in its cwd resolved against the workspace", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    expect((await fixturePids(loaded, "fx")).cwd).toBe(await realpath(loaded.workspace));

    const nested = await loadPackage(mcpToolPackage([{ ...stdioServer("fx"), cwd: ".." }]));
    expect((await fixturePids(nested, "fx")).cwd).toBe(dirname(await realpath(nested.workspace)));
  });

  it("a stdio server inherits the harmless variables from the pod's environment, not process.env, plus its own env", async () => {
    const names = ["HOME", "TERM", "USER", "OWN", "DEPLOY_TOKEN"];
    const seen = async (env: Readonly<Record<string, string | undefined>>) => {
      const loaded = await loadPackage(
        mcpToolPackage([{ ...stdioServer("fx"), env: { OWN: "own-value" } }]),
        env,
      );
      return JSON.parse((await loaded.call("mcp__fx__env", { names })).summary);
    };
    const saved = { TERM: process.env.TERM, USER: process.env.USER };
    process.env.TERM = "term-of-the-process";
    process.env.USER = "user-of-the-process";
    try {
      // Positive control: given process.env, the server does see the process's TERM and USER.
      expect(await seen(process.env)).toMatchObject({
        TERM: "term-of-the-process",
        USER: "user-of-the-process",
      });
      // Given the pod's own environment, it sees that one's HOME and nothing the pod lacks.
      expect(await seen({ HOME: "/home/of-the-pod", DEPLOY_TOKEN: "never-inherited" })).toEqual({
        HOME: "/home/of-the-pod",
        TERM: null,
        USER: null,
        OWN: "own-value",
        DEPLOY_TOKEN: null,
      });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("a call reaches the server and its text comes back", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));

    expect(await loaded.call("mcp__fx__echo", { text: "hello" })).toEqual({ summary: "echo: hello" });
  });

  it("arguments that break the server's schema are refused before the server sees them", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));

    const output = await loaded.call("mcp__fx__echo", { text: 42 });

    expect(output.is_error).toBe(true);
    expect(output.summary).toMatch(/invalid arguments for "mcp__fx__echo": text: must be string/);
  });

  it("an isError result becomes a tool error carrying the server's message", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));

    expect(await loaded.call("mcp__fx__fail", { reason: "no access" })).toEqual({
      summary: "mcp__fx__fail failed: refused: no access",
      is_error: true,
    });
  });

  it("an image goes out as media with a marker where it stood; other binary resources are notes; text resources and links are shown", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));

    const output = await loaded.call("mcp__fx__media", {});

    expect(output.is_error).toBeUndefined();
    expect(output.summary).toMatch(/^mcp__fx__media returned 5 content blocks/);
    expect(output.media).toHaveLength(1);
    expect(output.media?.[0]?.mediaType).toBe("image/png");
    expect(
      Buffer.from(output.media?.[0]?.data ?? [])
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(output.content?.split("\n")).toEqual([
      "a picture and two resources",
      "[image: image/png, 70 bytes; attached]",
      "[resource file:///notes.txt (text/plain)]",
      "note body",
      "[resource file:///blob.bin (application/octet-stream): 4 bytes of binary data; not shown]",
      '[resource link "big.log" file:///big.log (text/plain)]',
    ]);
    expect(output.content).not.toContain("iVBOR");
  });

  it("a server killed mid-call gives a tool error and a warning, and the process carries on", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    const { pid } = await fixturePids(loaded, "fx");

    const pending = loaded.call("mcp__fx__sleep", { ms: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(pid, "SIGKILL");
    const output = await pending;

    expect(output.is_error).toBe(true);
    expect(output.summary).toMatch(/MCP server "fx" is no longer running/);
    expect(loaded.warnings.map((w) => [w.code, w.source])).toEqual([["mcp.server_exited", "mcp:fx"]]);
    // Later calls fail the same clear way instead of hanging.
    expect((await loaded.call("mcp__fx__echo", { text: "again" })).summary).toMatch(/is no longer running/);
  });

  it("a call past its timeout is cancelled on the server and comes back as a tool error with a warning", async () => {
    // The timeout holds for the check below too: short next to the sleep, long enough for a
    // quick call to be answered on a busy machine.
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx", { timeout_ms: 2_000 })]));

    const output = await loaded.call("mcp__fx__sleep", { ms: 60_000 });

    expect(output).toMatchObject({ is_error: true });
    expect(output.summary).toMatch(/mcp__fx__sleep timed out: MCP server "fx" did not answer within 2000 ms/);
    expect(loaded.warnings.map((w) => w.code)).toEqual(["mcp.call_timeout"]);
    // The server got notifications/cancelled and is still usable.
    expect((await loaded.call("mcp__fx__cancellations", {})).summary).toBe("1");
  });

  it("aborting the call's signal cancels the request on the server", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    const abort = new AbortController();

    const pending = loaded.call("mcp__fx__sleep", { ms: 10_000 }, abort.signal);
    // stdio keeps order: once a later call is answered, the sleep is running on the server (a
    // fixed delay could abort before a busy machine even sent it).
    expect((await loaded.call("mcp__fx__echo", { text: "after the sleep" })).summary).toBe(
      "echo: after the sleep",
    );
    abort.abort(new Error("user pressed stop"));

    await expect(pending).rejects.toThrow("user pressed stop");
    // stdio keeps order: the cancellation notification reaches the server before this call.
    expect(await loaded.call("mcp__fx__cancellations", {})).toEqual({ summary: "1" });
  });

  it("tools/list_changed is reported as a warning and the tool list stays as flushed", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    const before = loaded.server.names();

    expect((await loaded.call("mcp__fx__add_tool", {})).summary).toBe("added");

    expect(await eventually(() => loaded.warnings.length > 0)).toBe(true);
    expect(loaded.warnings).toEqual([
      expect.objectContaining({
        code: "mcp.tools_changed",
        source: "mcp:fx",
        message: expect.stringMatching(/not applied/),
      }),
    ]);
    expect(loaded.server.names()).toEqual(before);
    expect(loaded.server.names().some((name) => name.startsWith("mcp__fx__late_"))).toBe(false);
  });

  it("closing the tools leaves no server process", async () => {
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    const { pid } = await fixturePids(loaded, "fx");
    expect(running(pid)).toBe(true);

    await loaded.close();

    expect(running(pid)).toBe(false);
    expect((await loaded.call("mcp__fx__echo", { text: "late" })).summary).toMatch(/was shut down/);
  });

  it("closing also kills what the server left behind (a launcher's grandchild ignoring SIGTERM)", async () => {
    // Positive control: the SDK's own close ends the child it spawned but not the grandchild.
    const bare = new Client({ name: "control", version: "1" });
    const spec = stdioServer("fx", { args: ["--grandchild"] });
    await bare.connect(
      new StdioClientTransport({ command: spec.command, args: spec.args, stderr: "ignore" }),
    );
    const control = JSON.parse(
      ((await bare.callTool({ name: "pid" })).content as { text: string }[])[0]?.text ?? "",
    ) as { pid: number; grandchild: number };
    await bare.close();
    try {
      expect(await eventually(() => !running(control.pid))).toBe(true);
      expect(running(control.grandchild)).toBe(true);
    } finally {
      process.kill(control.grandchild, "SIGKILL");
    }

    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx", { args: ["--grandchild"] })]));
    const { pid, grandchild } = await fixturePids(loaded, "fx");
    expect(grandchild).not.toBeNull();

    await loaded.close();

    expect(running(pid)).toBe(false);
    expect(running(grandchild as number)).toBe(false);
  });

  it("a server that never answers the handshake is given up after the connect timeout and killed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "podkit-mcp-hang-"));
    const pidFile = join(dir, "pid");
    const loaded = await loadPackage(
      mcpToolPackage(
        [
          {
            name: "mute",
            command: process.execPath,
            args: [
              "-e",
              "require('node:fs').writeFileSync(process.env.PID_FILE, String(process.pid)); setInterval(() => {}, 1000);",
            ],
            env: { PID_FILE: pidFile },
          },
        ],
        // Long enough for the server to start and write its pid on a busy machine.
        { connectTimeoutMs: 5_000 },
      ),
    );

    expect(loaded.names).toEqual([]);
    expect(loaded.warnings).toEqual([
      expect.objectContaining({
        code: "mcp.server_unavailable",
        message: expect.stringMatching(/could not be connected: .*timed out/i),
      }),
    ]);
    expect(running(Number(await readFile(pidFile, "utf8")))).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });

  it("closing while a server is still starting abandons it: no warning, no process left", async () => {
    const dir = await mkdtemp(join(tmpdir(), "podkit-mcp-hang-"));
    const pidFile = join(dir, "pid");
    const loading = await startLoading(
      mcpToolPackage([
        {
          name: "mute",
          command: process.execPath,
          args: [
            "-e",
            "require('node:fs').writeFileSync(process.env.PID_FILE, String(process.pid)); setInterval(() => {}, 1000);",
          ],
          env: { PID_FILE: pidFile },
        },
      ]),
    );
    expect(await eventually(() => existsSync(pidFile))).toBe(true);
    const pid = Number(await readFile(pidFile, "utf8"));

    await loading.close();

    expect(await loading.flushing).toEqual([]);
    expect(loading.warnings).toEqual([]);
    expect(running(pid)).toBe(false);
    await rm(dir, { recursive: true, force: true });
  });

  it("servers are started side by side at flush (two that need each other both come up)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "podkit-mcp-rendezvous-"));
    const meeting = (me: string, other: string) => ({
      ...stdioServer(me),
      env: { RENDEZVOUS_DIR: dir, RENDEZVOUS_ME: me, RENDEZVOUS_OTHER: other },
    });

    const loaded = await loadPackage(
      mcpToolPackage([meeting("a", "b"), meeting("b", "a")], { connectTimeoutMs: 20_000 }),
    );

    expect(loaded.warnings).toEqual([]);
    expect(loaded.names).toContain("mcp__a__echo");
    expect(loaded.names).toContain("mcp__b__echo");
    await rm(dir, { recursive: true, force: true });
  });

  it("names providers refuse are made safe or the tool is left out with a warning", async () => {
    const loaded = await loadPackage(
      mcpToolPackage([{ ...stdioServer("fx"), env: { FIXTURE_ODD_NAMES: "1" } }]),
    );

    expect(loaded.names).toContain("mcp__fx__files_read");
    expect(await loaded.call("mcp__fx__files_read", {})).toEqual({ summary: "dotted" });
    expect(loaded.names.some((name) => name.includes("xxxx"))).toBe(false);
    expect(loaded.warnings).toEqual([
      expect.objectContaining({
        code: "mcp.tool_skipped",
        message: expect.stringMatching(/is longer than 64 characters/),
      }),
    ]);
  });

  it("a server that cannot start leaves its tools out with a warning; the other servers still load", async () => {
    const loaded = await loadPackage(
      mcpToolPackage([
        { name: "broken", command: "/nonexistent/mcp-server", args: ["--token", "arg-secret-789"] },
        stdioServer("fx"),
      ]),
    );

    expect(loaded.names).toContain("mcp__fx__echo");
    expect(loaded.names.some((name) => name.startsWith("mcp__broken__"))).toBe(false);
    expect(loaded.warnings[0]?.message).not.toContain("arg-secret-789");
    expect(loaded.warnings).toEqual([
      expect.objectContaining({
        code: "mcp.server_unavailable",
        source: "mcp:broken",
        message: expect.stringMatching(
          /MCP server "broken" \(\/nonexistent\/mcp-server\) could not be connected: .*ENOENT/,
        ),
      }),
    ]);
  });

  it("a server that exits during the handshake is reported with the end of its stderr", async () => {
    const loaded = await loadPackage(
      mcpToolPackage([
        {
          name: "dies",
          command: process.execPath,
          args: ["-e", "console.error('missing GITHUB_TOKEN'); process.exit(3)"],
        },
      ]),
    );

    expect(loaded.names).toEqual([]);
    expect(loaded.warnings[0]?.message).toMatch(
      /could not be connected: .*stderr ended with: missing GITHUB_TOKEN/,
    );
  });
});
