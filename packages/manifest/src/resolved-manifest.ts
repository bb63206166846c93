import type { z } from "zod";
import type {
  compactionLayerSchema,
  mcpServerLayerSchema,
  memoryLayerSchema,
  modelLayerSchema,
  podLayerSchema,
  toolOutputLayerSchema,
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

/** `[compaction]` with every §4.5 knob filled; present only when compaction is on. */
export type CompactionConfig = Required<Omit<Layer<typeof compactionLayerSchema>, "enabled">>;

/** `[memory]` with every §5 knob filled; present only when memory is on. */
export type MemoryConfig = Required<Omit<Layer<typeof memoryLayerSchema>, "enabled">>;

/** One `[[mcp.server]]`; `cwd` and a relative `command` path are absolute after the cascade. */
export type McpServerConfig = Omit<Layer<typeof mcpServerLayerSchema>, "args" | "env"> & {
  args: string[];
  env: Record<string, string>;
};

/** The manifest after the whole cascade: defaults filled, paths absolute, scope canonical. */
export interface ResolvedManifest {
  pod: PodConfig;
  model: ModelConfig;
  worker: WorkerConfig;
  scope: { allow: ScopeRule[]; deny: ScopeRule[] };
  compaction?: CompactionConfig;
  memory?: MemoryConfig;
  mcp: { server: McpServerConfig[] };
}
