import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { symlink } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { type BlobWriter, type FileChange, parseFilesChanged } from "../src/index.js";
import { MINIMAL, podTools, tempRoot } from "./helpers.js";

// File tracking at the tools' level (docs/rewind.md, "What is tracked"): bash's scan, its bounds
// and fallback, and what it never reads. The pod's tests cover the log entries.

const LINUX = process.platform === "linux";
const sha = (content: string | Uint8Array) => `sha256:${createHash("sha256").update(content).digest("hex")}`;

/** Content-addressed bytes in memory, as the session store's blobs keep them on disk. */
function memoryBlobs(): BlobWriter & { readonly stored: Map<string, Buffer> } {
  const stored = new Map<string, Buffer>();
  return {
    stored,
    async put(bytes) {
      const digest = sha(bytes);
      stored.set(digest, Buffer.from(bytes));
      return digest;
    },
  };
}

/** A workspace `ws` with `files`, a manifest granting write on it plus `extra`, and its tools with tracking. */
async function trackedWorkspace(
  files: Record<string, string>,
  options: { extra?: string; sandbox?: boolean; maxFiles?: number } = {},
) {
  const t = await tempRoot();
  for (const [rel, text] of Object.entries(files)) await t.write(`ws/${rel}`, text);
  const manifest = await t.write(
    "ws/.podkit/manifest.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = ".."\npermission = "write"\n${options.extra ?? ""}[tools]\nbash = true\nbuiltin = ["read_file", "write_file", "edit_file"]\n${
      options.sandbox === true ? "" : `[sandbox]\nbackend = "none"\n`
    }`,
  );
  const blobs = memoryBlobs();
  const tools = await podTools(manifest, t.path("ws"), {
    blobs,
    ...(options.maxFiles === undefined
      ? {}
      : { trackingLimits: { maxFiles: options.maxFiles, maxBytes: 1 << 20 } }),
  });
  const bash = async (command: string) => (await tools.callUncapped("bash", { command })).fileChanges ?? [];
  return { t, ws: t.path("ws"), tools, blobs, bash };
}

describe("bash's changes", () => {
  it("a deletion, a new file in a new directory and a rewrite are found; a touch and a read are not", async () => {
    const { bash, blobs } = await trackedWorkspace({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    expect(
      await bash("rm a.txt && mkdir -p deep/er && printf 'n' > deep/er/n.bin && echo C > c.txt"),
    ).toEqual([
      { path: "a.txt", before: sha("a\n"), after: null },
      { path: "c.txt", before: sha("c\n"), after: sha("C\n") },
      { path: "deep/er/n.bin", before: null, after: sha("n") },
    ]);
    expect(await bash("touch b.txt && cat b.txt c.txt && ls -R")).toEqual([]);
    // The before of the deleted file was stored before the command ran (the first scan stored it).
    expect(blobs.stored.get(sha("a\n"))?.toString()).toBe("a\n");
  });

  it("a rewrite that keeps the size and the modification time is still found (the change time gives it away)", async () => {
    const { bash } = await trackedWorkspace({ "same.txt": "aaaa\n" });
    expect(await bash("sleep 0.1; printf 'bbbb\\n' > x && touch -r same.txt x && mv x same.txt")).toEqual([
      { path: "same.txt", before: sha("aaaa\n"), after: sha("bbbb\n") },
    ]);
    expect(
      await bash(
        "printf 'cccc\\n' > same.txt.tmp && touch -r same.txt same.txt.tmp && cat same.txt.tmp > same.txt; rm same.txt.tmp",
      ),
    ).toEqual([{ path: "same.txt", before: sha("bbbb\n"), after: sha("cccc\n") }]);
  });

  // Root lists any directory, whatever its mode.
  it.skipIf(process.getuid?.() === 0)(
    "a directory that can no longer be listed hides its files; it does not delete them",
    async () => {
      const { bash } = await trackedWorkspace({ "locked/a.txt": "a\n", "open.txt": "o\n" });
      expect(await bash("chmod 000 locked")).toEqual([]);
      expect(await bash("chmod 755 locked && rm locked/a.txt")).toEqual([
        { path: "locked/a.txt", before: sha("a\n"), after: null },
      ]);
    },
  );

  it("an edit made outside any call is not counted as the next command's", async () => {
    const { bash, t } = await trackedWorkspace({ "x.txt": "x\n" });
    await bash("true");
    await t.write("ws/x.txt", "edited by a person\n");
    // Long enough ago that the kernel's change time is before the command's margin.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await bash("echo y > y.txt")).toEqual([{ path: "y.txt", before: null, after: sha("y\n") }]);
    // The index followed the outside edit: the next change's before is the edited content.
    expect(await bash("echo z > x.txt")).toEqual([
      { path: "x.txt", before: sha("edited by a person\n"), after: sha("z\n") },
    ]);
  }, 15_000);

  it("a write_file made while a command runs is the file tool's, not the command's", async () => {
    const { tools, bash } = await trackedWorkspace({ "w.txt": "w\n" });
    const command = bash("sleep 0.4; echo b > b.txt");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const written = await tools.callUncapped("write_file", { path: "w.txt", content: "W\n" });
    expect(written.fileChanges).toEqual([{ path: "w.txt", before: sha("w\n"), after: sha("W\n") }]);
    expect(await command).toEqual([{ path: "b.txt", before: null, after: sha("b\n") }]);
  });

  it("the changes of a command whose call was aborted are reported by the next command", async () => {
    const { tools, bash } = await trackedWorkspace({});
    const abort = new AbortController();
    const running = tools.server.executeUncapped(
      {
        type: "tool_call",
        call_id: "call-aborted",
        name: "bash",
        arguments: '{"command":"echo early > early.txt; sleep 5"}',
      },
      abort.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    abort.abort();
    await running.catch(() => undefined);
    expect(await bash("echo late > late.txt")).toEqual([
      { path: "early.txt", before: null, after: sha("early\n") },
      { path: "late.txt", before: null, after: sha("late\n") },
    ]);
  });
});

describe("a stdio MCP server's writes", () => {
  it("a call of a tool that may change things is tracked like a command; one that claims to be read-only is not", async () => {
    const server = new URL("./fixtures/mcp-writer-server.mjs", import.meta.url).pathname;
    const { tools } = await trackedWorkspace(
      {},
      {
        extra: `[[mcp.server]]\nname = "w"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(server)}]\n`,
      },
    );
    const wrote = await tools.callUncapped("mcp__w__write", { path: "out.txt", text: "from mcp\n" });
    expect(wrote.fileChanges).toEqual([{ path: "out.txt", before: null, after: sha("from mcp\n") }]);
    expect((await tools.callUncapped("mcp__w__note", { text: "n\n" })).fileChanges).toBeUndefined();
  }, 30_000);
});

describe("what the scan never reads", () => {
  it("a symbolic link is not followed out of the workspace; positive control: the command did reach the outside file through it", async () => {
    const { t, ws, bash, blobs } = await trackedWorkspace({ "in.txt": "in\n" });
    await t.write("outside/secret.txt", "outside secret\n");
    await symlink(t.path("outside/secret.txt"), `${ws}/link.txt`);
    await symlink(t.path("outside"), `${ws}/linked-dir`);
    const changes = await bash(
      "echo 'changed secret' > link.txt; echo more > linked-dir/more.txt; cat link.txt",
    );
    expect(changes).toEqual([]);
    // The command really changed the outside files through the links.
    expect(execFileSync("cat", [t.path("outside/secret.txt"), t.path("outside/more.txt")]).toString()).toBe(
      "changed secret\nmore\n",
    );
    for (const content of ["outside secret\n", "changed secret\n", "more\n"])
      expect(blobs.stored.has(sha(content))).toBe(false);
  });

  it("a file the scope denies is never read into the blobs; positive control: without the deny rule it is tracked", async () => {
    for (const denied of [true, false]) {
      const { bash, blobs } = await trackedWorkspace(
        { ".env": "KEY=first-secret\n" },
        denied ? { extra: `[[scope.deny]]\ntarget = "../.env"\npermission = "read"\n` } : {},
      );
      const changes = await bash("echo KEY=second-secret > .env");
      const leaked = [...blobs.stored.values()].some((bytes) => bytes.toString().includes("secret"));
      expect({ changes: changes.length, leaked }).toEqual(
        denied ? { changes: 0, leaked: false } : { changes: 1, leaked: true },
      );
    }
  });

  it("podkit's own directory is not tracked", async () => {
    const { bash } = await trackedWorkspace({});
    expect(await bash("echo x > .podkit/made.txt")).toEqual([]);
  });
});

describe("the bounds", () => {
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}.txt`, `file ${i}\n`]));

  it("beyond them, outside a git work tree and without a sandbox: nothing is recorded and one warning says why", async () => {
    const { bash, tools } = await trackedWorkspace(many, { maxFiles: 5 });
    expect(await bash("rm f1.txt")).toEqual([]);
    expect(await bash("rm f2.txt")).toEqual([]);
    const skipped = tools.warnings.filter((w) => w.code === "files.tracking_skipped");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]?.message).toMatch(
      /^file tracking skipped: the tracked part of the workspace holds more than 5 files or 1 MiB, and the git fallback cannot be used: there is no active sandbox/,
    );
    // The file tools still record their own writes.
    expect(
      (await tools.callUncapped("write_file", { path: "f3.txt", content: "new\n" })).fileChanges,
    ).toEqual([{ path: "f3.txt", before: sha("file 3\n"), after: sha("new\n") }]);
  });

  it.skipIf(!LINUX)(
    "beyond them in a git work tree: git status (run in the sandbox) finds the changes, ignored files aside",
    async () => {
      const { ws, bash, tools } = await trackedWorkspace(
        { ...many, ".gitignore": "ignored/\n", "dirty.txt": "dirty before\n" },
        { maxFiles: 5, sandbox: true },
      );
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
          cwd: ws,
          stdio: "pipe",
        });
      git("init", "-q");
      git("add", "-A");
      git("commit", "-qm", "base");
      execFileSync("sh", ["-c", "echo 'dirty now' > dirty.txt"], { cwd: ws });
      const changes = await bash(
        "rm f1.txt && sed -i 's/file/FILE/' f2.txt && echo n > n.txt && echo again >> dirty.txt && mkdir ignored && echo i > ignored/i.txt",
      );
      expect(changes).toEqual([
        { path: "dirty.txt", before: sha("dirty now\n"), after: sha("dirty now\nagain\n") },
        { path: "f1.txt", before: sha("file 1\n"), after: null },
        { path: "f2.txt", before: sha("file 2\n"), after: sha("FILE 2\n") },
        { path: "n.txt", before: null, after: sha("n\n") },
      ] satisfies FileChange[]);
      expect(tools.warnings.map((w) => w.code)).toContain("files.tracking_git");
      expect(await bash("git status --short >/dev/null; cat f2.txt")).toEqual([]);
    },
    30_000,
  );
});

describe("the files.changed payload read from a log", () => {
  const digest = sha("x");
  const good = {
    call_id: "toolu_1",
    tool: "bash",
    changes: [{ path: "src/a.ts", before: null, after: digest }],
  };

  it("parses what the pod writes", () => {
    expect(parseFilesChanged(good)).toEqual(good);
  });

  it("is refused when a path could leave the workspace, a digest is not one, or nothing changed", () => {
    const change = (override: Record<string, unknown>) => ({
      ...good,
      changes: [{ ...good.changes[0], ...override }],
    });
    for (const path of [
      "../etc/passwd",
      "/etc/passwd",
      "a/../../b",
      "a//b",
      "./a",
      "a/",
      "",
      "a\\b",
      "a\u0000b",
    ])
      expect(parseFilesChanged(change({ path })), path).toBeUndefined();
    for (const after of ["sha256:../../x", `sha256:${"A".repeat(64)}`, "md5:00", 7])
      expect(parseFilesChanged(change({ after })), String(after)).toBeUndefined();
    expect(parseFilesChanged(change({ before: digest }))).toBeUndefined();
    expect(parseFilesChanged({ ...good, changes: [...good.changes, ...good.changes] })).toBeUndefined();
    expect(parseFilesChanged({ ...good, changes: [] })).toBeUndefined();
    expect(parseFilesChanged({ ...good, extra: 1 })).toBeUndefined();
  });
});
