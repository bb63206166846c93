/**
 * Every prompt the pod itself injects into a worker, by key. This tuple is the master list:
 * adding an injection point means adding a key here, a typed context below, and a value in
 * `resources/prompts/internal.toml` — the build fails until both sides agree.
 */
export const POD_PROMPTS = [
  "compact_system",
  "compact_nudge_missing_summary",
  "compact_rewrite_oversize_summary",
  "compact_tool_refused",
  "compact_pod_tool_refused",
  "compacted_context_summary",
  "compacted_file_attachment",
  "compacted_references",
  "notify_wrapper",
  "interrupt_tool_result_summary",
  "interrupt_system_note",
  "working_boundaries_section",
  "agents_md_section",
  "context_update_section",
  "notes_truncation_notice",
  "memory_extract_system",
  "memory_consolidation_system",
  "memory_consolidation_input",
  "memory_consolidation_tidy",
  "resident_memory_section",
  "memory_knowledge_section",
  "subpod_spawn_tool_description",
  "subpod_send_tool_description",
  "subpod_stop_tool_description",
  "subpod_list_tool_description",
  "find_tools_description",
  "call_tool_description",
  "mcp_tools_changed",
  "subpod_refused_unknown_role",
  "subpod_refused_max_depth",
  "subpod_refused_max_concurrent",
  "subpod_refused_scope",
  "subpod_refused_no_session",
  "subpod_refused_not_a_child",
  "subpod_refused_role_gone",
  "subpod_refused_running",
  "subpod_refused_stopped",
  "subpod_child_no_answer",
  "subpod_child_finished",
  "skills_listing",
  "skills_search_note",
  "skill_tool_description",
  "skill_loaded",
  "skill_file_loaded",
  "skill_search_results",
  "skill_refused_arguments",
  "skill_refused_unknown",
  "skill_refused_file",
  "skill_refused_invalid",
  "skills_changed",
  "skill_reinjected",
  "skills_not_reinjected",
  "approval_denied_reason",
  "guardrail_rejected",
  "guardrail_feedback",
  "interrupt_tool_result_summary_process_ended",
  "interrupt_system_note_process_ended",
  "interrupt_tool_result_summary_moved",
  "interrupt_system_note_moved",
  "output_tool_name",
  "output_tool_description",
  "output_repair",
  "output_forced",
  "output_accepted",
  "eval_judge_system",
  "eval_judge_rubric",
  "eval_judge_input",
  "media_attachment",
  "media_elided",
  "media_disabled",
  "media_over_budget",
  "media_unreadable",
  "media_too_large",
  "media_no_store",
] as const;

/** A key of the prompt catalog. */
export type PodPrompt = (typeof POD_PROMPTS)[number];

/** The context of a prompt that takes no variables. */
export type NoPromptContext = Record<string, never>;

/** A skill as a listing shows it. */
export interface SkillSummary {
  readonly name: string;
  readonly description: string;
}

/** One rendered context section handed to `context_update_section`. */
export interface ContextSectionText {
  readonly id: string;
  readonly text: string;
}

/** The variables each prompt is rendered with (checked at compile time by `catalog.render`). */
export interface PodPromptContexts {
  /**
   * The compaction instruction, appended to the pod's own conversation as its newest user turn
   * (the compaction request rides the conversation's prompt cache). `items` are numbered from #0;
   * #0 to #`summarised`−1 are summarised, the `retained` newest are kept verbatim, starting with
   * the item `kept_from` shows.
   */
  compact_system: {
    readonly summary_target_tokens: number;
    readonly summary_max_tokens: number;
    readonly auto_read_budget_tokens: number;
    readonly items: number;
    readonly summarised: number;
    readonly retained: number;
    readonly kept_from: string;
  };
  /** Sent once when the compaction worker ended without calling `write_summary`. */
  compact_nudge_missing_summary: NoPromptContext;
  /** Sent once when the summary is over `summary_max_tokens`. */
  compact_rewrite_oversize_summary: {
    readonly summary_tokens: number;
    readonly summary_max_tokens: number;
  };
  /** The result of a compaction tool the model called outside a compaction (it did nothing). */
  compact_tool_refused: { readonly tool: string };
  /** The result of one of the pod's own tools called during a compaction (it did not run). */
  compact_pod_tool_refused: { readonly tool: string };
  /** First item of a compacted history: the summary. */
  compacted_context_summary: { readonly summary: string };
  /** A file the compaction worker marked with `mark_read_required`, as loaded into the new history. */
  compacted_file_attachment: { readonly path: string; readonly content: string };
  /** The reference list the compaction worker made with `add_reference`. */
  compacted_references: {
    readonly references: readonly { readonly target: string; readonly note: string }[];
  };
  /** Wraps a `pod.notify(message)` notification before it enters history. */
  notify_wrapper: { readonly message: string };
  /**
   * Synthetic result for a tool call cut off when someone interrupted the turn (the `_process_ended`
   * and `_moved` keys serve the other causes).
   */
  interrupt_tool_result_summary: NoPromptContext;
  /**
   * System note committed when a turn starts after one someone interrupted, in a variant for what
   * follows it: `user` (the user's next message), `notify` (a notification), `resume` (the
   * interrupted work is continued). `_process_ended` and `_moved` serve the other causes.
   */
  interrupt_system_note: { readonly trigger: "user" | "notify" | "resume" };
  /** Trailing section of every system prompt: the scope summary. */
  working_boundaries_section: { readonly scope_summary: string };
  /** Trailing section carrying AGENTS.md (unless the template used it itself). */
  agents_md_section: { readonly agents_md: string };
  /** The context update block committed when the assembled context sections change. */
  context_update_section: { readonly sections: readonly ContextSectionText[] };
  /** The closing line of a NOTES.md cut at the notes section's size limit. */
  notes_truncation_notice: { readonly file: string; readonly max_bytes: number };
  /** System prompt of the memory extract worker (seed 004). */
  memory_extract_system: { readonly language: string };
  /** System prompt of the memory consolidation worker (seed 004). */
  memory_consolidation_system: { readonly language: string };
  /** The consolidation worker's input: staged items by id, the records, usage, tidy hints, candidates. */
  memory_consolidation_input: MemoryConsolidationInputContext;
  /** Sent to the consolidation worker once its integration step is done: the tidy step. */
  memory_consolidation_tidy: { readonly protection_threshold: number };
  /** The `memory` context section: the resident memory summary. */
  resident_memory_section: { readonly summary: string };
  /** The `memory` context section: knowledge the model may call up (`model_invocation: true`). */
  memory_knowledge_section: {
    readonly knowledge: readonly { readonly slug: string; readonly description: string }[];
  };
  /** `spawn_pod`'s description: what it does and the roles the model may spawn (part of the cached prefix). */
  subpod_spawn_tool_description: {
    /** `output`: the role's typed answer's JSON Schema as compact canonical JSON, when it has one. */
    readonly roles: readonly {
      readonly name: string;
      readonly description: string;
      readonly output?: string;
    }[];
  };
  /** `send_pod`'s description. */
  subpod_send_tool_description: NoPromptContext;
  /** `stop_pod`'s description. */
  subpod_stop_tool_description: NoPromptContext;
  /** `list_pods`'s description. */
  subpod_list_tool_description: NoPromptContext;
  /** `find_tools`' description (docs/tools-deferred.md); part of the cached prefix. */
  find_tools_description: NoPromptContext;
  /** `call_tool`'s description; part of the cached prefix. */
  call_tool_description: NoPromptContext;
  /**
   * The notification an MCP server's changed tool list sends the model: tool names added, removed
   * and changed, and whether the change reached it (`applied`: through `find_tools`/`call_tool`).
   */
  mcp_tools_changed: {
    readonly server: string;
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly changed: readonly string[];
    readonly applied: boolean;
  };
  /** Refusal (an error tool result): the role asked for is not declared. */
  subpod_refused_unknown_role: { readonly role: string; readonly roles: readonly string[] };
  /** Refusal: a child of the role would be deeper than its `max_depth`. */
  subpod_refused_max_depth: { readonly role: string; readonly max_depth: number; readonly depth: number };
  /** Refusal: the role already runs `max_concurrent` children. */
  subpod_refused_max_concurrent: {
    readonly role: string;
    readonly max_concurrent: number;
    readonly running: readonly string[];
  };
  /** Refusal: the role's scope cannot be lent from this pod's. */
  subpod_refused_scope: { readonly role: string; readonly rule: string; readonly reason: string };
  /** Refusal: a sub-pod tool was called outside a turn of a pod with a session. */
  subpod_refused_no_session: NoPromptContext;
  /** Refusal: `id` is not a child of this pod (`children`: "<id> (<role>)" each). */
  subpod_refused_not_a_child: { readonly id: string; readonly children: readonly string[] };
  /** Refusal: the stored child's role is no longer declared by this pod. */
  subpod_refused_role_gone: { readonly id: string; readonly role: string };
  /** Refusal: the child is running a turn now. */
  subpod_refused_running: { readonly id: string };
  /** Refusal: the child was stopped (`stop_pod`, or its parent closed it). */
  subpod_refused_stopped: { readonly id: string };
  /** Error result: the child's run ended without an answer (it failed). */
  subpod_child_no_answer: { readonly path: string; readonly id: string; readonly error: string };
  /** The notification a background child's end sends its parent (`summary`: the child's result as JSON). */
  subpod_child_finished: { readonly path: string; readonly id: string; readonly summary: string };
  /** The skill listing in the system prompt (`skills.listing`), skills in name order (docs/skills.md). */
  skills_listing: { readonly skills: readonly SkillSummary[] };
  /** What stands in for a listing over `[skills] listing_budget_tokens` with `on_over_budget = "search"`. */
  skills_search_note: { readonly count: number };
  /** The `skill` tool's description in each mode (part of the cached prefix). */
  skill_tool_description: { readonly mode: "list" | "search" };
  /** The `skill` tool's result for a skill: its body, its directory (workspace-relative) and its bundled files. */
  skill_loaded: {
    readonly name: string;
    readonly directory: string;
    readonly body: string;
    readonly files: readonly string[];
    /** Bundled files past the listing's limit, counted. */
    readonly files_omitted: number;
  };
  /** The summary of a `skill` result carrying a bundled file (the file is its content). */
  skill_file_loaded: { readonly name: string; readonly file: string; readonly bytes: number };
  /** The `skill` tool's answer to a query (search mode): the best matches of `count` in all. */
  skill_search_results: {
    readonly query: string;
    readonly matches: readonly SkillSummary[];
    readonly count: number;
  };
  /** Error result: the call named neither a skill nor a query (or both). */
  skill_refused_arguments: { readonly mode: "list" | "search" };
  /** Error result: no skill of that name. */
  skill_refused_unknown: { readonly name: string; readonly mode: "list" | "search" };
  /** Error result: a bundled file that cannot be read (absent, outside the skill's directory, too large…). */
  skill_refused_file: { readonly name: string; readonly file: string; readonly problem: string };
  /** Error result: the skill's SKILL.md is not valid now. */
  skill_refused_invalid: { readonly name: string; readonly problem: string };
  /** The notification of skills added, changed or removed on disk since the model last heard. */
  skills_changed: {
    readonly added: readonly SkillSummary[];
    readonly changed: readonly (SkillSummary & { readonly loaded: boolean })[];
    readonly removed: readonly string[];
  };
  /** A skill's logged `skill` result carried into a compacted segment. */
  skill_reinjected: { readonly name: string; readonly loaded: string };
  /** The skills a compaction did not carry over, over `[skills] reinject_budget_tokens`. */
  skills_not_reinjected: { readonly names: readonly string[]; readonly budget: number };
  /** What the model gets for a tool call a person denied. */
  approval_denied_reason: { readonly tool: string; readonly by: string; readonly reason: string };
  /** What the model gets in place of what a guardrail rejected (a call, a result); `point`: where it ran. */
  guardrail_rejected: { readonly guardrail: string; readonly point: string; readonly reason: string };
  /** A guardrail's feedback to the model (a call's result, or a note before the next request). */
  guardrail_feedback: { readonly guardrail: string; readonly point: string; readonly message: string };
  /** `interrupt_tool_result_summary` when the process running the turn ended (a crash, a kill). */
  interrupt_tool_result_summary_process_ended: NoPromptContext;
  /** `interrupt_system_note` when the process running the turn ended (variants by `trigger`). */
  interrupt_system_note_process_ended: { readonly trigger: "user" | "notify" | "resume" };
  /** `interrupt_tool_result_summary` when the run moved to another worker (a dispatcher's takeover). */
  interrupt_tool_result_summary_moved: NoPromptContext;
  /** `interrupt_system_note` when the run moved to another worker (variants by `trigger`). */
  interrupt_system_note_moved: { readonly trigger: "user" | "notify" | "resume" };
  /** The name of the tool strategy's answer tool (docs/output.md); part of the cached prefix. */
  output_tool_name: NoPromptContext;
  /** The answer tool's description; part of the cached prefix. */
  output_tool_description: NoPromptContext;
  /**
   * The error result (tool strategy; a message with native output, `tool` then `""`) for an answer
   * that breaks the output schema: each issue at its JSON Pointer (`""` is the whole answer), and
   * which correction this is of `max_repairs`.
   */
  output_repair: {
    readonly tool: string;
    readonly issues: readonly { readonly path: string; readonly message: string }[];
    readonly repair: number;
    readonly max_repairs: number;
  };
  /** The note appended when `max_turns` or a budget forces an answer (`tool` is `""` with native output). */
  output_forced: { readonly tool: string; readonly reason: "max_turns" | "budget" };
  /** The result of an answer tool call whose answer was taken. */
  output_accepted: NoPromptContext;
  /**
   * System prompt of an eval's judge (docs/evals.md, "Judge scorers"): the rubric it grades by
   * (`eval_judge_rubric`, or the scorer's own) and the tool it answers with.
   */
  eval_judge_system: { readonly rubric: string; readonly tool: string };
  /** The rubric a judge grades by when its scorer names none. */
  eval_judge_rubric: NoPromptContext;
  /** What the judge is shown of one eval item: its turns, the recording's answers, the expected answer. */
  eval_judge_input: EvalJudgeInputContext;
  /**
   * The text of the message carrying a batch's tool-result media on a wire whose tool results take
   * none (OpenAI Chat, OpenAI-compatible servers): committed with the images (docs/media.md).
   * `files` labels each part (`image/png 1568×980`), joined with commas.
   */
  media_attachment: { readonly count: number; readonly files: string };
  /** Put in a media part's place when a prune leaves old media out of a request. */
  media_elided: { readonly file: string };
  /** A tool's media part with `[media] enabled = false`. */
  media_disabled: { readonly file: string };
  /** A tool's media part past the turn's `[media]` budget (`max_images_per_turn`, `max_bytes_per_turn`). */
  media_over_budget: { readonly file: string; readonly max_images: number; readonly max_bytes: number };
  /** A tool's media part whose bytes are no image or PDF podkit reads (`reason`: the decoder's word). */
  media_unreadable: { readonly file: string; readonly reason: string };
  /** A document over the provider's size, or an image that cannot be brought under it. */
  media_too_large: { readonly file: string; readonly bytes: number; readonly max_bytes: number };
  /** A tool's media part in a pod whose session store keeps no blobs (nothing could hold it). */
  media_no_store: { readonly file: string };
}

/** What `eval_judge_input` is rendered with: one eval item (or its recorded baseline) as the judge sees it. */
export interface EvalJudgeInputContext {
  readonly turns: readonly {
    readonly turn: number;
    readonly input: string;
    /** The turn's text answer ("" when it gave none). */
    readonly answer: string;
    /** The typed answer as JSON ("" when the turn gave none). */
    readonly output: string;
    readonly tools: readonly {
      readonly name: string;
      readonly arguments: string;
      /** The result's text, cut at 2000 characters ("" when the call got none). */
      readonly result: string;
      readonly is_error: boolean;
    }[];
  }[];
  /** The recording's answers, turn by turn (empty for an input case). */
  readonly reference: readonly { readonly turn: number; readonly answer: string }[];
  /** The case's expected answer of its last turn (text, or JSON), "" when it gives none. */
  readonly expected: string;
}

/** One staged item in the consolidation input: its id, kind, topic and its own fields. */
export interface MemoryStagedItemView {
  readonly id: string;
  readonly kind: string;
  readonly topic: string;
  readonly [field: string]: string | boolean;
}

/** Records of one kind in the consolidation input: in full, or listed by slug and first line. */
export interface MemoryRecordsView {
  readonly full: readonly { readonly slug: string; readonly text: string }[];
  readonly listed: readonly { readonly slug: string; readonly first_line: string }[];
}

/** What `memory_consolidation_input` is rendered with (built by `@podkit/memory`). */
export interface MemoryConsolidationInputContext {
  readonly staging: readonly {
    readonly id: string;
    readonly session_id: string;
    readonly created_at: string;
    readonly items: readonly MemoryStagedItemView[];
  }[];
  /** The summary record's text, "" when there is none. */
  readonly summary: string;
  readonly decisions: MemoryRecordsView;
  readonly requests: MemoryRecordsView;
  readonly protection_threshold: number;
  readonly usage: readonly {
    readonly kind: string;
    readonly slug: string;
    readonly used: number;
    readonly shown: number;
    readonly protected: boolean;
  }[];
  readonly hints: {
    readonly replaced_chains: readonly (readonly string[])[];
    readonly sources_overflow: readonly {
      readonly kind: string;
      readonly slug: string;
      readonly sources: number;
    }[];
    readonly similar_slugs: readonly { readonly kind: string; readonly slugs: readonly string[] }[];
    readonly lint_warnings: readonly {
      readonly record: string;
      readonly field: string;
      readonly message: string;
    }[];
  };
  readonly candidates: readonly {
    readonly topic: string;
    readonly sessions: readonly string[];
    readonly items: readonly MemoryStagedItemView[];
  }[];
}

/** The context type of one key. */
export type PodPromptContext<K extends PodPrompt> = PodPromptContexts[K];

/** `render(key)` may omit the context of keys that take none. */
export type PodPromptContextArgs<K extends PodPrompt> = PodPromptContexts[K] extends NoPromptContext
  ? [context?: NoPromptContext]
  : [context: PodPromptContexts[K]];

/** True for a string that is a `PodPrompt` key (for values read at runtime). */
export function isPodPrompt(key: string): key is PodPrompt {
  return (POD_PROMPTS as readonly string[]).includes(key);
}

// The contexts table and the key tuple must list the same keys.
type SameKeys<A, B> = [Exclude<A, B>, Exclude<B, A>] extends [never, never] ? true : never;
export const contextsCoverEveryPodPrompt: SameKeys<keyof PodPromptContexts, PodPrompt> = true;
