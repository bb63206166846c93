import { parse, TomlError } from "smol-toml";
import type { ManifestError } from "../errors.js";
import { manifestError } from "../format-issue.js";
import { findTooDeepKey, MAX_KEY_DEPTH } from "./locate-keys.js";

/**
 * Parses one TOML document. A syntax error becomes a `ManifestError` naming the file, line and
 * column and quoting the offending line; `__proto__`-style keys are rejected by the parser so
 * they can never reach a merge. Keys nested deeper than `MAX_KEY_DEPTH` (`a.a.a…` thousands of
 * times) are refused before parsing, so no later step walks them.
 */
export function parseToml(source: string, where: { file?: string; overlay?: string; cwd?: string }): object {
  const deep = findTooDeepKey(source);
  if (deep !== null) throw tooDeepError(deep, source, where);
  try {
    return parse(source, { unsafeKeyBehaviour: "throw", maxDepth: MAX_KEY_DEPTH });
  } catch (error) {
    throw syntaxError(error, source, where);
  }
}

function tooDeepError(
  at: { line: number; column: number },
  source: string,
  where: { file?: string; overlay?: string; cwd?: string },
): ManifestError {
  const sourceLine = (source.split(/\r?\n/)[at.line - 1] ?? "").replace(/\s+$/, "");
  const shown = sourceLine.length > 120 ? `${sourceLine.slice(0, 117)}...` : sourceLine;
  return manifestError(
    "syntax",
    [
      {
        problem: `a key nests more than ${MAX_KEY_DEPTH} levels deep (table and dotted key segments together)`,
        ...(where.file !== undefined
          ? { file: where.file, line: at.line, column: at.column, sourceLine: shown }
          : {}),
        ...(where.overlay !== undefined ? { overlay: where.overlay } : {}),
      },
    ],
    {
      cwd: where.cwd,
      hint: "manifest keys are a few levels deep (e.g. mcp.servers.<name>.env); shorten the key",
    },
  );
}

function syntaxError(
  error: unknown,
  source: string,
  where: { file?: string; overlay?: string; cwd?: string },
): ManifestError {
  const isToml = error instanceof TomlError;
  const raw = error instanceof Error ? error.message : String(error);
  const reason = (raw.split("\n")[0] ?? raw).replace(/^Invalid TOML document: /, "");
  const issue: Parameters<typeof manifestError>[1][number] = { problem: `TOML syntax error: ${reason}` };
  if (where.file !== undefined) issue.file = where.file;
  if (where.overlay !== undefined) issue.overlay = where.overlay;
  if (isToml && where.file !== undefined) {
    issue.line = error.line;
    issue.column = error.column;
    issue.sourceLine = (source.split(/\r?\n/)[error.line - 1] ?? "").replace(/\s+$/, "");
    // smol-toml reports a missing closing quote as the newline being a control character.
    if (reason.startsWith("control characters") && error.column > issue.sourceLine.length) {
      issue.problem = "TOML syntax error: unterminated string (the closing quote is missing on this line)";
    }
  }
  return manifestError("syntax", [issue], {
    cwd: where.cwd,
    hint: "fix the TOML syntax at the position shown (strings need quotes, tables [name], lists [a, b])",
    cause: error,
  });
}
