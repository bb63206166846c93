import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AuditRecord } from "../store/audit-log.js";

const run = promisify(execFile);

/** What `[memory] git_commit` did. */
export type GitCommitOutcome =
  | { status: "committed"; commit: string }
  | { status: "skipped"; reason: string };

/**
 * Commits the memory trees after a consolidation run, with the audit reasons in the message, so
 * `git log -p .podkit/memory` shows what changed and why. Only the memory paths are committed;
 * whatever else the user has staged stays staged. Not a git repository → skipped.
 */
export async function commitMemoryChanges(
  workspace: string,
  changes: readonly AuditRecord[],
  signal?: AbortSignal,
): Promise<GitCommitOutcome> {
  const git = (...args: string[]) =>
    run("git", args, { cwd: workspace, ...(signal === undefined ? {} : { signal }) });
  try {
    await git("rev-parse", "--is-inside-work-tree");
  } catch {
    return { status: "skipped", reason: "the workspace is not a git repository" };
  }
  const trees = [".podkit/memory", ".podkit/knowledge"].filter((tree) => existsSync(join(workspace, tree)));
  // Records and their audit log; not staging, nor the bookkeeping of caches and extract recovery.
  const paths = [
    ...trees,
    ":(exclude).podkit/memory/_staging",
    ":(exclude).podkit/memory/.stamp",
    ":(exclude).podkit/memory/_logs/consumed.jsonl",
  ];
  await git("add", "-A", "--", ...paths);
  const staged = await git("diff", "--cached", "--name-only", "--", ...paths);
  if (staged.stdout.trim() === "") return { status: "skipped", reason: "nothing changed" };
  const lines = changes.map((c) => `- ${c.op} ${c.kind} ${c.slug}: ${c.reason}`);
  await git(
    "commit",
    "--no-verify",
    "-m",
    `podkit memory: consolidate (${changes.length} change${changes.length === 1 ? "" : "s"})`,
    "-m",
    lines.join("\n"),
    "--",
    ...paths,
  );
  const head = await git("rev-parse", "HEAD");
  return { status: "committed", commit: head.stdout.trim() };
}
