import { isAbsolute, relative } from "node:path";
import { ManifestError, type ManifestErrorKind, type ManifestIssue } from "./errors.js";

/**
 * `file:line:column: key.path: problem`, followed for syntax errors by the offending line and a
 * caret. Files inside `cwd` are shown relative to it, others absolute.
 */
export function formatIssue(issue: ManifestIssue, cwd?: string): string {
  let where = "manifest";
  if (issue.file !== undefined) {
    where = displayPath(issue.file, cwd);
    if (issue.line !== undefined) where += `:${issue.line}`;
    if (issue.line !== undefined && issue.column !== undefined) where += `:${issue.column}`;
  } else if (issue.overlay !== undefined) {
    where = `--set ${issue.overlay}`;
  }
  const key = issue.keyPath ? `${issue.keyPath}: ` : "";
  let text = `${where}: ${key}${issue.problem}`;
  if (issue.sourceLine !== undefined && issue.line !== undefined) {
    const gutter = String(issue.line);
    text += `\n  ${gutter} | ${issue.sourceLine}`;
    if (issue.column !== undefined) {
      const pad = issue.sourceLine.slice(0, issue.column - 1).replace(/[^\t]/g, " ");
      text += `\n  ${" ".repeat(gutter.length)} | ${pad}^`;
    }
  }
  return text;
}

/** A path as a person wants to read it: relative to `cwd` when inside it. */
export function displayPath(file: string, cwd?: string): string {
  if (cwd === undefined) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** A `ManifestError` whose message lists every issue, one per line. */
export function manifestError(
  kind: ManifestErrorKind,
  issues: ManifestIssue[],
  options: { cwd?: string; hint?: string; cause?: unknown } = {},
): ManifestError {
  const message = issues.map((issue) => formatIssue(issue, options.cwd)).join("\n");
  return new ManifestError(message, { kind, issues, hint: options.hint, cause: options.cause });
}
