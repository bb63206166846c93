import { z } from "zod";

/**
 * Version of the on-disk entry format this package writes, as `v` on every `segment_start`.
 * v2 lines end with their sequence number and a checksum (see `line-frame.ts`); v1 lines are
 * plain JSON and stay readable (and appendable, in v1). v3 is v2's framing plus approvals, child
 * sessions and `budget_exhausted` (`format-versions.ts` says which entries need it; the rule for
 * what bumps the version is in docs/session-store.md).
 */
export const FORMAT_VERSION = 3;
/** Every format version this package reads. */
export const READABLE_VERSIONS: readonly number[] = [1, 2, 3];
export type FormatVersion = 1 | 2 | 3;

/**
 * The least this package needs to know about a history item: a JSON object tagged by `type`.
 * Every other field (including provider metadata) is kept verbatim. Pass llm-worker's own item
 * schema to `FsStore` to validate more strictly; this package never depends on llm-worker.
 */
export const MinimalItemSchema = z.looseObject({ type: z.string() });
export type MinimalItem = z.infer<typeof MinimalItemSchema>;

/** Where a segment came from: the source segment and the turn count at the cut. */
export const LineageSchema = z.object({
  segment_id: z.string().min(1),
  at_turn: z.number().int().nonnegative(),
});
export type Lineage = z.infer<typeof LineageSchema>;

/**
 * Where a child session came from (sub-pods): the parent's session, the tool call that spawned it,
 * the role it was spawned for and its depth in the tree (the root's children are at depth 1).
 */
export const ParentLinkSchema = z.object({
  session_id: z.string().min(1),
  call_id: z.string().min(1),
  role: z.string().min(1),
  depth: z.number().int().min(1),
});
export type ParentLink = z.infer<typeof ParentLinkSchema>;

/** A system message the pod injected; `body` is the exact text the model saw. */
export const SystemItemSchema = z.looseObject({
  kind: z.enum(["notification", "interrupt", "context", "attachment"]),
  body: z.string(),
});
export type SystemItem = z.infer<typeof SystemItemSchema>;

export const InvokeTriggerSchema = z.enum(["user", "notify", "resume"]);
export type InvokeTrigger = z.infer<typeof InvokeTriggerSchema>;

/**
 * How a run ended: llm-worker's run status, plus `budget_exhausted` (format v3) — a pod's
 * `[budget]` cap stopped the run before a request (the worker yielded; replay reads it as
 * `yielded`: nothing in flight, the run can be resumed).
 */
export const RunStatusSchema = z.enum([
  "finished",
  "paused",
  "limit_reached",
  "yielded",
  "awaiting_approval",
  "budget_exhausted",
]);

/** What an approval answer decides about a tool call. */
export const ApprovalDecisionSchema = z.enum(["allow", "deny"]);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
export type RunStatus = z.infer<typeof RunStatusSchema>;

/**
 * What a history item of a `segment_start` came from, when a restore needs more than the item:
 * the system item behind a system message (its `kind`: context, notification, interrupt note,
 * attachment), or the structured `segments` of a user input. `index` is the item's position in
 * `history`. Written by forks so the annotations survive a move to a new segment.
 */
export const HistorySourceSchema = z.union([
  z.object({ index: z.number().int().nonnegative(), system_item: SystemItemSchema }),
  z.object({ index: z.number().int().nonnegative(), segments: z.array(z.unknown()) }),
]);
export type HistorySourceEntry = z.infer<typeof HistorySourceSchema>;

const ts = z.number().int().nonnegative();
const count = z.number().int().nonnegative();
/** The request config as far as this package knows it: any JSON object. */
export const MinimalConfigSchema = z.record(z.string(), z.unknown());

/**
 * What a store validates the items and the request config of a log with. A log read back is
 * untrusted input (a hand-edited or damaged file, a row written by another program): a store
 * given llm-worker's `ItemSchema` and `RequestConfigSchema` answers a malformed item or config
 * with `CorruptEntryError` naming the file and line, instead of handing it to the worker. This
 * package depends on no podkit package, so the schemas are passed in; the defaults only require
 * an item to be an object with a string `type` and the config to be an object.
 */
export interface EntrySchemas<TItem> {
  /** History items (`segment_start.history`, `assistant_item`, `tool_result`); default `MinimalItemSchema`. */
  itemSchema?: z.ZodType<TItem>;
  /** `config` of `segment_start` and `config_changed`; default any JSON object. */
  configSchema?: z.ZodType<Record<string, unknown>>;
}

/**
 * Builds the schema of one log line for a given item (and config) schema. The result is used to
 * validate only: readers keep the object `JSON.parse` produced (zod would rebuild objects and
 * reorder keys), so items round-trip byte-identically.
 */
export function createEntrySchema<TItem>(
  item: z.ZodType<TItem>,
  config: z.ZodType<Record<string, unknown>> = MinimalConfigSchema,
) {
  return z.discriminatedUnion("kind", [
    z.object({
      kind: z.literal("segment_start"),
      ts,
      v: z.union([z.literal(1), z.literal(2), z.literal(3)]),
      session_id: z.string().min(1),
      segment_id: z.string().min(1),
      system_prompt: z.string().nullable(),
      config,
      history: z.array(item),
      forked_from: LineageSchema.optional(),
      compacted_from: LineageSchema.optional(),
      parent: ParentLinkSchema.optional(),
      history_sources: z.array(HistorySourceSchema).optional(),
    }),
    z.object({ kind: z.literal("invoke"), ts, trigger: InvokeTriggerSchema }),
    z.object({
      kind: z.literal("user_input"),
      ts,
      text: z.string(),
      segments: z.array(z.unknown()).optional(),
    }),
    z.object({ kind: z.literal("assistant_item"), ts, item }),
    z.object({ kind: z.literal("tool_result"), ts, item }),
    z.object({ kind: z.literal("system_item"), ts, item: SystemItemSchema }),
    z.object({ kind: z.literal("turn_end"), ts, turn: count }),
    z.object({
      kind: z.literal("llm_usage"),
      ts,
      history_len: count,
      input_tokens: count,
      cache_read_tokens: count,
      cache_write_tokens: count,
      output_tokens: count,
      reasoning_tokens: count.optional(),
    }),
    z.object({ kind: z.literal("run_completed"), ts, result: RunStatusSchema, interrupted: z.boolean() }),
    z.object({ kind: z.literal("run_errored"), ts, message: z.string(), interrupted: z.boolean() }),
    z.object({ kind: z.literal("config_changed"), ts, config }),
    // A tool call waits for a person (or a service) to allow or deny it; committed before the
    // question is asked, so a process that dies while waiting leaves the question in the log.
    z.object({
      kind: z.literal("approval_requested"),
      ts,
      call_id: z.string().min(1),
      tool: z.string().min(1),
      /** The call's arguments as the model sent them (JSON text). */
      arguments: z.string(),
      /** The pod that made the call, from the root: `["root"]`, later `["root", "role#1", …]`. */
      pod_path: z.array(z.string().min(1)).min(1),
      /** What asked: the builtin policy (`bash`, `confirm_writes`) or a hook's name. */
      asked_by: z.string().min(1),
      reason: z.string().optional(),
      /**
       * A delegated approval (format v3): this call of a parent (a sub-pod tool call) waits on the
       * approvals of this child session. It is never answered itself; it closes when the call
       * gets its result.
       */
      child_session_id: z.string().min(1).optional(),
    }),
    z.object({
      kind: z.literal("approval_answered"),
      ts,
      call_id: z.string().min(1),
      decision: ApprovalDecisionSchema,
      reason: z.string().optional(),
      /** Who answered (a user and host, a service's name). */
      by: z.string().min(1),
      /**
       * Answered by the approver of the very run that asked, while it waited: its batch may have
       * run after this. Absent for answers from outside (another process, `podkit approve`).
       */
      in_run: z.boolean().optional(),
    }),
    z.object({ kind: z.literal("extension"), ts, domain: z.string().min(1), payload: z.unknown() }),
  ]);
}

/** The schema of one log line with the minimal item shape. */
export const EntrySchema = createEntrySchema(MinimalItemSchema);

/** One log line, tagged by `kind`, `ts` in epoch ms. */
export type Entry<TItem = MinimalItem> = z.infer<ReturnType<typeof createEntrySchema<TItem>>>;
export type EntryKind = Entry["kind"];
export type EntryOf<K extends EntryKind, TItem = MinimalItem> = Extract<Entry<TItem>, { kind: K }>;
export type SegmentStartEntry<TItem = MinimalItem> = EntryOf<"segment_start", TItem>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * What a writer appends: any entry except `segment_start` (segments are started by
 * create/fork/compaction), with `ts` filled from the log's clock when omitted.
 */
export type EntryInput<TItem = MinimalItem> = DistributiveOmit<
  Exclude<Entry<TItem>, { kind: "segment_start" }>,
  "ts"
> & { ts?: number };
