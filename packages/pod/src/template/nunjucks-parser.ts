import { createRequire } from "node:module";
import { MAX_TEMPLATE_NESTING } from "./budget.js";
import { TemplateEngineVersionError } from "./errors.js";

// Only nunjucks' lexer and parser are used (pinned 3.2.4, so the AST shape below is stable).
// Its code generator and runtime are not: see compile-*.ts and docs/prompts.md for why.
const require = createRequire(import.meta.url);

/** The one nunjucks version whose private parser modules and AST shapes the compiler relies on. */
export const NUNJUCKS_VERSION = "3.2.4";

/**
 * Throws `TemplateEngineVersionError` unless `found` is exactly `NUNJUCKS_VERSION`: the lexer,
 * parser and node classes are private modules, so any other version may change them silently
 * (test/nunjucks-contract.test.ts pins the node shapes).
 */
export function assertNunjucksVersion(found: string): void {
  if (found !== NUNJUCKS_VERSION) throw new TemplateEngineVersionError(NUNJUCKS_VERSION, found);
}

assertNunjucksVersion((require("nunjucks/package.json") as { version: string }).version);

/** A node of the nunjucks 3.2.4 AST; fields depend on `typename`. 0-based positions. */
export interface AstNode {
  readonly typename: string;
  readonly lineno: number;
  readonly colno: number;
  readonly [field: string]: unknown;
}

interface Token {
  readonly type: string;
  readonly value: string;
  readonly lineno: number;
  readonly colno: number;
}

interface Tokenizer {
  readonly lineno: number;
  readonly colno: number;
}

interface ParserInstance {
  tokens: Tokenizer;
  peekToken(): Token | null;
  error(message: string, lineno?: number, colno?: number): Error & { lineno?: number; colno?: number };
  parseAsRoot(): AstNode;
}

interface ParserModule {
  Parser: new (tokens: Tokenizer) => ParserInstance;
}

interface LexerModule {
  lex(source: string, options: { trimBlocks: boolean; lstripBlocks: boolean }): Tokenizer;
}

const { Parser } = require("nunjucks/src/parser") as ParserModule;
const lexer = require("nunjucks/src/lexer") as LexerModule;

/** A parse failure with 1-based positions (always present, unlike nunjucks' own errors). */
export class ParseFailure extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/**
 * Parses template source into the nunjucks AST. Errors at end of input (an unclosed `{{`, a
 * missing `endif`) get the position where the input ended instead of nunjucks' "unknown".
 */
export function parseTemplateSource(source: string): AstNode {
  const tokens = lexer.lex(source, { trimBlocks: false, lstripBlocks: false });
  const parser = new Parser(tokens);
  const originalError = parser.error;
  parser.error = function error(message, lineno, colno) {
    if ((lineno === undefined || colno === undefined) && parser.peekToken() === null) {
      return originalError.call(this, message, tokens.lineno, tokens.colno);
    }
    return originalError.call(this, message, lineno, colno);
  };
  let root: AstNode;
  try {
    root = parser.parseAsRoot();
  } catch (error) {
    if (error instanceof RangeError) {
      // nunjucks' parser recurses once per bracket, block or `not`; a deep enough source
      // exhausts the stack before our own nesting check can run.
      throw new ParseFailure(tooDeep(), tokens.lineno + 1, tokens.colno + 1);
    }
    const e = error as { message?: string; lineno?: number; colno?: number };
    const line = typeof e.lineno === "number" ? e.lineno : tokens.lineno + 1;
    const column = typeof e.colno === "number" ? e.colno : tokens.colno + 1;
    throw new ParseFailure(cleanParserMessage(String(e.message ?? error)), line, column);
  }
  checkNesting(root);
  return root;
}

function tooDeep(): string {
  return `the template nests more than ${MAX_TEMPLATE_NESTING} levels deep (brackets, blocks, or a chain of operators or filters); split it up`;
}

/**
 * Refuses syntax trees deeper than `MAX_TEMPLATE_NESTING` (a chain of thousands of `~`, `+`,
 * `and` or `|filter` terms is that deep), walking iteratively, so the recursive compiler and the
 * closures it builds never run out of stack.
 */
function checkNesting(root: AstNode): void {
  const stack: [AstNode, number][] = [[root, 0]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, depth] = entry;
    if (depth > MAX_TEMPLATE_NESTING) throw new ParseFailure(tooDeep(), node.lineno + 1, node.colno + 1);
    // Every property, not only the node's declared `fields`: `{% set x %}…{% endset %}` keeps
    // its body in an undeclared `body` property.
    for (const key of Object.keys(node)) {
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) stack.push([item, depth + 1]);
      } else if (isNode(value)) {
        stack.push([value, depth + 1]);
      }
    }
  }
}

function isNode(value: unknown): value is AstNode {
  return typeof value === "object" && value !== null && typeof (value as AstNode).typename === "string";
}

// nunjucks prefixes some messages with the parser method ("parseIf: expected endif").
function cleanParserMessage(message: string): string {
  return message.replace(/^[a-zA-Z]+: /, "");
}
