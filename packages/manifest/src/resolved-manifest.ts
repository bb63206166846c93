import type { z } from "zod";
import type { OutputJsonSchema } from "./output/json-schema.js";
import type {
  budgetLayerSchema,
  compactionLayerSchema,
  mcpServerLayerSchema,
  mediaLayerSchema,
  memoryLayerSchema,
  modelLayerSchema,
  OUTPUT_STRATEGIES,
  PERMISSION_MODES,
  permissionRuleLayerSchema,
  podLayerSchema,
  SANDBOX_BACKENDS,
  SKILL_OVER_BUDGET_ACTIONS,
  scheduleLayerSchema,
  subpodRoleLayerSchema,
  toolOutputLayerSchema,
  toolsLayerSchema,
  workerLayerSchema,
} from "./schema/layer-schema.js";
import type { ScopeRule } from "./scope/scope.js";

type Layer<T extends z.ZodType> = z.infer<T>;

/** `[pod]` after the cascade. `prompt_pack` is an absolute path or a `$prefix/…` reference. */
export type PodConfig = Layer<typeof podLayerSchema> & { name: string };

/** `[model]` after the cascade; `api_key_env` is filled with the provider's default when it has one. */
export type ModelConfig = Layer<typeof modelLayerSchema> & { ref: string; context_window: number };

/** `[worker.tool_output]` after the cascade. */
export type ToolOutputConfig = Required<Layer<typeof toolOutputLayerSchema>>;

/** `[worker]` after the cascade; sampling knobs stay optional (unset = provider default). */
export type WorkerConfig = Omit<Layer<typeof workerLayerSchema>, "tool_output"> & {
  system_prompt: string;
  language: string;
  max_tokens: number;
  max_turns: number;
  tool_output: ToolOutputConfig;
};

/** `[compaction]` with every knob filled; present only when compaction is on. */
export type CompactionConfig = Required<Omit<Layer<typeof compactionLayerSchema>, "enabled">>;

/** `[memory]` with every knob filled; present only when memory is on. */
export type MemoryConfig = Required<Omit<Layer<typeof memoryLayerSchema>, "enabled">>;

/** `[media]` with every knob filled (docs/media.md). */
export type MediaConfig = Required<Layer<typeof mediaLayerSchema>>;

/**
 * One `[[mcp.server]]`; `cwd` and a relative `command` path are absolute after the cascade.
 * Exactly one of `command` (stdio) and `url` (Streamable HTTP) is set. `headers_env` maps an
 * HTTP header name to the name of the environment variable holding its value.
 */
export type McpServerConfig = Omit<Layer<typeof mcpServerLayerSchema>, "args" | "env" | "headers_env"> & {
  args: string[];
  env: Record<string, string>;
  headers_env: Record<string, string>;
};

/** A builtin tool `[tools] builtin` may name. */
export type BuiltinToolName = NonNullable<Layer<typeof toolsLayerSchema>["builtin"]>[number];

/** One `[tools] packages` entry with the directory it resolves from (its layer file's directory). */
export interface ToolPackageRef {
  /** As written: an npm package name or a path (`./…`, `../…`, `/…`). */
  specifier: string;
  /** Absolute directory the specifier resolves from, as Node would from a file in it. */
  resolveFrom: string;
  /** The manifest file (or `--set` overlay) that declared it, for error messages. */
  declaredIn: string;
}

/** `[tools]` after the cascade, every default filled. */
export interface ToolsConfig {
  builtin: BuiltinToolName[];
  bash: boolean;
  /** An interactive `podkit run` asks before each write tool call. */
  confirm_writes: boolean;
  bash_env: string[];
  bash_timeout_ms: number;
  bash_max_timeout_ms: number;
  /** The writing tools and bash record the files they change in the session log (docs/rewind.md). */
  track_files: boolean;
  /** As written; `LoadedManifest.toolPackages` says where each resolves from. */
  packages: string[];
  /** Options per package specifier (`[tools.options."<specifier>"]`). */
  options: Record<string, Record<string, unknown>>;
  /** Deferral per package specifier (`[tools.defer]`); a package not named is not deferred. */
  defer: Record<string, DeferSetting>;
  /** `"auto"` defers a source whose tool definitions pass this share of the context window. */
  defer_auto_share: number;
}

/** Whether a source's tools are deferred: always, never, or above `defer_auto_share` (docs/tools-deferred.md). */
export type DeferSetting = boolean | "auto";

/**
 * `[session]` after the cascade: the filesystem store (`<workspace>/.podkit/sessions`), or
 * PostgreSQL with the name of the environment variable holding its connection URL.
 */
export type SessionConfig = { store: "fs" } | { store: "postgres"; url_env: string };

/** One `[[schedule]]`: a cron expression and the input of the runs it fires. */
export type ScheduleConfig = Layer<typeof scheduleLayerSchema>;

/**
 * One `[subpods.<role>]` after the cascade: `manifest`, `prompt_pack` and scope targets absolute
 * (scope targets as written, not yet canonical: the pod checks them against its own scope), caps filled.
 */
export type SubpodRoleConfig = Omit<
  Layer<typeof subpodRoleLayerSchema>,
  "description" | "max_depth" | "max_concurrent" | "output"
> & {
  description: string;
  max_depth: number;
  max_concurrent: number;
  /** `[subpods.<role>.output]`, its schema loaded and checked like `[output]`'s. */
  output?: OutputConfig;
};

/** The manifest after the whole cascade: defaults filled, paths absolute, scope canonical. */
export interface ResolvedManifest {
  pod: PodConfig;
  model: ModelConfig;
  worker: WorkerConfig;
  scope: { allow: ScopeRule[]; deny: ScopeRule[] };
  compaction?: CompactionConfig;
  memory?: MemoryConfig;
  /** `[media]`: images and PDFs in tool results (docs/media.md), defaults filled. */
  media: MediaConfig;
  mcp: { server: McpServerConfig[] };
  tools: ToolsConfig;
  session: SessionConfig;
  /** `[[schedule]]` entries of every layer (they accumulate), in order; names are unique. */
  schedule: ScheduleConfig[];
  /** `[subpods.<role>]` by role name (docs/subpods.md); empty when the pod spawns no children. */
  subpods: Record<string, SubpodRoleConfig>;
  /** `[budget]` caps (docs/subpods.md); absent when no layer sets the table. */
  budget?: BudgetConfig;
  /** `[sandbox]` with its defaults filled (docs/sandbox.md). */
  sandbox: SandboxConfig;
  /** `[permissions]`: the mode (default `"default"`) and the rules of every layer (docs/permissions.md). */
  permissions: PermissionsConfig;
  /** `[output]`: the schema the final answer is checked against (docs/output.md); absent without the table. */
  output?: OutputConfig;
  /** `[skills]` with its defaults filled (docs/skills.md); absent without the table or with `enabled = false`. */
  skills?: SkillsConfig;
}

/**
 * `[skills]` after the cascade: the skill directories, absolute and canonical, each inside the
 * workspace (`.claude/skills` added last with `claude = true`); `only` when `enabled` lists names.
 */
export interface SkillsConfig {
  dirs: string[];
  /** The skills the pod may use, by name; undefined: every skill the directories hold. */
  only?: string[];
  listing_budget_tokens: number;
  /** Above the budget: fail the render (`error`), or list nothing and let the `skill` tool search (`search`). */
  on_over_budget: (typeof SKILL_OVER_BUDGET_ACTIONS)[number];
  /** Tokens of active skill bodies a compaction carries into the new segment. */
  reinject_budget_tokens: number;
  /** A loaded skill's `allowed-tools` pre-approve those tools (never more than the pod has). */
  allow_tools: boolean;
}

/** How a typed answer reaches the pod: `tool`, `native` or `auto` (docs/output.md). */
export type OutputStrategy = (typeof OUTPUT_STRATEGIES)[number];

/**
 * `[output]` after the cascade: the schema read from its file (or taken inline) and checked as an
 * output schema, where it came from, the strategy and the repair budget, defaults filled.
 */
export interface OutputConfig {
  /** A JSON Schema whose root describes an object. */
  schema: OutputJsonSchema;
  /** The absolute path of the schema file, or `"inline"` for a table in the manifest. */
  schemaSource: string;
  strategy: OutputStrategy;
  /** Error results listing the violations the model gets before the run fails (default 2). */
  max_repairs: number;
}

/** A permission mode, from the tightest (`read_only`) to the loosest (`bypass`). */
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** One `[[permissions.rule]]`. */
export type PermissionRule = Layer<typeof permissionRuleLayerSchema>;

/** `[permissions]` after the cascade: rules accumulate across layers. */
export interface PermissionsConfig {
  mode: PermissionMode;
  rule: PermissionRule[];
}

/**
 * `[sandbox]` after the cascade: the backend (`os`: bubblewrap on Linux, Seatbelt on macOS; `none`),
 * whether a pod refuses to start without it (default: when `[tools] bash` is on), and the hosts its
 * processes may reach (none by default). The file rules are the scope's.
 */
export interface SandboxConfig {
  backend: (typeof SANDBOX_BACKENDS)[number];
  fail_if_unavailable: boolean;
  network: { allow: string[] };
}

/** `[budget]`: token (input + output) and wall-time caps per run, session and tree; unset = no cap. */
export type BudgetConfig = Layer<typeof budgetLayerSchema>;
