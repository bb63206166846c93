import type { ModelAdapter, RequestConfig, RetryPolicy, WorkerEvent } from "@podkit/llm-worker";

/** One staged item as the consolidation input shows it: its id, kind, topic and own fields. */
export interface StagedItemView {
  readonly id: string;
  readonly kind: string;
  readonly topic: string;
  readonly [field: string]: string | boolean;
}

/** The records of one kind in the consolidation input: in full, or listed by slug and first line. */
export interface RecordsView {
  readonly full: readonly { readonly slug: string; readonly text: string }[];
  readonly listed: readonly { readonly slug: string; readonly first_line: string }[];
}

/** What the catalog's `memory_consolidation_input` is rendered with. */
export interface ConsolidationInputContext {
  readonly staging: readonly {
    readonly id: string;
    readonly session_id: string;
    readonly created_at: string;
    readonly items: readonly StagedItemView[];
  }[];
  /** The summary record's text, "" when there is none. */
  readonly summary: string;
  readonly decisions: RecordsView;
  readonly requests: RecordsView;
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
    readonly items: readonly StagedItemView[];
  }[];
}

/** Knowledge offered to a pod by name (`model_invocation: true`), for the memory context section. */
export interface InvocableKnowledgeView {
  readonly slug: string;
  readonly description: string;
}

/**
 * The prompts memory renders, by catalog key. A pod's `PromptCatalog` is one (so the layered
 * catalog — user, workspace and pack overrides — applies to memory workers too).
 */
export interface MemoryPrompts {
  render(
    key: "memory_extract_system" | "memory_consolidation_system",
    context: { readonly language: string },
  ): string;
  render(key: "memory_consolidation_input", context: ConsolidationInputContext): string;
  render(key: "memory_consolidation_tidy", context: { readonly protection_threshold: number }): string;
  render(key: "resident_memory_section", context: { readonly summary: string }): string;
  render(
    key: "memory_knowledge_section",
    context: { readonly knowledge: readonly InvocableKnowledgeView[] },
  ): string;
}

/** What every memory job needs: where memory lives, the model, the prompts, the language. */
export interface MemoryJobOptions {
  /** The workspace whose `.podkit/memory` and `.podkit/knowledge` are used. */
  readonly workspace: string;
  /** The model the disposable workers call (a pod gives its own, `pod.modelAdapter`). */
  readonly model: ModelAdapter;
  readonly prompts: MemoryPrompts;
  /** `[worker].language`: the language records are written in. */
  readonly language: string;
  /** Request settings of the disposable workers (default `{ max_tokens: 8192 }`). */
  readonly config?: RequestConfig;
  readonly retry?: Partial<RetryPolicy>;
  readonly signal?: AbortSignal;
  /** Clock of timestamps (records, staging, audit); default `() => new Date()`. */
  readonly clock?: () => Date;
  /** Receives the disposable worker's events (a pod turns its requests into `chat` spans). */
  readonly onWorkerEvent?: (event: WorkerEvent) => void;
}

export const DEFAULT_MEMORY_WORKER_CONFIG: RequestConfig = { max_tokens: 8192 };
