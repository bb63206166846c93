import { defineTool, type Tool, type ToolOutput } from "@podkit/llm-worker";
import { z } from "zod";
import { MemoryError } from "../errors.js";
import { formatDiagnostics } from "../lint/diagnostics.js";
import { RECORD_KINDS, recordLabel } from "../records/layout.js";
import type { MemoryStore } from "../store/memory-store.js";
import { queryKnowledge, queryMemory } from "../store/query-memory.js";

const kind = z.enum(RECORD_KINDS).describe('Record kind: "decision", "request", "knowledge" or "summary"');
const slug = z
  .string()
  .describe('The record\'s slug (its file name without .md); for the summary use "summary"');
const reason = z
  .string()
  .min(1)
  .describe("Why this change is made; recorded in the audit log next to the diff");

const staged = z
  .array(z.string())
  .optional()
  .describe(
    "Ids of the staged items this change integrates, as your input shows them (e.g. s1-d1). The record's sources are written from them by the tool; never write sources yourself",
  );
const mergedFrom = z
  .array(z.string())
  .optional()
  .describe("Slugs of records of the same kind merged into this one (their sources are carried over)");

/**
 * Runs a memory operation. A memory error (linter, not found, edit mismatch, a refused file)
 * becomes a tool error the model can act on; any other failure (a file-system error) becomes one
 * too, naming the tool — nothing a record file does may throw out of a memory tool.
 */
async function guarded(
  tool: string,
  source: StoreSource,
  action: (store: MemoryStore) => Promise<ToolOutput> | ToolOutput,
): Promise<ToolOutput> {
  try {
    return await action(typeof source === "function" ? await source() : source);
  } catch (error) {
    if (MemoryError.isInstance(error)) return { summary: error.message, is_error: true };
    const message = String((error as Error)?.message ?? error).split("\n")[0];
    return { summary: `${tool} failed: ${message}; nothing was changed by this call`, is_error: true };
  }
}

/** A summary with the warning of an unrecorded usage event after it, when there is one. */
const withNote = (summary: string, note: string | undefined) =>
  note === undefined ? summary : `${summary}\nwarning: ${note}`;

/**
 * The store the tools work on: one store (a consolidation run, which keeps its index current with
 * its own writes), or a function giving the current one (a pod's main worker, which must see what
 * a later consolidation wrote).
 */
export type StoreSource = MemoryStore | (() => Promise<MemoryStore>);

const withWarnings = (summary: string, warnings: Parameters<typeof formatDiagnostics>[0]) =>
  warnings.length === 0 ? summary : `${summary}\n${formatDiagnostics(warnings)}`;

export function memoryReadTool(source: StoreSource): Tool {
  return defineTool({
    name: "memory_read",
    description:
      "Read one memory record by kind and slug. Lines are numbered (number, tab, text); the numbers are not part of the record. Use offset/limit for long records.",
    inputSchema: z.strictObject({
      kind,
      slug,
      offset: z.int().min(1).optional().describe("First line to show (1-based, default 1)"),
      limit: z.int().min(1).optional().describe("Lines to show at most (default 400)"),
    }),
    execute: (args) =>
      guarded("memory_read", source, async (store) => {
        const text = store.read(args.kind, args.slug);
        const note = await store.noteUsage("used", args.kind, args.slug);
        const lines = text.split("\n");
        if (lines.at(-1) === "") lines.pop();
        const start = (args.offset ?? 1) - 1;
        const shown = lines.slice(start, start + (args.limit ?? 400));
        const numbered = shown.map((line, i) => `${start + i + 1}\t${line}`).join("\n");
        const more =
          start + shown.length < lines.length
            ? `\n(${lines.length - start - shown.length} more lines; use offset)`
            : "";
        return {
          summary: withNote(
            `${recordLabel(args.kind, args.slug)}: lines ${start + 1}-${start + shown.length} of ${lines.length}`,
            note,
          ),
          content: numbered + more,
        };
      }),
  });
}

export function memoryWriteTool(source: StoreSource): Tool {
  return defineTool({
    name: "memory_write",
    description:
      "Create a memory record, or overwrite one with overwrite: true. content is the whole file: YAML frontmatter between --- lines, then the Markdown body. The linter checks it first; on an error nothing is written and the problems come back. updated_at (and a missing created_at) are set for you, and so are sources / last_sources, from the staged items you name.",
    inputSchema: z.strictObject({
      kind,
      slug,
      content: z.string().describe("The complete record: ---, frontmatter fields, ---, body"),
      reason,
      overwrite: z
        .boolean()
        .optional()
        .describe(
          "Replace an existing record of this slug (default false: creating over an existing slug is refused)",
        ),
      staged,
      merged_from: mergedFrom,
    }),
    execute: (args) =>
      guarded("memory_write", source, async (store) => {
        const result = await store.write(
          args.kind,
          args.slug,
          args.content,
          args.reason,
          args.overwrite === true ? "write" : "create",
          originOf(args),
        );
        return {
          summary: withWarnings(
            `${result.audit.op === "create" ? "created" : "overwrote"} ${result.path}`,
            result.warnings,
          ),
        };
      }),
  });
}

export function memoryEditTool(source: StoreSource): Tool {
  return defineTool({
    name: "memory_edit",
    description:
      "Edit a memory record by exact text replacement: old_text must occur exactly once (or set replace_all). The result is linted before it is written; on an error nothing changes.",
    inputSchema: z.strictObject({
      kind,
      slug,
      old_text: z.string().describe("Exact text to replace, without line numbers"),
      new_text: z.string(),
      replace_all: z.boolean().optional(),
      reason,
      staged,
    }),
    execute: (args) =>
      guarded("memory_edit", source, async (store) => {
        const result = await store.edit(
          args.kind,
          args.slug,
          args.old_text,
          args.new_text,
          args.reason,
          args.replace_all === true,
          originOf(args),
        );
        return { summary: withWarnings(`edited ${result.path}`, result.warnings) };
      }),
  });
}

export function memoryDeleteTool(source: StoreSource): Tool {
  return defineTool({
    name: "memory_delete",
    description:
      "Delete a memory record. Refused while another decision names it in replaced_by, and for a record used at or above the protection threshold. Prefer status: replaced for a superseded decision.",
    inputSchema: z.strictObject({ kind, slug, reason }),
    execute: (args) =>
      guarded("memory_delete", source, async (store) => {
        const result = await store.delete(args.kind, args.slug, args.reason);
        return { summary: `deleted ${result.path}` };
      }),
  });
}

export function memoryQueryTool(source: StoreSource): Tool {
  return defineTool({
    name: "memory_query",
    description:
      "Search memory records (decisions, requests, knowledge, summary) for a text, case-insensitively, line by line; shows matching lines with context.",
    inputSchema: z.strictObject({
      query: z.string().min(1),
      kind: kind.optional(),
      limit: z.int().min(1).max(100).optional().describe("Records at most (default 20)"),
      context: z.int().min(0).max(10).optional().describe("Lines of context around each match (default 1)"),
    }),
    execute: (args) =>
      guarded("memory_query", source, async (store) => {
        const hits = queryMemory(store.list(), {
          query: args.query,
          ...(args.kind === undefined ? {} : { kind: args.kind }),
          ...(args.limit === undefined ? {} : { limit: args.limit }),
          ...(args.context === undefined ? {} : { context: args.context }),
        });
        let note: string | undefined;
        for (const hit of hits) note ??= await store.noteUsage("shown", hit.kind, hit.slug);
        if (hits.length === 0) return { summary: `no record contains "${args.query}"` };
        const content = hits
          .map((hit) =>
            [
              `## ${hit.kind} ${hit.slug} (${hit.path})`,
              ...hit.matches.map((m) =>
                [
                  ...m.before.map((l, i) => `${m.line - m.before.length + i}-\t${l}`),
                  `${m.line}:\t${m.text}`,
                  ...m.after.map((l, i) => `${m.line + i + 1}-\t${l}`),
                ].join("\n"),
              ),
            ].join("\n"),
          )
          .join("\n\n");
        return {
          summary: withNote(
            `${hits.length} record${hits.length === 1 ? " matches" : "s match"} "${args.query}"`,
            note,
          ),
          content,
        };
      }),
  });
}

export function knowledgeQueryTool(source: StoreSource): Tool {
  return defineTool({
    name: "knowledge_query",
    description:
      "Search knowledge entries by slug, description, kind and body (every term must match). Returns slug, kind, description and model_invocation of each hit: use it to find an entry to update before creating one.",
    inputSchema: z.strictObject({
      query: z.string().min(1),
      limit: z.int().min(1).max(50).optional().describe("Entries at most (default 10)"),
    }),
    execute: (args) =>
      guarded("knowledge_query", source, async (store) => {
        const hits = queryKnowledge(store.list("knowledge"), args.query, args.limit ?? 10);
        let note: string | undefined;
        for (const hit of hits) note ??= await store.noteUsage("shown", "knowledge", hit.slug);
        if (hits.length === 0) return { summary: `no knowledge entry matches "${args.query}"` };
        return {
          summary: withNote(
            `${hits.length} knowledge entr${hits.length === 1 ? "y matches" : "ies match"} "${args.query}"`,
            note,
          ),
          content: JSON.stringify(hits, null, 2),
        };
      }),
  });
}

const originOf = (args: { staged?: string[] | undefined; merged_from?: string[] | undefined }) => ({
  ...(args.staged === undefined ? {} : { staged: args.staged }),
  ...(args.merged_from === undefined ? {} : { mergedFrom: args.merged_from }),
});

/** The six tools of a consolidation worker. */
export function consolidationTools(store: StoreSource): Tool[] {
  return [
    memoryReadTool(store),
    memoryWriteTool(store),
    memoryEditTool(store),
    memoryDeleteTool(store),
    memoryQueryTool(store),
    knowledgeQueryTool(store),
  ];
}

/** The read-only tools a pod's main worker gets with `[memory] tools = true`. */
export function mainWorkerMemoryTools(store: StoreSource): Tool[] {
  return [memoryQueryTool(store), memoryReadTool(store)];
}
