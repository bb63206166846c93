import { RegExpParser } from "@eslint-community/regexpp";

/** How grep recognises a matching line, built once per search. */
export interface LineMatcher {
  /** The text of a block of whole lines when it may hold a match; undefined when it surely holds none. */
  candidate(bytes: Buffer): string | undefined;
  /** Whether one line (without its line break) matches. */
  test(line: string): boolean;
}

/** Characters that make a pattern a regular expression rather than plain text. */
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/**
 * The matcher for `pattern`. A pattern without regex syntax is searched as bytes
 * (`Buffer.indexOf`, native) and a block without it is never decoded. Any other pattern is a
 * JavaScript regular expression: when every match must contain some plain text (`needle_` in
 * `needle_[0-9]+`), a block without those bytes is passed over undecoded too; otherwise the
 * regex is tried once over the whole block before it is split into lines. Case folding of a
 * pattern with letters needs the regex. Throws `SyntaxError` for an invalid regular expression.
 */
export function compileLineMatcher(pattern: string, caseInsensitive: boolean): LineMatcher {
  const hasCase = pattern.toLowerCase() !== pattern.toUpperCase();
  if (!REGEX_SYNTAX.test(pattern) && !(caseInsensitive && hasCase) && searchableAsBytes(pattern)) {
    const needle = Buffer.from(pattern, "utf8");
    return {
      candidate: (bytes) => (bytes.indexOf(needle) === -1 ? undefined : bytes.toString("utf8")),
      test: (line) => line.includes(pattern),
    };
  }
  const flags = caseInsensitive ? "i" : "";
  const line = new RegExp(pattern, flags);
  const required = caseInsensitive ? undefined : requiredText(pattern);
  const needle = required === undefined ? undefined : Buffer.from(required, "utf8");
  // The whole-block test: most files have no match, and one run over the text is far cheaper
  // than splitting it into lines. Not with `$`: lines are matched without a trailing "\r", and
  // over the whole text `$` would not match before a CRLF.
  const anywhere = pattern.includes("$") ? undefined : new RegExp(pattern, `${flags}m`);
  return {
    candidate: (bytes) => {
      if (needle !== undefined && bytes.indexOf(needle) === -1) return undefined;
      const text = bytes.toString("utf8");
      return anywhere === undefined || anywhere.test(text) ? text : undefined;
    },
    test: (text) => line.test(text),
  };
}

const parser = new RegExpParser();

/**
 * The longest run of plain characters every match of `pattern` (no flags) must contain: the
 * top level of a pattern without `|`, where one literal character follows another with nothing
 * optional, repeated or zero-width between them. Undefined when there is none of two or more
 * characters, or the pattern is not one the parser reads as V8 does.
 */
export function requiredText(pattern: string): string | undefined {
  let ast: ReturnType<RegExpParser["parsePattern"]>;
  try {
    ast = parser.parsePattern(pattern, 0, pattern.length, { unicode: false });
  } catch {
    return undefined;
  }
  if (ast.alternatives.length !== 1) return undefined;
  let best = "";
  let run = "";
  for (const element of ast.alternatives[0]?.elements ?? []) {
    // A quantified character is a Quantifier, a class or escape like \d a CharacterSet: each ends the run.
    if (element.type === "Character" && !isSurrogate(element.value)) {
      run += String.fromCharCode(element.value);
      if (run.length > best.length) best = run;
    } else {
      run = "";
    }
  }
  return best.length >= 2 && searchableAsBytes(best) ? best : undefined;
}

/**
 * True when the text's UTF-8 bytes are in a file exactly where the decoded text holds it:
 * not for U+FFFD, which also stands for bytes that do not decode.
 */
function searchableAsBytes(text: string): boolean {
  return !text.includes("\uFFFD");
}

function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}
