import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { MemoryWorkerError } from "../src/errors.js";
import { memoryPaths } from "../src/records/layout.js";
import { readAuditLog } from "../src/store/audit-log.js";
import { callTool, record, say, stagingFiles, useMemoryWorlds, writeFiles } from "./helpers.js";

const world = useMemoryWorlds();

const SOURCE = { segment_id: "seg-1", range: [1, 8] };

function stagingEntry(id: string, sessionId: string, source = SOURCE) {
  return JSON.stringify({
    id,
    created_at: "2026-04-15T09:00:00Z",
    session_id: sessionId,
    source,
    decisions: [
      {
        topic: "pnpm workspace layout",
        decision: "Use pnpm workspaces",
        reason: "npm hoisting broke builds",
      },
    ],
    discussions: [],
    attempts: [],
    requests: [],
  });
}

const STAGING = ".podkit/memory/_staging";
const decisionContent = (status = "resolved") =>
  record(
    `status: ${status}\nsources:\n  - segment_id: seg-1\n    range: [1, 8]`,
    "Use pnpm workspaces: npm hoisting broke builds.",
  );

async function recordFiles(workspace: string): Promise<string[]> {
  const dir = join(workspace, ".podkit/memory/decisions");
  return readdir(dir).catch(() => []);
}

describe("consolidation", () => {
  it("is gated by the staging thresholds", async () => {
    const w = await world({ files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1") } });
    const result = await runMemoryConsolidation({ ...w.job(), thresholdFiles: 2, thresholdBytes: 1_000_000 });
    expect(result).toMatchObject({ status: "below_threshold", files: 1 });
    expect(w.double.requests).toEqual([]);
    w.double.enqueue(say("Nothing to keep."));
    const bytes = await runMemoryConsolidation({ ...w.job(), thresholdFiles: 2, thresholdBytes: 10 });
    expect(bytes).toMatchObject({ status: "consolidated", consumed: ["a"], changes: [] });
  });

  it("a model writing invalid frontmatter gets the linter's message as a tool error, fixes it, and nothing invalid reaches disk", async () => {
    const w = await world({ files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1") } });
    w.double.enqueue(
      callTool("memory_write", {
        kind: "decision",
        slug: "use-pnpm-workspaces",
        content: decisionContent("done"),
        reason: "new decision",
        staged: ["s1-d1"],
      }),
      callTool("memory_write", {
        kind: "decision",
        slug: "use-pnpm-workspaces",
        content: decisionContent("resolved"),
        reason: "new decision",
        staged: ["s1-d1"],
      }),
      say("Integrated."),
    );
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result.status).toBe("consolidated");
    const toolResult = w.double.requests[1]?.body.messages.at(-1).content[0];
    expect(toolResult).toMatchObject({ type: "tool_result", is_error: true });
    expect(JSON.stringify(toolResult.content)).toContain("memory write rejected by the linter");
    expect(JSON.stringify(toolResult.content)).toContain("(status): Invalid option");
    const text = await readFile(join(w.workspace, ".podkit/memory/decisions/use-pnpm-workspaces.md"), "utf8");
    expect(text).toContain("status: resolved");
    const audit = await readAuditLog(memoryPaths(w.workspace));
    expect(audit.map((a) => [a.status, a.after_hash === null])).toEqual([
      ["rejected", true],
      ["applied", false],
    ]);
  });

  it("success deletes only the consumed staging files, then the lock", async () => {
    const w = await world({ files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1") } });
    w.double.enqueue(
      callTool("memory_write", {
        kind: "decision",
        slug: "use-pnpm",
        content: decisionContent(),
        reason: "r",
        staged: ["s1-d1"],
      }),
      say("done"),
    );
    const lateArrival = stagingEntry("b", "s2");
    const result = await runMemoryConsolidation({
      ...w.job(),
      force: true,
      // A staging file written while the run holds the lock is not part of it.
      onStart: () =>
        execFileSync("node", [
          "-e",
          `require("fs").writeFileSync(${JSON.stringify(join(w.workspace, STAGING, "b.json"))}, ${JSON.stringify(lateArrival)})`,
        ]),
    });
    expect(result).toMatchObject({ status: "consolidated", consumed: ["a"] });
    expect((await stagingFiles(w.workspace)).map((s) => s.id)).toEqual(["b"]);
    expect(existsSync(memoryPaths(w.workspace).lockFile)).toBe(false);
  });

  it("its own reads are not usage: consolidation leaves the usage report unchanged", async () => {
    const w = await world({
      files: {
        [`project/${STAGING}/a.json`]: stagingEntry("a", "s1"),
        "project/.podkit/memory/decisions/use-pnpm.md": decisionContent().replace(
          "---\nstatus",
          "---\ncreated_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\nstatus",
        ),
      },
    });
    w.double.enqueue(
      callTool("memory_read", { kind: "decision", slug: "use-pnpm" }),
      callTool("memory_query", { query: "pnpm" }),
      say("Already integrated."),
    );
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result.status).toBe("consolidated");
    expect(JSON.stringify(w.double.requests[1]?.body.messages)).toContain("Use pnpm workspaces");
    expect(existsSync(memoryPaths(w.workspace).usageLog)).toBe(false);
  });

  it("a failing worker keeps staging, removes the lock and leaves no partial records", async () => {
    const w = await world({ files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1") } });
    w.double.enqueue(
      callTool("memory_write", {
        kind: "decision",
        slug: "use-pnpm",
        content: decisionContent(),
        reason: "r",
        staged: ["s1-d1"],
      }),
      { fault: { kind: "status", status: 500 } },
    );
    const error = await runMemoryConsolidation({ ...w.job(), force: true }).catch((e) => e);
    expect(MemoryWorkerError.isInstance(error)).toBe(true);
    expect(error.job).toBe("consolidate");
    // The first write was accepted by the tool (the model saw success) …
    expect(JSON.stringify(w.double.requests[1]?.body.messages.at(-1))).toContain(
      "created .podkit/memory/decisions/use-pnpm.md",
    );
    // … but nothing of the failed run reached disk.
    expect(await recordFiles(w.workspace)).toEqual([]);
    expect(existsSync(memoryPaths(w.workspace).auditLog)).toBe(false);
    expect((await stagingFiles(w.workspace)).map((s) => s.id)).toEqual(["a"]);
    expect(existsSync(memoryPaths(w.workspace).lockFile)).toBe(false);
  });

  it("gives decisions and requests in full up to the input budget, newest first, and lists the rest by slug", async () => {
    const decisionAt = (day: string, body: string) =>
      record(
        `created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-${day}T10:00:00Z\nstatus: open\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
        body,
      );
    const w = await world({
      files: {
        [`project/${STAGING}/a.json`]: stagingEntry("a", "s1"),
        "project/.podkit/memory/decisions/old-one.md": decisionAt("01", `OLD ${"o".repeat(300)}`),
        "project/.podkit/memory/decisions/new-one.md": decisionAt("09", `NEW ${"n".repeat(300)}`),
      },
    });
    w.double.enqueue(say("done"));
    await runMemoryConsolidation({ ...w.job(), force: true, fullTextBudget: 500 });
    const input = w.double.requests[0]?.body.messages[0].content[0].text as string;
    expect(input).toContain(`### new-one\n\n---`);
    expect(input).not.toContain("### old-one");
    expect(input).toContain("1 more not shown in full (over the input budget); read them with memory_read");
    expect(input).toContain(`- old-one: OLD ooo`);
  });

  it("commits the memory trees with the reasons when git_commit is on", async () => {
    const w = await world({
      files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1"), "project/README.md": "x\n" },
    });
    const git = (...args: string[]) => execFileSync("git", args, { cwd: w.workspace, encoding: "utf8" });
    git("init", "-q");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init");
    git("add", "README.md");
    w.double.enqueue(
      callTool("memory_write", {
        kind: "decision",
        slug: "use-pnpm",
        content: decisionContent(),
        reason: "durable build policy",
        staged: ["s1-d1"],
      }),
      say("done"),
    );
    process.env.GIT_AUTHOR_NAME = process.env.GIT_COMMITTER_NAME = "t";
    process.env.GIT_AUTHOR_EMAIL = process.env.GIT_COMMITTER_EMAIL = "t@example.com";
    const result = await runMemoryConsolidation({ ...w.job(), force: true, gitCommit: true });
    expect(result).toMatchObject({ status: "consolidated", git: { status: "committed" } });
    expect(git("log", "-1", "--format=%B")).toContain("- create decision use-pnpm: durable build policy");
    expect(git("show", "--name-only", "--format=", "HEAD").trim().split("\n").sort()).toEqual([
      ".podkit/memory/_logs/audit.jsonl",
      ".podkit/memory/decisions/use-pnpm.md",
    ]);
    // What the user had staged stays staged, uncommitted.
    expect(git("diff", "--cached", "--name-only").trim()).toBe("README.md");
  });
});

describe("the consolidation lock across processes", () => {
  /** Starts a child consolidation against a double that stalls, and resolves once it holds the lock. */
  async function childHoldingTheLock(workspace: string, baseUrl: string): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, "fixtures/consolidate-child.mjs"), workspace, baseUrl],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("LOCKED")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`child exited early (${code})`)));
    });
    return child;
  }

  it("two processes consolidating at once: one skips with lock_in_use; a dead holder's lock is taken over", async () => {
    const w = await world({ files: { [`project/${STAGING}/a.json`]: stagingEntry("a", "s1") } });
    w.double.enqueue({
      parts: [{ type: "text", text: "…" }],
      fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
    });
    const child = await childHoldingTheLock(w.workspace, w.double.baseUrl);
    try {
      const lock = JSON.parse(await readFile(memoryPaths(w.workspace).lockFile, "utf8"));
      expect(lock).toMatchObject({ pid: child.pid, staging_ids: ["a"] });
      const skipped = await runMemoryConsolidation({ ...w.job(), force: true });
      expect(skipped).toMatchObject({ status: "lock_in_use", holder: { pid: child.pid } });
      // The child's worker is mid-request (the stalled response) when it dies.
      while (w.double.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    // The holder died with the lock in place: stale, taken over by the next run.
    expect(existsSync(memoryPaths(w.workspace).lockFile)).toBe(true);
    w.double.enqueue(say("Nothing to integrate."));
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result).toMatchObject({ status: "consolidated", consumed: ["a"] });
    expect(existsSync(memoryPaths(w.workspace).lockFile)).toBe(false);
  });
});

it("writeFiles helper keeps test setup honest", async () => {
  // Guard: the helper used above really writes where the world reads.
  const w = await world();
  await writeFiles(w.workspace, { [`${STAGING}/x.json`]: stagingEntry("x", "s") });
  expect((await stagingFiles(w.workspace)).map((s) => s.id)).toEqual(["x"]);
});
