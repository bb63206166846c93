import {
  Document,
  isAlias,
  isCollection,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Node,
  parseDocument,
  visit,
} from "yaml";
import type { RecordKind } from "./layout.js";
import { FIELD_ORDER } from "./record-schema.js";

/** A note about a record's encoding that does not block it (a byte order mark, CRLF line ends). */
export interface SplitNote {
  readonly line: number;
  readonly message: string;
}

/** A record file split into its YAML frontmatter and Markdown body. */
export type SplitRecord =
  | { ok: true; frontmatter: Record<string, unknown>; body: string; notes: readonly SplitNote[] }
  | { ok: false; problem: string; line?: number };

/**
 * Bounds of the frontmatter parser. Frontmatter is a handful of flat fields with one list of
 * sources, so these are far above anything a record needs and far below what makes YAML costly:
 * a cloned repository can ship a record built to exhaust the parser.
 */
export const FRONTMATTER_MAX_CHARS = 64 * 1024;
/** Nesting of mappings and sequences (a source's `range` sits at depth 3). */
export const FRONTMATTER_MAX_DEPTH = 8;

const BOM = "\uFEFF";

/** 1-based line of character `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line += 1;
  return line;
}

/**
 * The deepest nesting of `[`/`{` (outside quotes) and of indentation in `yamlText`, found without
 * parsing: the YAML parser recurses per level, so a deeply nested document must be refused
 * before it reaches it. Returns the offset where the limit is first passed, or -1.
 */
function tooDeepAt(yamlText: string, limit: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < yamlText.length; i++) {
    const c = yamlText[i];
    if (quote !== undefined) {
      if (c === "\\" && quote === '"') i += 1;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") {
      const end = yamlText.indexOf("\n", i);
      i = end === -1 ? yamlText.length : end;
    } else if (c === "[" || c === "{") {
      depth += 1;
      if (depth > limit) return i;
    } else if (c === "]" || c === "}") depth = Math.max(0, depth - 1);
    else if (c === "\n") quote = undefined;
  }
  const indents: number[] = [];
  let offset = 0;
  for (const line of yamlText.split("\n")) {
    const content = line.trimStart();
    if (content !== "" && !content.startsWith("#")) {
      // A "- " item opens a level like an indented mapping does.
      const indent = line.length - content.length + (content.startsWith("- ") ? 1 : 0);
      while (indents.length > 0 && (indents.at(-1) ?? 0) >= indent) indents.pop();
      indents.push(indent);
      if (indents.length > limit + 1) return offset;
    }
    offset += line.length + 1;
  }
  return -1;
}

/**
 * What a frontmatter may not use: aliases and anchors (alias bombs, one huge anchor used many
 * times), explicit tags (`!!binary`, `!custom`, anything beyond plain values), a `__proto__` key,
 * and nesting past `FRONTMATTER_MAX_DEPTH`. Returns the first problem with its offset.
 */
function forbiddenNode(
  doc: ReturnType<typeof parseDocument>,
): { problem: string; offset: number } | undefined {
  let found: { problem: string; offset: number } | undefined;
  const at = (node: Node | null | undefined) => node?.range?.[0] ?? 0;
  visit(doc, (_key, node, path) => {
    if (isAlias(node)) {
      found = {
        problem: `aliases (*${node.source}) are not allowed in frontmatter; write the value out`,
        offset: at(node),
      };
    } else if (isNode(node) && node.anchor !== undefined) {
      found = {
        problem: `anchors (&${node.anchor}) are not allowed in frontmatter; write the value out`,
        offset: at(node),
      };
    } else if (isNode(node) && node.tag !== undefined) {
      found = {
        problem: `tags (${node.tag}) are not allowed in frontmatter; write plain values`,
        offset: at(node),
      };
    } else if (isPair(node) && isScalar(node.key) && node.key.value === "__proto__") {
      found = { problem: 'the key "__proto__" is not allowed in frontmatter', offset: at(node.key) };
    } else if (isCollection(node) && path.filter(isCollection).length >= FRONTMATTER_MAX_DEPTH) {
      found = {
        problem: `frontmatter is nested deeper than ${FRONTMATTER_MAX_DEPTH} levels`,
        offset: at(node),
      };
    }
    return found === undefined ? undefined : visit.BREAK;
  });
  return found;
}

/**
 * Splits `text` into frontmatter (a YAML mapping between `---` lines at the top) and body. The
 * frontmatter is parsed with the `yaml` package within bounds (size, depth, no aliases, anchors
 * or tags, no `__proto__`); every refusal and parse error names the line inside the file, and
 * nothing the parser throws escapes. A byte order mark and CRLF line ends are read (and noted):
 * records are written back with neither.
 */
export function splitRecord(text: string): SplitRecord {
  const notes: SplitNote[] = [];
  let source = text;
  if (source.startsWith(BOM)) {
    source = source.slice(1);
    notes.push({
      line: 1,
      message: "the file starts with a byte order mark; it is read without it and written back without it",
    });
  }
  const crlf = source.indexOf("\r\n");
  if (crlf !== -1) {
    notes.push({
      line: lineAt(source, crlf),
      message: "the file has CRLF line ends; they are read as LF and written back as LF",
    });
  }
  const lines = source.split("\n").map((line) => line.replace(/\r$/, ""));
  if (lines[0]?.trimEnd() !== "---") {
    return { ok: false, problem: 'the record has no frontmatter: it must start with a "---" line', line: 1 };
  }
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === "---");
  if (close < 0) return { ok: false, problem: 'the frontmatter is not closed by a "---" line', line: 1 };
  const yamlText = lines.slice(1, close).join("\n");
  // +1 for the opening "---" line.
  const lineOf = (offset: number) => lineAt(yamlText, offset) + 1;
  if (yamlText.length > FRONTMATTER_MAX_CHARS) {
    return {
      ok: false,
      problem: `the frontmatter is ${yamlText.length} characters, more than the ${FRONTMATTER_MAX_CHARS} it may hold; keep long text in the body`,
      line: 2,
    };
  }
  const deep = tooDeepAt(yamlText, FRONTMATTER_MAX_DEPTH);
  if (deep !== -1) {
    return {
      ok: false,
      problem: `frontmatter is nested deeper than ${FRONTMATTER_MAX_DEPTH} levels`,
      line: lineOf(deep),
    };
  }
  let doc: ReturnType<typeof parseDocument>;
  let frontmatter: unknown;
  try {
    doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
    const error = doc.errors[0];
    if (error !== undefined) {
      return {
        ok: false,
        problem: `the frontmatter is not valid YAML: ${error.message.split("\n")[0]}`,
        line: lineOf(error.pos[0]),
      };
    }
    const forbidden = forbiddenNode(doc);
    if (forbidden !== undefined)
      return { ok: false, problem: forbidden.problem, line: lineOf(forbidden.offset) };
    if (doc.contents !== null && !isMap(doc.contents)) {
      return {
        ok: false,
        problem: "the frontmatter must be a YAML mapping of fields (key: value lines)",
        line: 2,
      };
    }
    frontmatter = doc.toJS({ maxAliasCount: 0 }) ?? {};
  } catch (error) {
    // The bounds above should leave the parser nothing to throw on; if it still does, the
    // record is refused like any other bad frontmatter instead of taking memory down.
    return {
      ok: false,
      problem: `the frontmatter could not be parsed (${String((error as Error)?.message ?? error).split("\n")[0]})`,
      line: 2,
    };
  }
  const body = lines
    .slice(close + 1)
    .join("\n")
    .replace(/^\n+/, "")
    .trimEnd();
  return { ok: true, frontmatter: toPlainRecord(frontmatter as Record<string, unknown>), body, notes };
}

/** A mapping as an object with own data properties only (no key can reach a prototype). */
function toPlainRecord(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value))
    Object.defineProperty(out, key, { value: field, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Writes a record: frontmatter keys in the kind's order (unknown keys after), then the body. */
export function joinRecord(kind: RecordKind, frontmatter: Record<string, unknown>, body: string): string {
  const ordered = new Map<string, unknown>();
  for (const key of FIELD_ORDER[kind]) if (frontmatter[key] !== undefined) ordered.set(key, frontmatter[key]);
  for (const [key, value] of Object.entries(frontmatter)) if (!ordered.has(key)) ordered.set(key, value);
  const doc = new Document(ordered);
  // A source's range is a pair: `range: [1, 8]` reads better than a two-line list.
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.value === "range" && isSeq(pair.value)) pair.value.flow = true;
    },
  });
  const yamlText = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  const trimmed = body.trimEnd();
  return `---\n${yamlText}---\n${trimmed === "" ? "" : `\n${trimmed}\n`}`;
}
