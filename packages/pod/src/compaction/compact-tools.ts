import { defineTool, type Item, messageText, type Tool } from "@podkit/llm-worker";
import { z } from "zod";

/** A file the compaction worker marked: its content (as `read_file` showed it) goes into the new history. */
export interface AutoReadFile {
  readonly path: string;
  readonly content: string;
  readonly tokens: number;
}

export interface CompactReference {
  readonly target: string;
  readonly note: string;
}

/** What the compaction worker's tools collect; `write_summary` may be called again (last call wins). */
export interface CompactCollection {
  summary: string | undefined;
  readonly autoRead: AutoReadFile[];
  readonly references: CompactReference[];
}

export interface CompactToolsContext {
  /** The history being compacted, numbered from #0 in order. */
  readonly items: readonly Item[];
  /** The builtin `read_file` on the pod's scope (reused, not re-implemented): `mark_read_required` reads through it. */
  readonly readFile: Tool;
  readonly autoReadBudgetTokens: number;
  /** The most one `read_session_items` / `search_session_log` result may hold, in bytes. */
  readonly resultMaxBytes: number;
  readonly collected: CompactCollection;
}

const SEARCH_HITS = 30;

function fullText(item: Item): string {
  switch (item.type) {
    case "message":
      return `[${item.role}] ${messageText(item)}`;
    case "tool_call":
      return `[tool_call ${item.call_id}] ${item.name} ${item.arguments}`;
    case "tool_result":
      return `[tool_result ${item.call_id}${item.is_error ? ", error" : ""}] ${item.summary}${item.content === undefined ? "" : `\n${item.content}`}`;
    case "reasoning":
      return "[reasoning] (not shown)";
    case "compaction":
      return `[provider compaction] ${item.text}`;
    default:
      return `[${item.type} ${item.call_id}] ${item.name}`;
  }
}

function bounded(parts: string[], maxBytes: number, more: string): string {
  const out: string[] = [];
  let used = 0;
  for (const part of parts) {
    const cost = Buffer.byteLength(part) + 2;
    if (used + cost > maxBytes) {
      out.push(more);
      break;
    }
    out.push(part);
    used += cost;
  }
  return out.join("\n\n");
}

/**
 * The names of the compaction's own tools (besides the pod's `read_file`). With `[compaction]` they
 * sit on every request's tool list (refused outside a compaction, so the list a compaction sends is
 * byte-identical), which also reserves the names: a tool package declaring one fails to load.
 */
export const COMPACT_TOOL_NAMES = [
  "read_session_items",
  "search_session_log",
  "mark_read_required",
  "add_reference",
  "write_summary",
] as const;

// The declarations, one per tool: the pod's list carries them refused, a compaction the same ones
// working, so both lists compile to the same bytes (the very start of the cached prefix).
const declarations = {
  read_session_items: {
    name: "read_session_items",
    description:
      "Compaction only: read items of the conversation in full, by their #number (from and to inclusive).",
    inputSchema: z.strictObject({ from: z.int().min(0), to: z.int().min(0).optional() }),
  },
  search_session_log: {
    name: "search_session_log",
    description:
      "Compaction only: search every item of the session's conversation for a text (case-insensitive).",
    inputSchema: z.strictObject({ query: z.string().min(1) }),
  },
  mark_read_required: {
    name: "mark_read_required",
    description:
      "Compaction only: mark a file the agent must have in front of it after compaction; its current content is loaded into the new context (shared token budget).",
    inputSchema: z.strictObject({ path: z.string().min(1) }),
  },
  add_reference: {
    name: "add_reference",
    description:
      "Compaction only: add a file or a part of the session to the reference list kept after the summary, with a short note.",
    inputSchema: z.strictObject({ target: z.string().min(1), note: z.string() }),
  },
  write_summary: {
    name: "write_summary",
    description:
      "Compaction only: write the summary that replaces the older conversation. Calling it again replaces it; the last call counts.",
    inputSchema: z.strictObject({ summary: z.string().min(1) }),
  },
} as const;

/**
 * The compaction's tools as the pod's own list carries them while no compaction runs: declared
 * exactly as during a compaction, each call answered with `refusal(name)` as an error result and
 * nothing else done.
 */
export function refusedCompactTools(refusal: (tool: string) => string): Tool[] {
  return Object.values(declarations).map((declaration) => ({
    ...declaration,
    execute: () => ({ summary: refusal(declaration.name), is_error: true }),
  }));
}

/**
 * The compaction's own tools: reading and searching the session's items, marking files to
 * re-read after compaction (within the auto-read budget, read through the builtin `read_file` on
 * the pod's scope), references, and `write_summary`.
 */
export function compactTools(ctx: CompactToolsContext): Tool[] {
  const { items, collected } = ctx;
  const readSessionItems = defineTool({
    ...declarations.read_session_items,
    execute({ from, to }) {
      const last = Math.min(to ?? from, items.length - 1);
      if (from >= items.length) {
        return { summary: `there are ${items.length} items (#0–#${items.length - 1})`, is_error: true };
      }
      const parts: string[] = [];
      for (let i = from; i <= last; i++) parts.push(`#${i} ${fullText(items[i] as Item)}`);
      const content = bounded(
        parts,
        ctx.resultMaxBytes,
        "… (result limit reached: read fewer items at a time)",
      );
      return { summary: `items #${from}–#${last}`, content };
    },
  });
  const searchSessionLog = defineTool({
    ...declarations.search_session_log,
    execute({ query }) {
      const needle = query.toLowerCase();
      const hits: string[] = [];
      items.forEach((item, index) => {
        const text = fullText(item);
        const at = text.toLowerCase().indexOf(needle);
        if (at < 0 || hits.length >= SEARCH_HITS) return;
        const snippet = text.slice(Math.max(0, at - 80), at + needle.length + 80).replace(/\s+/g, " ");
        hits.push(`#${index} …${snippet}…`);
      });
      if (hits.length === 0) return { summary: `no item contains "${query}"` };
      return {
        summary: `${hits.length} item(s) contain "${query}"${hits.length >= SEARCH_HITS ? " (first ones only)" : ""}`,
        content: bounded(hits, ctx.resultMaxBytes, "… (more hits left out)"),
      };
    },
  });
  const markReadRequired = defineTool({
    ...declarations.mark_read_required,
    async execute({ path }, toolContext) {
      if (collected.autoRead.some((file) => file.path === path))
        return { summary: `${path} is already marked` };
      const read = await ctx.readFile.execute({ path }, toolContext);
      if (read.is_error) return read;
      const content = read.content ?? "";
      const tokens = Math.ceil(Buffer.byteLength(content) / 4);
      const used = collected.autoRead.reduce((sum, file) => sum + file.tokens, 0);
      if (used + tokens > ctx.autoReadBudgetTokens) {
        return {
          summary: `not marked: ${path} has about ${tokens} tokens and ${used} of the ${ctx.autoReadBudgetTokens}-token auto-read budget are used; add a reference to it instead`,
          is_error: true,
        };
      }
      collected.autoRead.push({ path, content, tokens });
      return {
        summary: `marked ${path} (about ${tokens} tokens; ${used + tokens} of ${ctx.autoReadBudgetTokens} used)`,
      };
    },
  });
  const addReference = defineTool({
    ...declarations.add_reference,
    execute({ target, note }) {
      collected.references.push({ target, note });
      return { summary: `reference ${collected.references.length} added: ${target}` };
    },
  });
  const writeSummary = defineTool({
    ...declarations.write_summary,
    execute({ summary }) {
      collected.summary = summary;
      return { summary: `summary written (about ${Math.ceil(Buffer.byteLength(summary) / 4)} tokens)` };
    },
  });
  return [readSessionItems, searchSessionLog, markReadRequired, addReference, writeSummary];
}
