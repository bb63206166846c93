import type { ModelAdapter, RequestConfig, Tool } from "@podkit/llm-worker";
import type { LoadedManifest, MemoryConfig } from "@podkit/manifest";
import { MemoryUsageError } from "../errors.js";
import { cachedInvocableKnowledge } from "../store/knowledge-index.js";
import { cachedMemoryStore } from "../store/store-cache.js";
import { knowledgeReadTool } from "../tools/knowledge-read-tool.js";
import { mainWorkerMemoryTools } from "../tools/memory-tools.js";
import type { MemoryPrompts } from "../worker/memory-model.js";
import { type AfterTurnJobContext, createMemoryJob, type MemoryJobEvent } from "./memory-job.js";
import { type ContextSectionLike, type MemorySectionData, memoryContextSection } from "./memory-section.js";

/**
 * A job a pod runs in the background after a finished turn (`pod.addAfterTurnJob`). `runOnClose`
 * is its final pass when the pod closes (memory: the session's tail, whatever its size).
 */
export interface AfterTurnJobLike {
  readonly name: string;
  /** `pod.close()` runs the job once more, bounded (to take in the session's last turns). */
  readonly runOnClose?: boolean;
  run(context: AfterTurnJobContext): Promise<void>;
}

/**
 * What memory needs of a pod: its manifest, catalog and model, and three generic extension
 * points — context sections, after-turn jobs and tools — all registered before the first run.
 * `Pod` of `@podkit/pod` is one; nothing in the pod knows about memory.
 */
export interface MemoryHost {
  readonly manifest: LoadedManifest;
  readonly catalog: MemoryPrompts;
  readonly modelAdapter: ModelAdapter;
  addContextSection(section: ContextSectionLike<MemorySectionData>): void;
  addAfterTurnJob(job: AfterTurnJobLike): void;
  registerTool(tool: Tool): void;
}

export interface AttachMemoryOptions {
  /** The model of the extract and consolidation workers (default: the pod's). */
  readonly model?: ModelAdapter;
  /** Request settings of those workers (default `{ max_tokens: 8192 }`). */
  readonly config?: RequestConfig;
  readonly clock?: () => Date;
  /** Observes each job's outcome (the pod also reports it as `job_progress` events). */
  readonly onJob?: (event: MemoryJobEvent) => void;
}

/** What `attachMemory` registered. */
export interface MemoryAttachment {
  readonly config: MemoryConfig;
  readonly workspace: string;
  /** The tool names given to the main worker: `knowledge_read`, and `memory_query` and `memory_read` with `[memory] tools = true`. */
  readonly tools: readonly string[];
}

/** Pods memory is attached to: a second call for the same pod returns the first attachment. */
const attached = new WeakMap<object, MemoryAttachment>();

/**
 * Turns on memory for a pod whose manifest has `[memory]`: the `memory`
 * context section (the resident summary), the after-turn job (extract past `extract_threshold`,
 * then consolidation past its thresholds; one at a time, errors become warnings and events), and
 * with `tools = true` the read-only `memory_query` and `memory_read` for the main worker. The
 * scope deny rules on the memory trees come from the manifest cascade itself. Knowledge with
 * `model_invocation: true` is listed in the section and read with `knowledge_read`. Call it
 * right after `Pod.fromManifest` / `Pod.restore`, before the first run; this is the one function
 * a pod calls to give a `[memory]` manifest its memory, and calling it again for the same pod
 * changes nothing.
 */
export function attachMemory(pod: MemoryHost, options: AttachMemoryOptions = {}): MemoryAttachment {
  const done = attached.get(pod);
  if (done !== undefined) return done;
  const config = pod.manifest.manifest.memory;
  if (config === undefined) {
    throw new MemoryUsageError(
      `memory is not on for ${pod.manifest.manifest.pod.name}: add a [memory] table to the manifest (or check manifest.memory before calling attachMemory)`,
    );
  }
  const workspace = pod.manifest.workspace;
  const knowledge = cachedInvocableKnowledge(workspace);
  pod.addContextSection(
    memoryContextSection(workspace, pod.catalog, {
      knowledge,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    }),
  );
  pod.addAfterTurnJob(
    createMemoryJob({
      workspace,
      model: options.model ?? pod.modelAdapter,
      prompts: pod.catalog,
      language: pod.manifest.manifest.worker.language,
      memory: config,
      ...(options.config === undefined ? {} : { config: options.config }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.onJob === undefined ? {} : { onJob: options.onJob }),
    }),
  );
  const tools = [knowledgeReadTool(workspace, knowledge, options.clock)];
  if (config.tools) tools.push(...mainWorkerMemoryTools(cachedMemoryStore(workspace, { by: "pod" })));
  for (const tool of tools) pod.registerTool(tool);
  const attachment = { config, workspace, tools: tools.map((t) => t.name) };
  attached.set(pod, attachment);
  return attachment;
}
