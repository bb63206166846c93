import { join } from "node:path";

/** The four record kinds. */
export const RECORD_KINDS = ["decision", "request", "knowledge", "summary"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The slug of the one summary record (`memory/summary.md`). */
export const SUMMARY_SLUG = "summary";

/** Where the memory of one workspace lives (every path absolute). */
export interface MemoryPaths {
  readonly workspace: string;
  readonly memoryDir: string;
  readonly knowledgeDir: string;
  readonly summaryFile: string;
  readonly stagingDir: string;
  readonly lockFile: string;
  readonly usageLog: string;
  readonly auditLog: string;
  /** One line per consolidation: the staging ids it consumed (extract recovery asks it). */
  readonly consumedLog: string;
}

/** The memory layout under `<workspace>/.podkit/`. */
export function memoryPaths(workspace: string): MemoryPaths {
  const podkit = join(workspace, ".podkit");
  const memoryDir = join(podkit, "memory");
  const stagingDir = join(memoryDir, "_staging");
  return {
    workspace,
    memoryDir,
    knowledgeDir: join(podkit, "knowledge"),
    summaryFile: join(memoryDir, "summary.md"),
    stagingDir,
    lockFile: join(stagingDir, ".consolidation.lock"),
    usageLog: join(memoryDir, "_usage", "events.jsonl"),
    auditLog: join(memoryDir, "_logs", "audit.jsonl"),
    consumedLog: join(memoryDir, "_logs", "consumed.jsonl"),
  };
}

/** The directory holding the records of `kind` (summary: the memory dir itself). */
export function kindDir(paths: MemoryPaths, kind: RecordKind): string {
  switch (kind) {
    case "decision":
      return join(paths.memoryDir, "decisions");
    case "request":
      return join(paths.memoryDir, "requests");
    case "knowledge":
      return paths.knowledgeDir;
    case "summary":
      return paths.memoryDir;
  }
}

/** The file of one record: the file name is the slug. */
export function recordFile(paths: MemoryPaths, kind: RecordKind, slug: string): string {
  return join(kindDir(paths, kind), `${kind === "summary" ? SUMMARY_SLUG : slug}.md`);
}

/** The record's path as people see it in messages, relative to the workspace. */
export function recordLabel(kind: RecordKind, slug: string): string {
  switch (kind) {
    case "decision":
      return `.podkit/memory/decisions/${slug}.md`;
    case "request":
      return `.podkit/memory/requests/${slug}.md`;
    case "knowledge":
      return `.podkit/knowledge/${slug}.md`;
    case "summary":
      return ".podkit/memory/summary.md";
  }
}
