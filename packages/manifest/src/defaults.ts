import type { CompactionConfig } from "./resolved-manifest.js";
import type { ManifestLayerData } from "./schema/layer-schema.js";

/** `[worker].system_prompt` when no layer sets one: the builtin default prompt file. */
export const DEFAULT_SYSTEM_PROMPT = '{% include "$podkit/default" %}';

/** The lowest layer of the cascade: values every manifest starts from. */
export const BUILTIN_LAYER: ManifestLayerData = {
  worker: {
    system_prompt: DEFAULT_SYSTEM_PROMPT,
    language: "match the user's language",
    max_tokens: 8192,
    max_turns: 50,
    tool_output: { default_max_bytes: 65536, per_tool: {} },
  },
};

/** `[compaction]` defaults, applied when the table is present. */
export const COMPACTION_DEFAULTS = {
  retained_tokens: 8000,
  prune_protected_tokens: 8000,
  prune_min_savings: 4096,
  auto_read_budget_tokens: 8000,
  worker_context_max_tokens: 50000,
  summary_target_tokens: 2000,
  summary_max_tokens: 4000,
  result_context_max_tokens: 60000,
  worker_max_turns: 20,
} as const;

/**
 * Unset thresholds follow the model's context window, in the proportions of the documented
 * example (120000 / 150000 of a 200000 window).
 */
export const COMPACTION_THRESHOLD_SHARE = 0.6;
export const COMPACTION_REQUEST_THRESHOLD_SHARE = 0.75;

/**
 * `[compaction]` with every key at its default for a model of `contextWindow` tokens: what the
 * cascade fills unset keys from, and what a pod compacts with when asked to compact without a
 * `[compaction]` table. The one source of these numbers.
 */
export function defaultCompactionConfig(contextWindow: number): CompactionConfig {
  return {
    threshold: Math.floor(contextWindow * COMPACTION_THRESHOLD_SHARE),
    request_threshold: Math.floor(contextWindow * COMPACTION_REQUEST_THRESHOLD_SHARE),
    ...COMPACTION_DEFAULTS,
  };
}

/** `[memory]` defaults, applied when the table is present. */
export const MEMORY_DEFAULTS = {
  extract_threshold: 20000,
  consolidation_threshold_files: 8,
  consolidation_threshold_bytes: 65536,
  tools: false,
  git_commit: false,
} as const;

/**
 * Workspace trees only the memory tools may write; with `[memory]` on, the cascade adds a
 * recursive deny-write rule for each, relative to the workspace.
 */
export const MEMORY_PROTECTED_DIRS = [".podkit/memory", ".podkit/knowledge"] as const;

/** `[media]` defaults (docs/media.md): on; 20 parts and 20 MiB stored per turn. */
export const MEDIA_DEFAULTS = {
  enabled: true,
  max_images_per_turn: 20,
  max_bytes_per_turn: 20 * 1024 * 1024,
} as const;

/** `[tools]` bash timeouts (ms): the per-call default and the most a call may ask for. */
export const TOOLS_DEFAULTS = {
  bash: false,
  confirm_writes: false,
  bash_timeout_ms: 120_000,
  bash_max_timeout_ms: 600_000,
  track_files: true,
  /** `"auto"` defers a source above a tenth of the context window (docs/tools-deferred.md). */
  defer_auto_share: 0.1,
} as const;

/** Builtin tools that only read; on by default. The write tools join them when a write rule exists. */
export const READ_TOOLS = ["read_file", "glob", "grep"] as const;
export const WRITE_TOOLS = ["write_file", "edit_file"] as const;

/** `[sandbox]` defaults; `fail_if_unavailable` unset follows `[tools] bash` (docs/sandbox.md). */
export const SANDBOX_DEFAULTS = {
  backend: "os",
  network_allow: [] as readonly string[],
} as const;

/** `[output]` defaults, applied when the table is present (docs/output.md). */
export const OUTPUT_DEFAULTS = {
  strategy: "tool",
  max_repairs: 2,
} as const;

/**
 * `[skills]` defaults, applied when the table is present (docs/skills.md). `dirs` are relative to
 * the workspace; `claude = true` adds `CLAUDE_SKILLS_DIR`.
 */
export const SKILLS_DEFAULTS = {
  dirs: [".podkit/skills"] as readonly string[],
  listing_budget_tokens: 2000,
  on_over_budget: "error",
  reinject_budget_tokens: 8000,
  allow_tools: false,
} as const;

/** Claude Code's skill directory, read with `[skills] claude = true`. */
export const CLAUDE_SKILLS_DIR = ".claude/skills";

/** `[session]` defaults: the filesystem store; for PostgreSQL, the variable holding the URL. */
export const SESSION_DEFAULTS = {
  store: "fs",
  url_env: "PODKIT_DATABASE_URL",
} as const;
