// biome-ignore-all lint/suspicious/noExplicitAny: tool results are read as loose JSON
import { closeSync, constants, readFileSync } from "node:fs";
import { open, readFile, rename, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CheckedDirectory,
  openChecked,
  PathChangedError,
  PathNotVerifiableError,
  readSmallFileChecked,
} from "../src/fs/checked-open.js";
import { MINIMAL, modelCalls, type PodTools, podTools, startDouble, tempRoot } from "./helpers.js";

const SECRET = "SECRET-7f3a9c-do-not-leak";

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;

// outside/         a directory next to the workspace, holding the secret
// ws/private/      inside the workspace, deny read
// ws/docs/         inside the workspace, deny write (read-only)
// ws/link-file     symlink → ../outside/secret.txt
// ws/link-dir      symlink → ../outside
beforeEach(async () => {
  t = await tempRoot();
  ws = t.path("ws");
  await t.write("outside/secret.txt", `${SECRET}\n`);
  await t.write("ws/private/secret.txt", `${SECRET}\n`);
  await t.write("ws/docs/readme.md", "published docs\n");
  await t.write("ws/src/a.txt", "alpha\nbeta\n");
  await symlink("../outside/secret.txt", join(ws, "link-file"));
  await symlink("../outside", join(ws, "link-dir"));
  const manifest = await t.write(
    "ws/pod.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "write"\n[[scope.deny]]\ntarget = "private"\npermission = "read"\n[[scope.deny]]\ntarget = "docs"\npermission = "write"\n`,
  );
  tools = await podTools(manifest, ws);
});

/** Paths that reach the secret one way or another. */
function readCorpus(): string[] {
  return [
    "../outside/secret.txt",
    "src/../../outside/secret.txt",
    "./src/../../outside/secret.txt",
    t.path("outside/secret.txt"),
    "link-file",
    "link-dir/secret.txt",
    "private/secret.txt",
    join(ws, "private/secret.txt"),
  ];
}

/** Paths a write must not reach: the read corpus, read-only files, and new files outside. */
function writeCorpus(): string[] {
  return [
    ...readCorpus(),
    "docs/readme.md",
    "docs/new.md",
    "link-dir/new.txt",
    "../outside/new.txt",
    "missing/../../outside/new.txt",
  ];
}

function calls(): { name: string; arguments: Record<string, unknown> }[] {
  const out: { name: string; arguments: Record<string, unknown> }[] = [];
  for (const path of readCorpus()) {
    out.push({ name: "read_file", arguments: { path } });
    out.push({ name: "grep", arguments: { pattern: "SECRET", path } });
    out.push({ name: "glob", arguments: { pattern: "*", path } });
  }
  for (const path of writeCorpus()) {
    out.push({ name: "write_file", arguments: { path, content: "overwritten" } });
    // Only a prefix of the secret goes in: a wrongly allowed edit would answer with the nearby text.
    out.push({ name: "edit_file", arguments: { path, old_string: SECRET.slice(0, 9), new_string: "gone" } });
  }
  return out;
}

describe("every fs tool refuses the traversal corpus", () => {
  it("positive control: each read-corpus path really reaches the secret through plain fs", async () => {
    for (const path of readCorpus()) {
      const absolute = path.startsWith("/") ? path : join(ws, path);
      expect(await readFile(absolute, "utf8"), path).toContain(SECRET);
    }
  });

  it("refuses every entry when the model calls the tools, names the rule, and never shows the secret", async () => {
    const double = await startDouble();
    const corpus = calls();
    const results = await modelCalls(double, tools.server, corpus);

    expect(results).toHaveLength(corpus.length);
    results.forEach((result, i) => {
      const call = corpus[i] as { name: string; arguments: Record<string, unknown> };
      const label = `${call.name} ${JSON.stringify(call.arguments)}`;
      expect(result.is_error, label).toBe(true);
      expect(result.summary, label).toMatch(/denied|changed while/);
      expect(JSON.stringify(result), label).not.toContain(SECRET);
    });
    // The messages say which rule refused: outside the scope, a deny rule, or read-only.
    const summaries = results.map((r) => r.summary as string);
    expect(summaries).toContainEqual(expect.stringContaining("outside the scope"));
    expect(summaries).toContainEqual(
      expect.stringContaining(`denied by the deny rule on "${join(ws, "private")}" (read)`),
    );
    expect(summaries).toContainEqual(
      expect.stringContaining(`denied by the deny rule on "${join(ws, "docs")}" (write)`),
    );
    expect(summaries).toContainEqual(expect.stringContaining('".." follows'));
    // Nothing was written anywhere.
    expect(await readFile(t.path("outside/secret.txt"), "utf8")).toBe(`${SECRET}\n`);
    expect(await readFile(join(ws, "docs/readme.md"), "utf8")).toBe("published docs\n");
    await expect(readFile(t.path("outside/new.txt"))).rejects.toThrow(/ENOENT/);
    // Nothing reached the provider either.
    expect(JSON.stringify(double.requests.map((r) => r.body))).not.toContain(SECRET);
  });

  it("grep and glob over the whole workspace skip denied files and symlinks out of it", async () => {
    const grep = await tools.call("grep", { pattern: "SECRET|alpha", path: "." });
    expect(grep.content).toContain("src/a.txt:1:alpha");
    expect(JSON.stringify(grep)).not.toContain(SECRET);
    const glob = await tools.call("glob", { pattern: "**/*" });
    expect(glob.content?.split("\n").sort()).toEqual(["docs/readme.md", "pod.toml", "src/a.txt"]);
  });

  it("re-checks a path on every call: a file swapped for a symlink between two calls is refused", async () => {
    await t.write("ws/src/swap.txt", "harmless\n");
    const first = await tools.call("read_file", { path: "src/swap.txt" });
    expect(first.content).toContain("harmless");

    await rm(join(ws, "src/swap.txt"));
    await symlink(t.path("outside/secret.txt"), join(ws, "src/swap.txt"));
    // Positive control: a plain read of the same path now returns the secret.
    expect(await readFile(join(ws, "src/swap.txt"), "utf8")).toContain(SECRET);

    for (const [name, args] of [
      ["read_file", { path: "src/swap.txt" }],
      ["grep", { pattern: "SECRET", path: "src/swap.txt" }],
      ["edit_file", { path: "src/swap.txt", old_string: SECRET, new_string: "x" }],
      ["write_file", { path: "src/swap.txt", content: "x" }],
    ] as const) {
      const result = await tools.call(name, args);
      expect(result.is_error, name).toBe(true);
      expect(result.summary, name).toContain("outside the scope");
      expect(JSON.stringify(result), name).not.toContain(SECRET);
    }
    expect(await readFile(t.path("outside/secret.txt"), "utf8")).toBe(`${SECRET}\n`);
  });

  it("a final component swapped for a symlink after the scope check is not followed at open", async () => {
    const path = await t.write("ws/src/race.txt", "harmless\n");
    // The check approved `path`; then the attacker swaps it.
    await rm(path);
    await symlink(t.path("outside/secret.txt"), path);
    // Positive control: an ordinary open follows the swapped link.
    const naive = await open(path, constants.O_RDONLY);
    expect((await naive.readFile()).toString()).toContain(SECRET);
    await naive.close();

    await expect(openChecked(path, constants.O_RDONLY, "src/race.txt")).rejects.toSatisfy(
      PathChangedError.isInstance,
    );
  });

  it("a parent directory swapped for a symlink after the check is caught by the real-path check", async () => {
    await t.write("ws/sub/file.txt", "harmless\n");
    await t.write("outside/sub-file.txt", `${SECRET}\n`);
    await rm(join(ws, "sub"), { recursive: true });
    await t.write("outside/subdir/file.txt", `${SECRET}\n`);
    await symlink(t.path("outside/subdir"), join(ws, "sub"));
    const naive = await open(join(ws, "sub/file.txt"), constants.O_RDONLY | constants.O_NOFOLLOW);
    expect((await naive.readFile()).toString()).toContain(SECRET); // O_NOFOLLOW alone does not help
    await naive.close();

    await expect(openChecked(join(ws, "sub/file.txt"), constants.O_RDONLY, "sub/file.txt")).rejects.toSatisfy(
      PathChangedError.isInstance,
    );
    // grep's single-file read makes the same check.
    expect(readSmallFileChecked(join(ws, "sub/file.txt"), 1 << 20, { buffer: Buffer.alloc(16) })).toBe(
      "changed",
    );
    expect(
      readSmallFileChecked(join(ws, "src/a.txt"), 1 << 20, { buffer: Buffer.alloc(16) }).toString(),
    ).toBe("alpha\nbeta\n");
  });

  it("grep reads a directory's files through the directory it verified, even if the path is swapped meanwhile", async () => {
    await t.write("ws/sub/file.txt", "harmless\n");
    await t.write("outside/subdir/file.txt", `${SECRET}\n`);
    const directory = CheckedDirectory.open(join(ws, "sub"));
    if (typeof directory === "string") throw new Error(`the directory did not open: ${directory}`);
    await rename(join(ws, "sub"), join(ws, "sub-old"));
    await symlink(t.path("outside/subdir"), join(ws, "sub"));
    // Positive control: the path now leads to the secret.
    expect(await readFile(join(ws, "sub/file.txt"), "utf8")).toContain(SECRET);

    const fd = directory.openFile("file.txt");
    if (typeof fd === "string") throw new Error(`the file did not open: ${fd}`);
    expect(readFileSync(fd, "utf8")).toBe("harmless\n");
    closeSync(fd);
    directory.close();
    // Opened afresh, the swapped path is refused (a symlink is not opened as a directory).
    expect(CheckedDirectory.open(join(ws, "sub"))).toBeTypeOf("string");
  });

  it("every open fails closed when the kernel cannot be asked where a descriptor points", async () => {
    const file = join(ws, "src/a.txt");
    const dir = join(ws, "src");
    // A real directory that is not /proc/self/fd: readlink finds nothing there.
    const blind = t.path("no-proc-here");
    const scratch = { buffer: Buffer.alloc(16) };
    // Positive control: with the kernel's answer every open succeeds.
    const handle = await openChecked(file, constants.O_RDONLY, "src/a.txt");
    expect((await handle.readFile()).toString()).toBe("alpha\nbeta\n");
    await handle.close();
    expect(readSmallFileChecked(file, 1 << 20, scratch).toString()).toBe("alpha\nbeta\n");
    const verified = CheckedDirectory.open(dir);
    expect(typeof verified).not.toBe("string");
    if (typeof verified !== "string") verified.close();

    // Without it, each one refuses: nothing is opened on trust.
    await expect(openChecked(file, constants.O_RDONLY, "src/a.txt", { fdLinks: blind })).rejects.toSatisfy(
      PathNotVerifiableError.isInstance,
    );
    await expect(
      openChecked(join(ws, "src/new.txt"), constants.O_WRONLY | constants.O_CREAT, "src/new.txt", {
        fdLinks: blind,
      }),
    ).rejects.toSatisfy(PathNotVerifiableError.isInstance);
    expect(readSmallFileChecked(file, 1 << 20, scratch, blind)).toBe("unverifiable");
    expect(CheckedDirectory.open(dir, blind)).toBe("unverifiable");
  });
});
