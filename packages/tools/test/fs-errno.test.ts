import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, stat, symlink } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PodTools, type tempRoot, workspaceTools } from "./helpers.js";

// Every fs tool answers every ordinary file-system error with an error result the model can read,
// never a throw (the tool server would turn a throw into `tool "x" failed: …`). Each situation is
// made on disk and first shown to produce its errno through plain `fs` (the positive control).

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;
let socketServer: Server | undefined;

beforeEach(async () => {
  ({ t, ws, tools } = await workspaceTools("write"));
  await t.write("ws/file.txt", "a line\n");
  await mkdir(join(ws, "adir"));
  await symlink("loop", join(ws, "loop"));
  execFileSync("mkfifo", [join(ws, "pipe")]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer?.listen(join(ws, "sock"), resolve));
});

afterEach(async () => {
  await new Promise((resolve) => socketServer?.close(resolve));
});

type ToolName = "read_file" | "write_file" | "edit_file" | "glob" | "grep";
// The writer last: it may rightly create what the others then find.
const TOOLS: ToolName[] = ["read_file", "edit_file", "glob", "grep", "write_file"];

function argsFor(tool: ToolName, path: string): Record<string, unknown> {
  switch (tool) {
    case "read_file":
      return { path };
    case "write_file":
      return { path, content: "new" };
    case "edit_file":
      return { path, old_string: "a line", new_string: "b line" };
    case "glob":
      return { path, pattern: "*" };
    case "grep":
      return { path, pattern: "line" };
  }
}

/** What each tool must answer: a message it must match, or "ok" where the call rightly succeeds. */
type Expected = Record<ToolName, RegExp | "ok">;

interface Situation {
  errno: string;
  path: () => string;
  /** Shows the situation really produces `errno` through plain fs. */
  proof: () => Promise<unknown>;
  expected: Expected;
  /** Runs the calls under this condition (an unprivileged user, no free descriptors). */
  around?: <T>(calls: () => Promise<T>) => Promise<T>;
}

const every = (message: RegExp): Expected => ({
  read_file: message,
  write_file: message,
  edit_file: message,
  glob: message,
  grep: message,
});

const LONG_NAME = "n".repeat(300);
const LONG_PATH = `${"ab/".repeat(1500)}x.txt`;
const NOT_REGULAR = /is not a regular file \(a FIFO, socket or device\)/;

const SITUATIONS: Situation[] = [
  {
    errno: "ENOENT",
    path: () => "missing/nothing.txt",
    proof: () => readFile(join(ws, "missing/nothing.txt")),
    expected: { ...every(/"missing\/nothing.txt" does not exist/), write_file: "ok" },
  },
  {
    errno: "ENOTDIR",
    path: () => "file.txt/inside",
    proof: () => readFile(join(ws, "file.txt/inside")),
    expected: every(/a parent of "file.txt\/inside" is not a directory/),
  },
  {
    errno: "EISDIR",
    path: () => "adir",
    proof: () => readFile(join(ws, "adir")),
    expected: {
      read_file: /"adir" is a directory; use glob to list it/,
      write_file: /"adir" is a directory/,
      edit_file: /"adir" is a directory; edit_file edits files/,
      glob: "ok",
      grep: "ok",
    },
  },
  {
    errno: "ENAMETOOLONG",
    path: () => LONG_NAME,
    proof: () => readFile(join(ws, LONG_NAME)),
    expected: every(/is too long for the file system/),
  },
  {
    errno: "ENAMETOOLONG",
    path: () => LONG_PATH,
    proof: () => readFile(join(ws, LONG_PATH)),
    expected: every(/is too long for the file system/),
  },
  {
    errno: "ELOOP",
    path: () => "loop",
    proof: () => readFile(join(ws, "loop")),
    expected: every(/denied: ELOOP/),
  },
  {
    errno: "ENXIO",
    path: () => "sock",
    proof: () => open(join(ws, "sock"), constants.O_RDONLY),
    expected: { ...every(NOT_REGULAR), glob: /"sock" is not a directory/ },
  },
  {
    // A FIFO without a writer: a plain open would wait forever, so the proof opens it the way
    // a writer would without blocking, which the kernel refuses.
    errno: "ENXIO",
    path: () => "pipe",
    proof: () => open(join(ws, "pipe"), constants.O_WRONLY | constants.O_NONBLOCK),
    expected: { ...every(NOT_REGULAR), glob: /"pipe" is not a directory/ },
  },
  {
    errno: "EACCES",
    path: () => "locked/inside.txt",
    proof: () => withoutRoot(() => readFile(join(ws, "locked/inside.txt"))),
    expected: every(/denied: EACCES/),
    around: withoutRoot,
  },
  {
    errno: "EACCES",
    path: () => "secret.txt",
    proof: () => withoutRoot(() => readFile(join(ws, "secret.txt"))),
    expected: {
      ...every(/the operating system refused access to "secret.txt" \(EACCES\)/),
      // An atomic write replaces the file by rename, which the writable directory allows.
      write_file: "ok",
      glob: /"secret.txt" is not a directory/,
    },
    around: withoutRoot,
  },
  {
    errno: "EMFILE",
    path: () => "file.txt",
    proof: () => withNoFreeDescriptors(() => open(join(ws, "file.txt"), constants.O_RDONLY)),
    expected: {
      ...every(/"file.txt" could not be opened: too many files are open \(EMFILE\)/),
      glob: /"file.txt" is not a directory/,
    },
    around: withNoFreeDescriptors,
  },
  {
    errno: "EMFILE",
    path: () => ".",
    proof: () => withNoFreeDescriptors(() => readdir(ws)),
    expected: every(/"." could not be opened: too many files are open \(EMFILE\)/),
    around: withNoFreeDescriptors,
  },
];

describe("every fs tool answers every ordinary file-system error with an error result", () => {
  beforeEach(async () => {
    await t.write("ws/locked/inside.txt", "a line\n");
    await chmod(join(ws, "locked"), 0o000);
    await t.write("ws/secret.txt", "a line\n");
    await chmod(join(ws, "secret.txt"), 0o000);
    // Only the bits under test may refuse the unprivileged user.
    await chmod(t.root, 0o755);
    await chmod(ws, 0o777);
  });

  it.each(SITUATIONS.map((s) => [s.errno, s.path().slice(0, 20), s] as const))(
    "%s (%s)",
    async (errno, _label, situation) => {
      await expect(situation.proof(), "positive control").rejects.toMatchObject({ code: errno });
      const path = situation.path();
      const run = situation.around ?? ((calls) => calls());
      const results = await run(async () => {
        const out = [];
        for (const tool of TOOLS) out.push(await tools.call(tool, argsFor(tool, path)));
        return out;
      });
      TOOLS.forEach((tool, i) => {
        const result = results[i] as { summary: string; is_error?: boolean };
        const expected = situation.expected[tool];
        expect(result.summary, tool).not.toMatch(/^tool "\w+" failed/);
        if (expected === "ok") {
          expect(result.is_error, `${tool}: ${result.summary}`).toBeUndefined();
        } else {
          expect(result.is_error, tool).toBe(true);
          expect(result.summary, tool).toMatch(expected);
        }
      });
    },
  );

  it("glob and grep over a tree leave out what they cannot read and say so", async () => {
    await t.write("ws/open/readable.txt", "a line to find\n");
    const results = await withoutRoot(async () => [
      await tools.call("grep", { pattern: "line to find" }),
      await tools.call("glob", { pattern: "**/*.txt" }),
    ]);
    const [grep, glob] = results as [
      { summary: string; content: string },
      { summary: string; content: string },
    ];
    expect(grep.content).toBe("open/readable.txt:1:a line to find");
    expect(grep.summary).toMatch(/left out: permission denied ×2 \(e\.g\. "(locked|secret\.txt)"\)/);
    expect(glob.content.split("\n")).toContain("open/readable.txt");
    expect(glob.summary).toMatch(/1 path left out: permission denied ×1 \(e\.g\. "locked"\)/);
  });
});

describe("a path starting with ~ is refused, not taken as a directory named ~", () => {
  it("positive control: taken literally, ~/notes.md makes a ~ directory in the workspace", async () => {
    const literal = await tools.call("write_file", { path: "./~/notes.md", content: "x" });
    expect(literal.is_error).toBeUndefined();
    expect((await stat(join(ws, "~"))).isDirectory()).toBe(true);
  });

  it.each(["~", "~/notes.md", "~alice/notes.md"])("%s: every fs tool refuses and says why", async (path) => {
    for (const tool of TOOLS) {
      const result = await tools.call(tool, argsFor(tool, path));
      expect(result.is_error, tool).toBe(true);
      expect(result.summary, tool).toContain("which is not expanded: paths are relative to the workspace");
      expect(result.summary, tool).toContain(`write "./${path}"`);
    }
    await expect(stat(join(ws, "~"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(stat(join(ws, "~alice"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a ~ anywhere but at the start is an ordinary name", async () => {
    for (const path of ["a~b.txt", "adir/~", "./~x"]) {
      const written = await tools.call("write_file", { path, content: "tilde\n" });
      expect(written.is_error, path).toBeUndefined();
      expect((await tools.call("read_file", { path })).content, path).toBe("     1\ttilde");
    }
  });
});

/**
 * Runs `calls` as an unprivileged user: the permission bits do not bind root, so when the tests
 * run as root the effective ids are switched to nobody's (65534) for the calls and back after.
 */
async function withoutRoot<T>(calls: () => Promise<T>): Promise<T> {
  if (process.geteuid?.() !== 0) return calls();
  process.setegid?.(65534);
  process.seteuid?.(65534);
  try {
    return await calls();
  } finally {
    process.seteuid?.(0);
    process.setegid?.(0);
  }
}

/**
 * Runs `calls` with every descriptor the process may open in use: the soft limit is lowered to
 * just above what is open (`prlimit`, when installed) and the rest are taken by `/dev/null`
 * until the kernel answers EMFILE; all are given back after.
 */
async function withNoFreeDescriptors<T>(calls: () => Promise<T>): Promise<T> {
  const limits = readFileSync("/proc/self/limits", "utf8").match(/Max open files\s+(\d+)\s+(\d+)/);
  const [soft, hard] = [limits?.[1], limits?.[2]];
  const inUse = (await readdir("/proc/self/fd")).length;
  let lowered = false;
  try {
    execFileSync("prlimit", [`--pid=${process.pid}`, `--nofile=${inUse + 16}:${hard}`]);
    lowered = true;
  } catch {
    // no prlimit: fill up to the soft limit instead
  }
  const held: number[] = [];
  try {
    for (;;) {
      try {
        held.push(openSync("/dev/null", "r"));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EMFILE") break;
        throw error;
      }
    }
    return await calls();
  } finally {
    for (const fd of held) closeSync(fd);
    if (lowered) execFileSync("prlimit", [`--pid=${process.pid}`, `--nofile=${soft}:${hard}`]);
  }
}
