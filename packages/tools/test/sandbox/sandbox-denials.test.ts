import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { definePodkitToolPackage } from "../../src/index.js";
import { bash, LINUX, localHttpServer, MCP_FS_SERVER, SECRET, sandboxPod } from "./support.js";

/**
 * A tool package that starts `cat <path>` through `ctx.sandbox.wrap` and reports what the sandbox
 * refused it with `wrapped.denial`, as docs/sandbox.md tells package authors to.
 */
const catPackage = definePodkitToolPackage({
  name: "cat-package",
  tools: (ctx) => [
    () => ({
      name: "cat_file",
      description: "Print a file with cat.",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      async execute(args: { path: string }) {
        const wrapped = await ctx.sandbox.wrap({
          file: "cat",
          args: [args.path],
          cwd: ctx.workspace,
          env: { PATH: "/usr/bin:/bin" },
        });
        const child = spawn(wrapped.file, [...wrapped.args], { cwd: wrapped.cwd, env: { ...wrapped.env } });
        let output = "";
        child.stdout.on("data", (chunk) => (output += chunk));
        child.stderr.on("data", (chunk) => (output += chunk));
        const code = await new Promise((resolve) => child.on("close", resolve));
        const denied = await wrapped.denial(output, { failed: code !== 0 });
        await wrapped.release();
        return { summary: `cat exited with ${code}`, content: output, ...(denied ? { denied } : {}) };
      },
    }),
  ],
});

const ENV_RULE = { by: "sandbox", rule: 'deny = ".env"' };

// Real bubblewrap. What the sandbox refused a process comes back in the tool output's `denied`,
// for the pod's decision log; each report is shown beside its control: the same command without
// the rule succeeds and reports nothing.
describe.skipIf(!LINUX)("the sandbox reports what it refused a command (`denied`)", () => {
  it("bash cat, python3 and cp of a denied .env report the deny rule; positive control: without the rule nothing is denied", async () => {
    const commands = ["cat .env", `python3 -c 'print(open(".env").read())'`, "cp .env ../leaked"];
    const denied = await sandboxPod({ deny: [".env"] });
    const open = await sandboxPod();
    for (const command of commands) {
      const refused = await bash(denied.tools, command);
      expect(refused.summary, command).toBe("exit code 1");
      expect(refused.denied, command).toMatchObject(ENV_RULE);
      expect(refused.denied?.reason, command).toContain('".env" is hidden by the sandbox');
      expect(JSON.stringify(refused.denied), command).not.toContain("hunter2");
      const allowed = await bash(open.tools, command);
      expect(allowed.summary, command).toBe("exit code 0");
      expect(allowed.denied, command).toBeUndefined();
    }
  });

  it("writing over a denied file reports the deny rule too (the mask refuses writes)", async () => {
    const { tools } = await sandboxPod({ deny: [".env"] });
    const refused = await bash(tools, "echo SECRET=replaced > .env");
    expect(refused.summary).toBe("exit code 1");
    expect(refused.denied).toMatchObject(ENV_RULE);
  });

  it("a write to a read-only scope path reports it as not writable; positive control: a workspace file writes", async () => {
    const { root, tools } = await sandboxPod();
    const refused = await bash(tools, `echo pwned > ${root}/ro/target`);
    expect(refused.summary).toBe("exit code 1");
    expect(refused.denied).toMatchObject({ by: "sandbox", rule: `not writable: ${root}/ro/target` });
    const written = await bash(tools, "echo fine > made");
    expect(written).toMatchObject({ summary: "exit code 0", denied: undefined });
  });

  it("a write outside the scope reports `outside the scope`, and a write deny rule names itself", async () => {
    const { root, tools } = await sandboxPod({
      files: { "hooks/pre-commit": "#!/bin/sh\n" },
      extra: `[[scope.deny]]\ntarget = "hooks"\npermission = "write"\n`,
    });
    const outside = await bash(tools, `touch ${root}/outside/new`);
    expect(outside.denied).toMatchObject({ by: "sandbox", rule: "outside the scope" });
    const hooks = await bash(tools, "echo 'curl evil' >> hooks/pre-commit");
    expect(hooks.denied).toMatchObject({ by: "sandbox", rule: 'deny = "hooks" (write)' });
    // Control: the hook is still readable, so reading it is no denial.
    expect(await bash(tools, "cat hooks/pre-commit")).toMatchObject({
      summary: "exit code 0",
      denied: undefined,
    });
  });

  it("a write to podkit's own files from bash reports `podkit's own files`; positive control: a sibling directory writes", async () => {
    const { tools } = await sandboxPod({
      files: { ".podkit/manifest.toml": "# workspace layer\n", "notes/a": "a\n" },
    });
    const refused = await bash(tools, "echo '[sandbox]' >> .podkit/manifest.toml");
    expect(refused.summary).toBe("exit code 1");
    expect(refused.denied).toMatchObject({ by: "sandbox", rule: "podkit's own files" });
    expect(await bash(tools, "echo b >> notes/a")).toMatchObject({
      summary: "exit code 0",
      denied: undefined,
    });
  });

  it("reading outside the scope reports it when the host has the path", async () => {
    const { root, tools } = await sandboxPod();
    const refused = await bash(tools, `cat ${root}/outside/kept`);
    expect(refused.summary).toBe("exit code 1");
    expect(refused.denied).toMatchObject({ by: "sandbox", rule: "outside the scope" });
  });

  it("is honest: a failure the sandbox did not cause reports nothing, and neither does a refusal the command shrugged off", async () => {
    const { tools } = await sandboxPod({ deny: [".env"] });
    // A missing file, and a file the scope allows: no rule to name.
    expect(await bash(tools, "cat no-such-file")).toMatchObject({
      summary: "exit code 1",
      denied: undefined,
    });
    expect(await bash(tools, "cat pod.toml; exit 3")).toMatchObject({
      summary: "exit code 3",
      denied: undefined,
    });
    // "Permission denied" on a path the plan leaves readable is the host's permission bits, not the sandbox.
    const bits = await bash(tools, "echo x > mine && chmod 000 mine && cat mine");
    expect(bits.output).toContain("Permission denied");
    expect(bits.denied).toBeUndefined();
    // Only failed commands are read (documented): `|| true` hides the refusal from the report.
    expect(await bash(tools, "cat .env || true")).toMatchObject({
      summary: "exit code 0",
      denied: undefined,
    });
  });

  it("a stdio MCP filesystem server asked for .env fails with the denial; positive control: without the rule it reads the secret", async () => {
    const setup = {
      files: { "mcp-fs-server.mjs": MCP_FS_SERVER },
      extra: `[[mcp.server]]\nname = "fs"\ncommand = "${process.execPath}"\nargs = ["mcp-fs-server.mjs"]\n`,
    };
    const denied = await sandboxPod({ ...setup, deny: [".env"] });
    const refused = await denied.tools.callUncapped("mcp__fs__read_text_file", { path: ".env" });
    expect(refused.is_error).toBe(true);
    expect(refused.denied).toMatchObject(ENV_RULE);
    expect(JSON.stringify(refused)).not.toContain("hunter2");
    // A failure of the server that the sandbox did not cause names no rule.
    const missing = await denied.tools.callUncapped("mcp__fs__read_text_file", { path: "no-such-file" });
    expect(missing.is_error).toBe(true);
    expect(missing.denied).toBeUndefined();

    const open = await sandboxPod(setup);
    const read = await open.tools.callUncapped("mcp__fs__read_text_file", { path: ".env" });
    expect(read.content).toContain(SECRET);
    expect(read.denied).toBeUndefined();
  });
});

describe.skipIf(!LINUX)("a tool package reports what the sandbox refused the process it started", () => {
  it("a package's cat of a denied .env reports the deny rule; positive control: without the rule it prints the secret", async () => {
    const denied = await sandboxPod({ deny: [".env"], load: { extraPackages: [catPackage] } });
    const refused = await denied.tools.callUncapped("cat_file", { path: ".env" });
    expect(refused.summary).toBe("cat exited with 1");
    expect(refused.denied).toMatchObject(ENV_RULE);
    const open = await sandboxPod({ load: { extraPackages: [catPackage] } });
    const read = await open.tools.callUncapped("cat_file", { path: ".env" });
    expect(read).toMatchObject({ summary: "cat exited with 0", content: `${SECRET}\n` });
    expect(read.denied).toBeUndefined();
  });
});

describe.skipIf(!LINUX)("the sandbox reports the connections it refused", () => {
  const curl = (url: string) => `curl -sS --max-time 10 ${url}`;

  it("names the host the proxy refused, for the call that asked; positive control: the allowed host is no denial", async () => {
    const server = await localHttpServer();
    const other = await localHttpServer();
    const { tools } = await sandboxPod({ allow: [`127.0.0.1:${server.port}`] });
    const refused = await bash(tools, curl(`http://127.0.0.1:${other.port}/`));
    // curl exits 0 on a 403 without -f: the proxy's record is reported whatever the exit code.
    expect(refused.output).toContain("is not in [sandbox.network] allow");
    expect(refused.denied).toEqual({
      by: "sandbox",
      rule: `network: 127.0.0.1:${other.port} not in [sandbox.network] allow`,
      reason: `the sandbox's network proxy refused a connection to 127.0.0.1:${other.port} (allowed: 127.0.0.1:${server.port})`,
    });
    const tunnel = await bash(tools, `${curl(`http://127.0.0.1:${other.port}/`)} -p`);
    expect(tunnel.denied?.rule).toBe(`network: 127.0.0.1:${other.port} not in [sandbox.network] allow`);
    // Each process has its own entrance to the proxy: the next call is not blamed for the last one's.
    const allowed = await bash(tools, curl(`http://127.0.0.1:${server.port}/`));
    expect(allowed).toMatchObject({
      summary: "exit code 0",
      output: "hello from the host\n",
      denied: undefined,
    });
  });

  it("without a network allow list, a connection that fails is reported as the sandbox's lack of network (best effort)", async () => {
    const server = await localHttpServer();
    const { tools } = await sandboxPod();
    const refused = await bash(tools, `curl -fsS --max-time 10 http://127.0.0.1:${server.port}/`);
    expect(refused.summary).not.toBe("exit code 0");
    expect(refused.denied).toMatchObject({
      by: "sandbox",
      rule: `network: 127.0.0.1:${server.port} not in [sandbox.network] allow`,
    });
    const unresolved = await bash(tools, "curl -fsS --max-time 10 http://example.invalid/");
    expect(unresolved.denied?.rule).toBe("network: example.invalid not in [sandbox.network] allow");
    // Control: without the sandbox the same request succeeds and nothing is denied.
    const bare = await sandboxPod({ backend: "none" });
    expect(await bash(bare.tools, `curl -fsS --max-time 10 http://127.0.0.1:${server.port}/`)).toMatchObject({
      summary: "exit code 0",
      denied: undefined,
    });
  });
});
