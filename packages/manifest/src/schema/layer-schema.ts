import { z } from "zod";
import { safeParseModelRef } from "../model-ref.js";

// One manifest layer (a single TOML file or `--set` overlay) before the cascade: every table is
// strict and every field optional, because any field may come from another layer. Requiredness
// and cross-field rules are checked after the merge (see `finalize-manifest.ts`).

const count = z.int().min(1);
const size = z.int().min(0);
const nonEmpty = z.string().refine((s) => s.trim() !== "", { error: "must not be empty" });

/** Reasoning efforts a `worker.reasoning` string may name (providers map them to their own). */
export const REASONING_EFFORTS = ["minimal", "low", "medium", "high"] as const;

/** `"read" < "write"`. */
export const permissionSchema = z.enum(["read", "write"]);

/** One `[[scope.allow]]` / `[[scope.deny]]` entry as written (target not yet resolved). */
export const scopeRuleLayerSchema = z.strictObject({
  target: nonEmpty,
  permission: permissionSchema,
  recursive: z.boolean().optional(),
});

export const podLayerSchema = z.strictObject({
  name: nonEmpty.optional(),
  prompt_pack: nonEmpty.optional(),
});

export const modelLayerSchema = z.strictObject({
  ref: z
    .string()
    .superRefine((ref, ctx) => {
      const parsed = safeParseModelRef(ref);
      if ("problem" in parsed) ctx.addIssue({ code: "custom", message: parsed.problem });
    })
    .optional(),
  base_url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
      error: "expected an environment variable name (letters, digits, _)",
    })
    .optional(),
  context_window: count.optional(),
});

export const toolOutputLayerSchema = z.strictObject({
  default_max_bytes: count.optional(),
  per_tool: z.record(z.string(), count).optional(),
});

const reasoningSchema = z.custom<(typeof REASONING_EFFORTS)[number] | number>(
  (v) =>
    (typeof v === "string" && (REASONING_EFFORTS as readonly string[]).includes(v)) ||
    (typeof v === "number" && Number.isSafeInteger(v) && v >= 1),
  {
    error: `expected an effort (${REASONING_EFFORTS.map((e) => `"${e}"`).join(" | ")}) or a token budget (integer ≥ 1)`,
  },
);

export const workerLayerSchema = z.strictObject({
  system_prompt: z.string().optional(),
  language: nonEmpty.optional(),
  max_tokens: count.optional(),
  max_turns: count.optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: count.optional(),
  stop_sequences: z.array(z.string().min(1)).optional(),
  reasoning: reasoningSchema.optional(),
  tool_output: toolOutputLayerSchema.optional(),
});

export const scopeLayerSchema = z.strictObject({
  allow: z.array(scopeRuleLayerSchema).optional(),
  deny: z.array(scopeRuleLayerSchema).optional(),
});

/** `[compaction]` knobs; defaults live in `defaults.ts`. */
export const compactionLayerSchema = z.strictObject({
  enabled: z.boolean().optional(),
  threshold: count.optional(),
  request_threshold: count.optional(),
  retained_tokens: size.optional(),
  prune_protected_tokens: size.optional(),
  prune_min_savings: size.optional(),
  auto_read_budget_tokens: size.optional(),
  worker_context_max_tokens: count.optional(),
  summary_target_tokens: count.optional(),
  summary_max_tokens: count.optional(),
  result_context_max_tokens: count.optional(),
  worker_max_turns: count.optional(),
});

/** `[memory]` knobs; defaults live in `defaults.ts`. */
export const memoryLayerSchema = z.strictObject({
  enabled: z.boolean().optional(),
  extract_threshold: count.optional(),
  consolidation_threshold_files: count.optional(),
  consolidation_threshold_bytes: count.optional(),
  tools: z.boolean().optional(),
  git_commit: z.boolean().optional(),
});

/**
 * `[media]` (docs/media.md): images and PDFs in tool results. `enabled = false` keeps them from the
 * model (a model without image input); the per-turn caps bound what one turn stores.
 */
export const mediaLayerSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** Media parts stored per turn; later ones reach the model as a note. */
  max_images_per_turn: count.optional(),
  /** Their stored bytes per turn (after downscaling); a part past it is a note. */
  max_bytes_per_turn: count.optional(),
});

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  error: "expected an environment variable name (letters, digits, _)",
});

/**
 * Whether a source's tools are deferred (docs/tools-deferred.md): `true`, `false`, or `"auto"`
 * (deferred when their definitions pass `[tools] defer_auto_share` of the context window).
 */
export const deferSettingSchema = z.custom<boolean | "auto">((v) => typeof v === "boolean" || v === "auto", {
  error: 'expected true, false or "auto"',
});

/**
 * One `[[mcp.server]]`: a stdio server (`command`) or a Streamable HTTP one (`url`); exactly one
 * of them is checked after the cascade. Headers only name environment variables, so a manifest
 * never holds a secret.
 */
export const mcpServerLayerSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/, { error: "expected a name of letters, digits, _ and -" }),
  command: nonEmpty.optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: nonEmpty.optional(),
  url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
  headers_env: z
    .record(
      z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: "expected an HTTP header name" }),
      envName,
    )
    .optional(),
  timeout_ms: count.optional(),
  /** Defer this server's tools (docs/tools-deferred.md); default false. */
  defer: deferSettingSchema.optional(),
});

export const mcpLayerSchema = z.strictObject({
  server: z.array(mcpServerLayerSchema).optional(),
});

/** Builtin tool names `[tools] builtin` may list (`bash` has its own switch). */
export const BUILTIN_TOOL_NAMES = ["read_file", "write_file", "edit_file", "glob", "grep"] as const;

/** `[tools]`: builtin tools, the opt-in bash tool, third-party tool packages. */
export const toolsLayerSchema = z.strictObject({
  builtin: z.array(z.enum(BUILTIN_TOOL_NAMES)).optional(),
  bash: z.boolean().optional(),
  /** An interactive `podkit run` asks before each `write_file`/`edit_file` call (bash always asks). */
  confirm_writes: z.boolean().optional(),
  /** Variables bash may see although their names look secret (…KEY, …TOKEN, …). */
  bash_env: z.array(envName).optional(),
  bash_timeout_ms: count.optional(),
  bash_max_timeout_ms: count.optional(),
  /** The writing tools and bash record the files they change, for rewind (docs/rewind.md). */
  track_files: z.boolean().optional(),
  packages: z.array(nonEmpty).optional(),
  /** `[tools.options."<package>"]`: passed to that package as `ctx.options`. */
  options: z.record(nonEmpty, z.record(z.string(), z.unknown())).optional(),
  /** `[tools.defer]`: `"<package>" = true | false | "auto"` (docs/tools-deferred.md). */
  defer: z.record(nonEmpty, deferSettingSchema).optional(),
  /** `"auto"` defers a source whose tool definitions pass this share of the context window. */
  defer_auto_share: z
    .number()
    .gt(0, { error: "expected a share above 0 and at most 1" })
    .max(1, {
      error: "expected a share above 0 and at most 1",
    })
    .optional(),
});

/** `[sandbox] backend`: `os` (bubblewrap on Linux, Seatbelt on macOS) or `none` (docs/sandbox.md). */
export const SANDBOX_BACKENDS = ["os", "none"] as const;

/**
 * One `[sandbox.network] allow` entry: a host name, `*.` and a domain (its subdomains), an IPv4
 * address or a bracketed IPv6 one, each with an optional `:port`.
 */
const networkHostSchema = z
  .string()
  .regex(
    /^(?:(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/,
    {
      error: 'expected a host ("api.example.com", "*.example.com", "127.0.0.1:8080", "[::1]:8080")',
    },
  );

/**
 * `[sandbox]`: the OS sandbox around every process a pod starts (bash, stdio MCP servers, tool
 * packages that spawn). Its file rules come from the scope; only the network has a list here.
 */
export const sandboxLayerSchema = z.strictObject({
  backend: z.enum(SANDBOX_BACKENDS).optional(),
  /** Refuse to start the pod when the sandbox cannot run (default: true when `[tools] bash` is on). */
  fail_if_unavailable: z.boolean().optional(),
  network: z.strictObject({ allow: z.array(networkHostSchema).optional() }).optional(),
});

/** Stores `[session] store` may name. */
export const SESSION_STORES = ["fs", "postgres"] as const;

/**
 * `[session] url_env`: the name of the variable holding the connection URL. A URL written here
 * instead is refused without being echoed: it usually carries a password, and error messages end
 * up in terminals and CI logs.
 */
const urlEnvSchema = z.string().superRefine((value, ctx) => {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) return;
  ctx.addIssue({
    code: "custom",
    message: /[:/@]/.test(value)
      ? 'holds a connection URL, which a manifest must never hold (it carries the password): put the URL in an environment variable and name that variable here, e.g. url_env = "PODKIT_DATABASE_URL"'
      : "expected an environment variable name (letters, digits, _)",
  });
});

/** `[session]`: where sessions are stored; the URL itself only in the environment. */
export const sessionLayerSchema = z.strictObject({
  store: z.enum(SESSION_STORES).optional(),
  url_env: urlEnvSchema.optional(),
});

/**
 * A cron expression as the engines take it: 5 fields (minute … day of week), or 6 with seconds
 * first. Only the shape is checked here (each field of digits, names and `* , - / ? L W #`); the
 * dispatcher's cron parser checks the values when a worker registers the schedule.
 */
const cronSchema = z.string().superRefine((value, ctx) => {
  const fields = value.trim().split(/\s+/);
  if ((fields.length === 5 || fields.length === 6) && fields.every((f) => /^[0-9A-Za-z*,\-/?#]+$/.test(f)))
    return;
  ctx.addIssue({
    code: "custom",
    message:
      'expected a cron expression of 5 fields (minute hour day month weekday, e.g. "0 7 * * 1-5") or 6 with seconds first',
  });
});

/** One `[[schedule]]` (docs/dispatch.md): the dispatcher's cron fires it; each firing is an ordinary run. */
export const scheduleLayerSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/, { error: "expected a name of letters, digits, _ and -" }),
  cron: cronSchema,
  /** The user input of every run it fires (each in a new session). */
  input: nonEmpty,
  /** IANA time zone of the expression; default UTC. */
  tz: nonEmpty.optional(),
});

/**
 * `[budget]`: caps of tokens (input + output) and wall time per run, per session and per tree (a
 * root with its sub-pods; the root's caps apply to the whole tree). Unset: no cap.
 */
export const budgetLayerSchema = z.strictObject({
  run_tokens: count.optional(),
  session_tokens: count.optional(),
  tree_tokens: count.optional(),
  run_wall_ms: count.optional(),
  session_wall_ms: count.optional(),
  tree_wall_ms: count.optional(),
});

/**
 * Permission modes, from the tightest: `read_only` (only tools that change nothing run),
 * `default` (the builtin approval policy asks), `accept_edits` (file edits run without asking),
 * `bypass` (nothing asks; deny rules and the scope still hold). docs/permissions.md.
 */
export const PERMISSION_MODES = ["read_only", "default", "accept_edits", "bypass"] as const;

/** One `[[permissions.rule]]`: allow, ask or deny calls of `tool` whose arguments match `args`. */
export const permissionRuleLayerSchema = z.strictObject({
  tool: nonEmpty,
  args: z.record(z.string(), z.string()).optional(),
  action: z.enum(["allow", "ask", "deny"]),
  reason: nonEmpty.optional(),
});

/** `[permissions]`: the pod's mode and its rules per tool and argument pattern. */
export const permissionsLayerSchema = z.strictObject({
  mode: z.enum(PERMISSION_MODES).optional(),
  rule: z.array(permissionRuleLayerSchema).optional(),
});

/**
 * How a typed answer reaches the pod (docs/output.md): `tool` (a `final_answer` tool whose input
 * schema is the output schema), `native` (the provider's structured output, sent on every request),
 * `auto` (native where the provider supports it, else tool).
 */
export const OUTPUT_STRATEGIES = ["tool", "native", "auto"] as const;

/**
 * `[output] schema`: a path to a JSON Schema file (relative to this file's directory) or the
 * schema itself as an inline table. The file is read and the schema checked after the cascade.
 */
const outputSchemaSourceSchema = z.custom<string | Record<string, unknown>>(
  (v) => (typeof v === "string" && v.trim() !== "") || isTomlTable(v),
  { error: 'expected a path to a JSON Schema file ("schemas/verdict.json") or an inline table' },
);

/** `[output]`: the pod's final answer is checked against a schema and repaired when it is not. */
export const outputLayerSchema = z.strictObject({
  schema: outputSchemaSourceSchema.optional(),
  strategy: z.enum(OUTPUT_STRATEGIES).optional(),
  /** How many times the model is told what is wrong before the run fails. */
  max_repairs: size.optional(),
});

function isTomlTable(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype; // smol-toml builds tables with a null prototype
}

/** A skill's name (its SKILL.md `name`, and its directory's): lowercase letters and digits in hyphen-separated words. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** What `[skills] on_over_budget` may say (docs/skills.md). */
export const SKILL_OVER_BUDGET_ACTIONS = ["error", "search"] as const;

const skillNames = (value: unknown): value is string[] =>
  Array.isArray(value) &&
  value.every((name) => typeof name === "string" && name.length <= 64 && SKILL_NAME_PATTERN.test(name));

/**
 * `[skills]` (docs/skills.md): where SKILL.md directories are found, which of them the pod may use,
 * the token budget of their listing in the system prompt, what happens above it, how much of the
 * active skills a compaction re-injects, and whether a skill's `allowed-tools` pre-approve tools.
 */
export const skillsLayerSchema = z.strictObject({
  /** `false` turns skills off; a list of names turns on only those skills. */
  enabled: z
    .custom<boolean | string[]>((v) => typeof v === "boolean" || skillNames(v), {
      error: 'expected true, false or a list of skill names (["pdf", "code-review"])',
    })
    .optional(),
  /** Directories of skills, relative to the workspace, each inside it. */
  dirs: z.array(nonEmpty).optional(),
  /** Also read `.claude/skills` (Claude Code's skill directory). */
  claude: z.boolean().optional(),
  listing_budget_tokens: count.optional(),
  on_over_budget: z.enum(SKILL_OVER_BUDGET_ACTIONS).optional(),
  reinject_budget_tokens: size.optional(),
  /** A loaded skill's `allowed-tools` spare those tools the approval gate (off by default). */
  allow_tools: z.boolean().optional(),
});

/** Caps a role gets when it sets none (docs/subpods.md). */
export const SUBPOD_DEFAULTS = { max_depth: 2, max_concurrent: 4 } as const;

/**
 * One `[subpods.<role>]`: a child pod the parent's model may spawn. The child is the role's
 * `manifest` (a path, resolved like a `tools.packages` path from this file's directory) or, without
 * one, the parent's own manifest; either way with the overrides below. `scope` is what the role
 * asks for: it is checked against the parent's scope when the parent is built (a loan, never more).
 */
export const subpodRoleLayerSchema = z.strictObject({
  description: nonEmpty.optional(),
  manifest: nonEmpty.optional(),
  prompt_pack: nonEmpty.optional(),
  model: z.strictObject({ ref: modelLayerSchema.shape.ref }).optional(),
  worker: z.strictObject({ system_prompt: z.string().optional() }).optional(),
  tools: z
    .strictObject({ builtin: z.array(z.enum(BUILTIN_TOOL_NAMES)).optional(), bash: z.boolean().optional() })
    .optional(),
  scope: scopeLayerSchema.optional(),
  permissions: z.strictObject({ mode: z.enum(PERMISSION_MODES).optional() }).optional(),
  /** The schema the child's answer is checked against and reaches the parent as (docs/output.md). */
  output: outputLayerSchema.optional(),
  max_depth: count.optional(),
  max_concurrent: count.optional(),
});

/** A role name: what the model passes to `spawn_pod`. */
export const subpodRoleNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, { error: "expected a role name of letters, digits, _ and -" });

/** One layer of the manifest: the whole document with every field optional. */
export const manifestLayerSchema = z.strictObject({
  pod: podLayerSchema.optional(),
  model: modelLayerSchema.optional(),
  worker: workerLayerSchema.optional(),
  scope: scopeLayerSchema.optional(),
  compaction: compactionLayerSchema.optional(),
  memory: memoryLayerSchema.optional(),
  media: mediaLayerSchema.optional(),
  mcp: mcpLayerSchema.optional(),
  tools: toolsLayerSchema.optional(),
  sandbox: sandboxLayerSchema.optional(),
  session: sessionLayerSchema.optional(),
  schedule: z.array(scheduleLayerSchema).optional(),
  subpods: z.record(subpodRoleNameSchema, subpodRoleLayerSchema).optional(),
  budget: budgetLayerSchema.optional(),
  permissions: permissionsLayerSchema.optional(),
  output: outputLayerSchema.optional(),
  skills: skillsLayerSchema.optional(),
});

/** A validated layer. */
export type ManifestLayerData = z.infer<typeof manifestLayerSchema>;
export type ScopeRuleLayer = z.infer<typeof scopeRuleLayerSchema>;
export type SubpodRoleLayer = z.infer<typeof subpodRoleLayerSchema>;
export type OutputLayer = z.infer<typeof outputLayerSchema>;
