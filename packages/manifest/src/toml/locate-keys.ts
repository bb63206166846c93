import { formatKeyPath, type KeySegment } from "../key-path.js";

/**
 * Maps key paths (as `formatKeyPath` spells them) to the 1-based line that defines them, by a
 * light scan of the TOML source. It understands table headers, arrays of tables (counting their
 * elements), dotted and quoted keys, multi-line strings and multi-line arrays; keys inside inline
 * tables are not indexed, so a lookup falls back to the line of the enclosing key. Only used to
 * point error messages at a line — never to interpret the document.
 */
export class KeyLocator {
  private readonly lines = new Map<string, number>();

  constructor(source: string) {
    scan(source, (path, line) => {
      const key = formatKeyPath(path);
      if (!this.lines.has(key)) this.lines.set(key, line);
    });
  }

  /** Line of `path`, else of its nearest ancestor that has one, else `undefined`. */
  lineOf(path: readonly KeySegment[]): number | undefined {
    for (let n = path.length; n > 0; n--) {
      const line = this.lines.get(formatKeyPath(path.slice(0, n)));
      if (line !== undefined) return line;
    }
    return undefined;
  }
}

interface ValueState {
  /** Inside a multi-line string opened with this delimiter. */
  string: '"""' | "'''" | null;
  /** Open `[`/`{` brackets of a value that continues on the next line. */
  depth: number;
}

function scan(source: string, record: (path: KeySegment[], line: number) => void): void {
  const arrayCounts = new Map<string, number>();
  let table: KeySegment[] = [];
  const state: ValueState = { string: null, depth: 0 };
  const lines = source.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? "";
    if (state.string !== null || state.depth > 0) {
      scanValue(text, 0, state);
      continue;
    }
    let pos = skipSpace(text, 0);
    if (pos >= text.length || text[pos] === "#") continue;
    if (text[pos] === "[") {
      const isArray = text[pos + 1] === "[";
      const key = parseDottedKey(text, pos + (isArray ? 2 : 1));
      if (!key) continue;
      table = withArrayIndices(key.parts, arrayCounts);
      if (isArray) {
        const id = formatKeyPath(table);
        const index = (arrayCounts.get(id) ?? -1) + 1;
        arrayCounts.set(id, index);
        record(table, i + 1);
        table = [...table, index];
      }
      record(table, i + 1);
      continue;
    }
    const key = parseDottedKey(text, pos);
    if (!key) continue;
    pos = skipSpace(text, key.end);
    if (text[pos] !== "=") continue;
    for (let n = 1; n <= key.parts.length; n++) record([...table, ...key.parts.slice(0, n)], i + 1);
    scanValue(text, pos + 1, state);
  }
}

/** A header path whose prefixes name arrays of tables refers to their latest element. */
function withArrayIndices(parts: string[], arrayCounts: Map<string, number>): KeySegment[] {
  const out: KeySegment[] = [];
  for (const [n, part] of parts.entries()) {
    out.push(part);
    const index = n < parts.length - 1 ? arrayCounts.get(formatKeyPath(out)) : undefined;
    if (index !== undefined) out.push(index);
  }
  return out;
}

function skipSpace(text: string, pos: number): number {
  while (pos < text.length && (text[pos] === " " || text[pos] === "\t")) pos++;
  return pos;
}

/** Parses `a."b c".'d'` starting at `pos`; `null` when no key starts there. */
function parseDottedKey(text: string, pos: number): { parts: string[]; end: number } | null {
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
      const match = /^[A-Za-z0-9_-]+/.exec(text.slice(pos));
      if (!match) return null;
      parts.push(match[0]);
      pos += match[0].length;
    }
    const next = skipSpace(text, pos);
    if (text[next] !== ".") return { parts, end: pos };
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
