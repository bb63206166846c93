import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bash, LINUX, sandboxPod } from "./support.js";

/** Four ways out of the workspace; `ro/` is readable by the scope, `outside/` not named by it. */
function escapes(root: string) {
  return [
    {
      name: "a read-only scope path",
      command: `echo pwned > ${root}/ro/target`,
      file: join(root, "ro/target"),
    },
    {
      name: "a symlink planted in the scope",
      command: `ln -s ${root}/ro/target link && echo pwned > link`,
      file: join(root, "ro/target"),
    },
    {
      name: "/proc/self/root",
      command: `echo pwned > /proc/self/root${root}/ro/target`,
      file: join(root, "ro/target"),
    },
    { name: "cd ..", command: "cd .. && echo pwned > outside/kept", file: join(root, "outside/kept") },
  ];
}

describe.skipIf(!LINUX)("the sandbox lets bash write only where the scope allows writing", () => {
  it("writing outside the scope fails: to a read-only path, through a planted symlink, /proc/self/root and after cd ..", async () => {
    const { root, tools } = await sandboxPod();
    for (const attempt of escapes(root)) {
      const before = await readFile(attempt.file, "utf8");
      const result = await bash(tools, attempt.command);
      expect(result.summary, attempt.name).not.toBe("exit code 0");
      expect(result.output, attempt.name).toMatch(/Read-only file system|No such file or directory/);
      expect(await readFile(attempt.file, "utf8"), attempt.name).toBe(before);
    }
    // The workspace itself is writable.
    expect((await bash(tools, "echo fine > made && cat made")).output).toBe("fine\n");
  });

  it("positive control: without the sandbox each of those writes lands on the host", async () => {
    const { root, tools } = await sandboxPod({ backend: "none" });
    for (const attempt of escapes(root)) {
      await writeFile(attempt.file, "original\n");
      const result = await bash(tools, attempt.command);
      expect(result.summary, attempt.name).toBe("exit code 0");
      expect(await readFile(attempt.file, "utf8"), attempt.name).toBe("pwned\n");
    }
  });

  it("a read-only workspace cannot be written at all; positive control: a writable one can", async () => {
    const readOnly = await sandboxPod({ readOnly: true });
    const refused = await bash(readOnly.tools, "echo x > new-file; touch .env; rm pod.toml");
    expect(refused.output).toContain("Read-only file system");
    expect(existsSync(join(readOnly.ws, "new-file"))).toBe(false);
    expect(existsSync(join(readOnly.ws, "pod.toml"))).toBe(true);
    const writable = await sandboxPod();
    await bash(writable.tools, "echo x > new-file");
    expect(existsSync(join(writable.ws, "new-file"))).toBe(true);
  });

  it("podkit's own files stay read-only inside a writable workspace; positive control: a sibling directory is writable", async () => {
    const { ws, tools } = await sandboxPod({
      files: { ".podkit/manifest.toml": "# workspace layer\n", "notes/a": "a\n" },
    });
    const result = await bash(
      tools,
      "echo '[sandbox]' >> .podkit/manifest.toml; touch .podkit/new; cat .podkit/manifest.toml",
    );
    expect(result.output).toContain("Read-only file system");
    expect(result.output).toContain("# workspace layer");
    expect(await readFile(join(ws, ".podkit/manifest.toml"), "utf8")).toBe("# workspace layer\n");
    expect(existsSync(join(ws, ".podkit/new"))).toBe(false);
    await bash(tools, "echo b >> notes/a");
    expect(await readFile(join(ws, "notes/a"), "utf8")).toBe("a\nb\n");
  });

  it("a denied path cannot be removed, renamed or replaced; positive control: an ordinary file can", async () => {
    const { ws, tools } = await sandboxPod({ deny: [".env"], files: { plain: "p\n" } });
    const result = await bash(tools, "rm -f .env; mv .env moved; ln -sf /etc/hostname .env; cat .env");
    expect(result.output).toContain("Device or resource busy");
    expect(await readFile(join(ws, ".env"), "utf8")).toContain("hunter2");
    await bash(tools, "rm plain");
    expect(existsSync(join(ws, "plain"))).toBe(false);
  });

  it("hides a denied directory's contents; positive control: without the rule they are listed", async () => {
    const files = { "secrets/key.pem": "-----BEGIN KEY-----\n" };
    const denied = await sandboxPod({ deny: ["secrets"], files });
    const refused = await bash(denied.tools, "ls secrets; cat secrets/key.pem; touch secrets/planted");
    expect(refused.output).toContain("Permission denied");
    expect(refused.output).not.toContain("BEGIN KEY");
    expect(existsSync(join(denied.ws, "secrets/planted"))).toBe(false);
    const open = await sandboxPod({ files });
    expect((await bash(open.tools, "ls secrets")).output).toBe("key.pem\n");
  });

  it("shows nothing outside the scope and the system directories; positive control: the scope's read path is readable", async () => {
    const { root, tools } = await sandboxPod();
    await mkdir(join(root, "outside/deep"), { recursive: true });
    await symlink(join(root, "outside/kept"), join(root, "ws/to-outside"));
    const hidden = await bash(
      tools,
      `cat ${root}/outside/kept; cat to-outside; ls ${process.env.HOME ?? "/root"}`,
    );
    expect(hidden.output).not.toContain("outside original");
    expect(hidden.output).toMatch(/No such file or directory/);
    expect((await bash(tools, `cat ${root}/ro/target`)).output).toBe("read-only original\n");
  });
});
