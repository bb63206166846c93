import { cutLine, splitLines } from "./text.js";

/** How grep recognises a matching line, built once per search. */
export interface LineMatcher {
  /** The file's text when it may hold a match; undefined when it surely holds none. */
  candidate(bytes: Buffer): string | undefined;
  /** Whether one line (without its line break) matches. */
  test(line: string): boolean;
}

/** Characters that make a pattern a regular expression rather than plain text. */
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/**
 * The matcher for `pattern`. A pattern without regex syntax is searched as bytes
 * (`Buffer.indexOf`, native) and a file without it is never decoded; anything else is a
 * JavaScript regular expression, tried once over the whole text before the text is split into
 * lines. Case folding of a pattern with letters needs the regex. Throws `SyntaxError` for an
 * invalid regular expression.
 */
export function compileLineMatcher(pattern: string, caseInsensitive: boolean): LineMatcher {
  const hasCase = pattern.toLowerCase() !== pattern.toUpperCase();
  // U+FFFD also stands for undecodable bytes, which a byte search would not see.
  if (!REGEX_SYNTAX.test(pattern) && !(caseInsensitive && hasCase) && !pattern.includes("\uFFFD")) {
    const needle = Buffer.from(pattern, "utf8");
    return {
      candidate: (bytes) => (bytes.indexOf(needle) === -1 ? undefined : bytes.toString("utf8")),
      test: (line) => line.includes(pattern),
    };
  }
  const flags = caseInsensitive ? "i" : "";
  const line = new RegExp(pattern, flags);
  // A whole-file prefilter: most files have no match, and one run over the text is far cheaper
  // than splitting it into lines. Not with `$`: lines are matched without a trailing "\r", and
  // over the whole text `$` would not match before a CRLF.
  const anywhere = pattern.includes("$") ? undefined : new RegExp(pattern, `${flags}m`);
  return {
    candidate: (bytes) => {
      const text = bytes.toString("utf8");
      return anywhere === undefined || anywhere.test(text) ? text : undefined;
    },
    test: (text) => line.test(text),
  };
}

/** One line of grep output. */
export interface OutputLine {
  text: string;
  /** A matching line (not context or a separator); the limit counts these. */
  match: boolean;
}

/** Longest line shown; longer ones are cut with a marker. */
const MAX_SHOWN_LINE = 300;

/** rg/grep style: `path:line:text` for matches, `path-line-text` for context, `--` between groups. */
export function formatMatches(
  shown: string,
  text: string,
  matcher: LineMatcher,
  context: number,
): OutputLine[] {
  const lines = splitLines(text);
  const out: OutputLine[] = [];
  const contextLine = (j: number) => ({
    text: `${shown}-${j + 1}-${cutLine(lines[j] as string, MAX_SHOWN_LINE)}`,
    match: false,
  });
  let lastPrinted = -1;
  for (let i = 0; i < lines.length; i++) {
    if (!matcher.test(lines[i] as string)) continue;
    const from = Math.max(0, i - context, lastPrinted + 1);
    if (context > 0 && lastPrinted >= 0 && from > lastPrinted + 1) out.push({ text: "--", match: false });
    for (let j = from; j < i; j++) out.push(contextLine(j));
    out.push({ text: `${shown}:${i + 1}:${cutLine(lines[i] as string, MAX_SHOWN_LINE)}`, match: true });
    lastPrinted = i;
    const to = Math.min(lines.length - 1, i + context);
    for (let j = i + 1; j <= to && !matcher.test(lines[j] as string); j++) {
      out.push(contextLine(j));
      lastPrinted = j;
    }
  }
  return out;
}
