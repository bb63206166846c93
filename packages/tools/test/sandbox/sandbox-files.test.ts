import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bash, LINUX, MCP_FS_SERVER, SECRET, sandboxPod } from "./support.js";

// Real bubblewrap, no mocks. Every denial is shown next to its positive control: the same command
// without the rule (or without the sandbox) does what the rule stops.
describe.skipIf(!LINUX)("the sandbox keeps what the scope denies unreadable to every process", () => {
  it("read_file .env is refused by the scope; positive control: without the deny rule it reads", async () => {
    const denied = await sandboxPod({ deny: [".env"] });
    const refused = await denied.tools.call("read_file", { path: ".env" });
    expect(refused.is_error).toBe(true);
    expect(refused.summary).toContain("denied by the deny rule");
    expect(JSON.stringify(refused)).not.toContain("hunter2");
    const open = await sandboxPod();
    expect((await open.tools.call("read_file", { path: ".env" })).content).toContain(SECRET);
  });

  it("bash cat .env fails; positive control: the same command without the deny rule prints it", async () => {
    const denied = await sandboxPod({ deny: [".env"] });
    const refused = await bash(denied.tools, "cat .env");
    expect(refused.summary).toBe("exit code 1");
    expect(refused.output).toContain("Permission denied");
    expect(refused.output).not.toContain("hunter2");
    const open = await sandboxPod();
    expect(await bash(open.tools, "cat .env")).toMatchObject({
      summary: "exit code 0",
      output: `${SECRET}\n`,
    });
  });

  it("bash python3 open('.env') fails; positive control: without the deny rule it reads", async () => {
    const script = `python3 -c 'print(open(".env").read())'`;
    const denied = await sandboxPod({ deny: [".env"] });
    const refused = await bash(denied.tools, script);
    expect(refused.summary).toBe("exit code 1");
    expect(refused.output).toContain("PermissionError");
    expect(refused.output).not.toContain("hunter2");
    const open = await sandboxPod();
    expect(await bash(open.tools, script)).toMatchObject({ summary: "exit code 0", output: `${SECRET}\n\n` });
  });

  it("bash cp .env ../leaked fails and leaks nothing; positive controls: without the rule cp reads it, without the sandbox it leaks", async () => {
    const denied = await sandboxPod({ deny: [".env"] });
    const refused = await bash(denied.tools, "cp .env ../leaked");
    expect(refused.summary).toBe("exit code 1");
    expect(refused.output).toContain("Permission denied");
    expect(existsSync(join(denied.root, "leaked"))).toBe(false);

    const open = await sandboxPod();
    expect((await bash(open.tools, "cp .env ../leaked && cat ../leaked")).output).toBe(`${SECRET}\n`);
    // Inside the sandbox "../leaked" is a private scratch file: outside the scope, nothing reached the host.
    expect(existsSync(join(open.root, "leaked"))).toBe(false);

    const unsandboxed = await sandboxPod({ backend: "none" });
    expect((await bash(unsandboxed.tools, "cp .env ../leaked")).summary).toBe("exit code 0");
    expect(await readFile(join(unsandboxed.root, "leaked"), "utf8")).toBe(`${SECRET}\n`);
  });

  it("a stdio MCP filesystem server asked for .env fails; positive control: without the deny rule it returns it", async () => {
    const setup = {
      files: { "mcp-fs-server.mjs": MCP_FS_SERVER },
      extra: `[[mcp.server]]\nname = "fs"\ncommand = "${process.execPath}"\nargs = ["mcp-fs-server.mjs"]\n`,
    };
    const denied = await sandboxPod({ ...setup, deny: [".env"] });
    expect(denied.tools.warnings).toEqual([]);
    const refused = await denied.tools.call("mcp__fs__read_text_file", { path: ".env" });
    expect(refused.is_error).toBe(true);
    expect(JSON.stringify(refused)).toContain("EACCES");
    expect(JSON.stringify(refused)).not.toContain("hunter2");
    const open = await sandboxPod(setup);
    const read = await open.tools.call("mcp__fs__read_text_file", { path: ".env" });
    expect(JSON.stringify(read)).toContain(SECRET);
  });
});
