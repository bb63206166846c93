import { parse, TomlError } from "smol-toml";
import type { ManifestError } from "../errors.js";
import { manifestError } from "../format-issue.js";

/**
 * Parses one TOML document. A syntax error becomes a `ManifestError` naming the file, line and
 * column and quoting the offending line; `__proto__`-style keys are rejected by the parser so
 * they can never reach a merge.
 */
export function parseToml(source: string, where: { file?: string; overlay?: string; cwd?: string }): object {
  try {
    return parse(source, { unsafeKeyBehaviour: "throw" });
  } catch (error) {
    throw syntaxError(error, source, where);
  }
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
