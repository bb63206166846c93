import { z } from "zod";
import type { RecordKind } from "./layout.js";

/** RFC 3339 in UTC with a literal `Z` (fractional seconds allowed), e.g. `2026-04-15T09:30:00Z`. */
const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/;

/** True for a real UTC instant written as RFC 3339 with `Z` (rejects `2026-02-30T…`). */
export function isRfc3339Utc(value: string): boolean {
  const match = RFC3339_UTC.exec(value);
  if (match === null) return false;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const date = new Date(Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 0, h ?? 0, mi ?? 0, s ?? 0));
  return (
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === (mo ?? 0) - 1 &&
    date.getUTCDate() === d &&
    (h ?? 0) < 24 &&
    (mi ?? 0) < 60 &&
    (s ?? 0) < 60
  );
}

/** A timestamp as records hold it (RFC 3339 UTC, seconds precision). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

const timestamp = z.string().refine(isRfc3339Utc, {
  error: 'expected an RFC 3339 UTC timestamp such as "2026-04-15T09:30:00Z"',
});

/**
 * Where a record's content came from: a segment of a session log and the entry range `[start,
 * end]` (0-based, inclusive). Attached by code to staging entries; consolidation copies it.
 */
export const SourceSchema = z
  .strictObject({
    segment_id: z.string().min(1),
    range: z.tuple([z.int().min(0), z.int().min(0)]),
  })
  .refine((source) => source.range[0] <= source.range[1], {
    error: "range must be [start, end] with start <= end",
    path: ["range"],
  });
export type Source = z.infer<typeof SourceSchema>;

const sources = z.array(SourceSchema);
/** Decisions and requests always say where they came from (seed 004: they keep their staging source). */
const requiredSources = sources.min(1, {
  error:
    "sources must name at least one source (the session range the record comes from); in a consolidation, name the staged items in `staged` and the tools write them",
});

export const DECISION_STATUSES = ["open", "resolved", "replaced"] as const;
export const KNOWLEDGE_KINDS = ["term", "policy", "rule", "fact", "howto"] as const;

/** Body caps in characters: records 8000, the summary 20000. */
export const BODY_MAX_CHARS = 8000;
export const SUMMARY_MAX_CHARS = 20000;
export const DESCRIPTION_MAX_CHARS = 1024;

export const DecisionFrontmatterSchema = z.strictObject({
  created_at: timestamp,
  updated_at: timestamp,
  status: z.enum(DECISION_STATUSES),
  replaced_by: z.string().optional(),
  sources: requiredSources,
});

export const RequestFrontmatterSchema = z.strictObject({
  created_at: timestamp,
  updated_at: timestamp,
  sources: requiredSources,
});

export const KnowledgeFrontmatterSchema = z.strictObject({
  created_at: timestamp,
  updated_at: timestamp,
  kind: z.enum(KNOWLEDGE_KINDS),
  description: z.string().min(1),
  model_invocation: z.boolean().default(false),
  last_sources: sources,
});

export const SummaryFrontmatterSchema = z.strictObject({
  updated_at: timestamp,
  last_rewritten_from: z.union([z.string(), z.array(z.string())]).optional(),
});

export type DecisionFrontmatter = z.infer<typeof DecisionFrontmatterSchema>;
export type RequestFrontmatter = z.infer<typeof RequestFrontmatterSchema>;
export type KnowledgeFrontmatter = z.infer<typeof KnowledgeFrontmatterSchema>;
export type SummaryFrontmatter = z.infer<typeof SummaryFrontmatterSchema>;

export const FRONTMATTER_SCHEMAS = {
  decision: DecisionFrontmatterSchema,
  request: RequestFrontmatterSchema,
  knowledge: KnowledgeFrontmatterSchema,
  summary: SummaryFrontmatterSchema,
} as const satisfies Record<RecordKind, z.ZodType>;

/** Frontmatter keys in the order records are written. */
export const FIELD_ORDER: Record<RecordKind, readonly string[]> = {
  decision: ["created_at", "updated_at", "status", "replaced_by", "sources"],
  request: ["created_at", "updated_at", "sources"],
  knowledge: ["created_at", "updated_at", "kind", "description", "model_invocation", "last_sources"],
  summary: ["updated_at", "last_rewritten_from"],
};

/** Seed 004 spells the knowledge flag `model_invokation`; it is read and written back correctly. */
export const MODEL_INVOCATION_ALIAS = "model_invokation";
