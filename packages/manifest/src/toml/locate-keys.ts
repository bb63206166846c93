import type { KeySegment } from "../key-path.js";

/** How deep a key path may nest (table header and dotted key segments together). */
export const MAX_KEY_DEPTH = 64;

/** One key of the document: the line that first defines it and the keys below it. */
interface KeyNode {
  line?: number;
  children?: Map<KeySegment, KeyNode>;
  /** For arrays of tables: the index of the latest element. */
  latest?: number;
}

function childOf(node: KeyNode, segment: KeySegment): KeyNode {
  node.children ??= new Map();
  let next = node.children.get(segment);
  if (next === undefined) {
    next = {};
    node.children.set(segment, next);
  }
  return next;
}

/** Where a key path deeper than `MAX_KEY_DEPTH` starts (1-based). */
export interface TooDeepKey {
  readonly line: number;
  readonly column: number;
}

/**
 * Maps key paths to the 1-based line that defines them, by a light scan of the TOML source. It
 * understands table headers, arrays of tables (counting their elements), dotted and quoted keys,
 * multi-line strings and multi-line arrays; keys inside inline tables are not indexed, so a
 * lookup falls back to the line of the enclosing key. Only used to point error messages at a
 * line — never to interpret the document. Keys are kept as a tree, so building it and looking a
 * path up are linear in the path's depth; paths deeper than `MAX_KEY_DEPTH` are not indexed
 * (`findTooDeepKey` reports them).
 */
export class KeyLocator {
  private readonly root: KeyNode = {};

  constructor(source: string) {
    scan(source, this.root);
  }

  /** Line of `path`, else of its nearest ancestor that has one, else `undefined`. */
  lineOf(path: readonly KeySegment[]): number | undefined {
    let node: KeyNode | undefined = this.root;
    let line: number | undefined;
    for (const segment of path) {
      node = node.children?.get(segment);
      if (node === undefined) break;
      if (node.line !== undefined) line = node.line;
    }
    return line;
  }
}

/** The first key path of `source` deeper than `MAX_KEY_DEPTH`, or `null`. */
export function findTooDeepKey(source: string): TooDeepKey | null {
  return scan(source, {});
}

interface ValueState {
  /** Inside a multi-line string opened with this delimiter. */
  string: '"""' | "'''" | null;
  /** Open `[`/`{` brackets of a value that continues on the next line. */
  depth: number;
}

function scan(source: string, root: KeyNode): TooDeepKey | null {
  let table = root;
  let tableDepth = 0;
  const state: ValueState = { string: null, depth: 0 };
  const lines = source.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? "";
    if (state.string !== null || state.depth > 0) {
      scanValue(text, 0, state);
      continue;
    }
    const pos = skipSpace(text, 0);
    if (pos >= text.length || text[pos] === "#") continue;
    if (text[pos] === "[") {
      const isArray = text[pos + 1] === "[";
      const key = parseDottedKey(text, pos + (isArray ? 2 : 1), MAX_KEY_DEPTH);
      if (!key) continue;
      if (key.parts.length > MAX_KEY_DEPTH) return { line: i + 1, column: pos + 1 };
      table = tableNode(root, key.parts, isArray, i + 1);
      tableDepth = key.parts.length;
      continue;
    }
    const key = parseDottedKey(text, pos, MAX_KEY_DEPTH - tableDepth);
    if (!key) continue;
    if (tableDepth + key.parts.length > MAX_KEY_DEPTH) return { line: i + 1, column: pos + 1 };
    const end = skipSpace(text, key.end);
    if (text[end] !== "=") continue;
    let node = table;
    for (const part of key.parts) {
      node = childOf(node, part);
      node.line ??= i + 1;
    }
    scanValue(text, end + 1, state);
  }
  return null;
}

/**
 * The node of a `[header]` or `[[header]]`: a path whose prefixes name arrays of tables refers
 * to their latest element, and `[[…]]` starts a new element.
 */
function tableNode(root: KeyNode, parts: readonly string[], isArray: boolean, line: number): KeyNode {
  let node = root;
  parts.forEach((part, n) => {
    node = childOf(node, part);
    if (n < parts.length - 1 && node.latest !== undefined) node = childOf(node, node.latest);
  });
  if (isArray) {
    node.line ??= line;
    node.latest = (node.latest ?? -1) + 1;
    node = childOf(node, node.latest);
  }
  node.line ??= line;
  return node;
}

function skipSpace(text: string, pos: number): number {
  while (pos < text.length && (text[pos] === " " || text[pos] === "\t")) pos++;
  return pos;
}

const BARE_KEY = /[A-Za-z0-9_-]+/y;

/**
 * Parses `a."b c".'d'` starting at `pos`; `null` when no key starts there. Stops after
 * `max + 1` parts: the caller only needs to know that the key is too deep.
 */
function parseDottedKey(text: string, pos: number, max: number): { parts: string[]; end: number } | null {
  const parts: string[] = [];
  for (;;) {
    pos = skipSpace(text, pos);
    const quote = text[pos];
    if (quote === '"' || quote === "'") {
      const close = findClosingQuote(text, pos + 1, quote);
      if (close < 0) return null;
      const raw = text.slice(pos + 1, close);
      parts.push(quote === '"' ? unescapeBasic(raw) : raw);
      pos = close + 1;
    } else {
      BARE_KEY.lastIndex = pos;
      const match = BARE_KEY.exec(text);
      if (!match) return null;
      parts.push(match[0]);
      pos += match[0].length;
    }
    const next = skipSpace(text, pos);
    if (text[next] !== "." || parts.length > max) return { parts, end: pos };
    pos = next + 1;
  }
}

function findClosingQuote(text: string, pos: number, quote: string): number {
  for (; pos < text.length; pos++) {
    if (quote === '"' && text[pos] === "\\") pos++;
    else if (text[pos] === quote) return pos;
  }
  return -1;
}

function unescapeBasic(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** Advances through a value, tracking multi-line strings and open brackets across lines. */
function scanValue(text: string, pos: number, state: ValueState): void {
  while (pos < text.length) {
    if (state.string !== null) {
      const close = findMultilineClose(text, pos, state.string);
      if (close < 0) return;
      pos = close;
      state.string = null;
      continue;
    }
    const ch = text[pos];
    if (ch === "#") return;
    if (text.startsWith('"""', pos) || text.startsWith("'''", pos)) {
      state.string = text.startsWith('"""', pos) ? '"""' : "'''";
      pos += 3;
    } else if (ch === '"' || ch === "'") {
      const close = findClosingQuote(text, pos + 1, ch);
      if (close < 0) return;
      pos = close + 1;
    } else {
      if (ch === "[" || ch === "{") state.depth++;
      else if ((ch === "]" || ch === "}") && state.depth > 0) state.depth--;
      pos++;
    }
  }
}

/** Position just past the closing delimiter (and up to two extra quotes TOML allows), or -1. */
function findMultilineClose(text: string, pos: number, delimiter: string): number {
  for (; pos < text.length; pos++) {
    if (delimiter === '"""' && text[pos] === "\\") {
      pos++;
      continue;
    }
    if (text.startsWith(delimiter, pos)) {
      let end = pos + 3;
      while (end < text.length && text[end] === delimiter[0] && end < pos + 5) end++;
      return end;
    }
  }
  return -1;
}
