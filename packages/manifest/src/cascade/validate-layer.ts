import type { ManifestIssue } from "../errors.js";
import { manifestError } from "../format-issue.js";
import { describeIssues, type IssueOrigin } from "../schema/describe-issues.js";
import { type ManifestLayerData, manifestLayerSchema } from "../schema/layer-schema.js";

/** Hint shown with every schema error. */
export const SCHEMA_HINT =
  "fix the key shown; every key, its type and default are in podkit's docs/manifest.md";

/** Checks one parsed TOML document against the strict layer schema. */
export function validateLayer(raw: unknown, origin: IssueOrigin, cwd: string): ManifestLayerData {
  const result = manifestLayerSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues: ManifestIssue[] = describeIssues(result.error.issues, raw, manifestLayerSchema, origin);
  throw manifestError("schema", issues, { cwd, hint: SCHEMA_HINT, cause: result.error });
}
