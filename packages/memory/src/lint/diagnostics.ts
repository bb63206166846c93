import type { RecordKind } from "../records/layout.js";

/** What a diagnostic is about; one code per linter check. */
export const LINT_CODES = [
  "path",
  "slug",
  "frontmatter",
  "field",
  "enum",
  "timestamp",
  "sources",
  "replaced_by",
  "status",
  "body_too_long",
  "description_too_long",
  "exists",
  "similar_slug",
  "reference",
  "alias",
  "dangling_replaced_by",
  "source_not_given",
  "refused",
  "encoding",
  "too_large",
  "protected",
] as const;
export type LintCode = (typeof LINT_CODES)[number];

/** One linter finding: the record (its workspace-relative path), the field, and what to do. */
export interface LintDiagnostic {
  readonly severity: "error" | "warning";
  readonly code: LintCode;
  /** The record's path relative to the workspace, e.g. `.podkit/memory/decisions/use-pnpm.md`. */
  readonly record: string;
  readonly kind?: RecordKind;
  readonly slug?: string;
  /** The frontmatter field (`status`, `sources[0].range`), `body`, or absent for the whole record. */
  readonly field?: string;
  /** 1-based line in the record file, where known. */
  readonly line?: number;
  readonly message: string;
}

/** Errors block a write; warnings (similar slugs, the old flag spelling) are reported beside it. */
export interface LintReport {
  readonly errors: LintDiagnostic[];
  readonly warnings: LintDiagnostic[];
}

/** Splits diagnostics by severity. */
export function toReport(diagnostics: readonly LintDiagnostic[]): LintReport {
  return {
    errors: diagnostics.filter((d) => d.severity === "error"),
    warnings: diagnostics.filter((d) => d.severity === "warning"),
  };
}

/** Diagnostics as lines for a tool error or the CLI: `record (field): message`. */
export function formatDiagnostics(diagnostics: readonly LintDiagnostic[]): string {
  return diagnostics
    .map((d) => {
      const where = `${d.record}${d.line === undefined ? "" : `:${d.line}`}`;
      return `${d.severity}: ${where}${d.field === undefined ? "" : ` (${d.field})`}: ${d.message}`;
    })
    .join("\n");
}
