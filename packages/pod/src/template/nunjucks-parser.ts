import { createRequire } from "node:module";

// Only nunjucks' lexer and parser are used (pinned 3.2.4, so the AST shape below is stable).
// Its code generator and runtime are not: see compile-*.ts and docs/prompts.md for why.
const require = createRequire(import.meta.url);

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
  try {
    return parser.parseAsRoot();
  } catch (error) {
    const e = error as { message?: string; lineno?: number; colno?: number };
    const line = typeof e.lineno === "number" ? e.lineno : tokens.lineno + 1;
    const column = typeof e.colno === "number" ? e.colno : tokens.colno + 1;
    throw new ParseFailure(cleanParserMessage(String(e.message ?? error)), line, column);
  }
}

// nunjucks prefixes some messages with the parser method ("parseIf: expected endif").
function cleanParserMessage(message: string): string {
  return message.replace(/^[a-zA-Z]+: /, "");
}
