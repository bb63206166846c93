// Declarations the TypeScript fragments of the docs take for granted, by name. A fence marked
// `<!-- docs-test: context loaded, signal -->` is type-checked with these sections in front of it
// (scripts/docs-snippets.test.mjs). Each names a thing the page's prose introduces ("the loaded
// manifest", "your abort signal"); types are written as `import("…")` so that a section never
// clashes with an import of the fence itself. Never type-checked as a whole file.
// biome-ignore-all lint/suspicious/noRedeclare: each section stands alone; a fence gets the ones it names
// biome-ignore-all lint/correctness/noUnusedImports: sections are text for the docs test, not a module

// @context loaded
/** A manifest after the cascade: `await loadManifest({ file: "pod.toml" })`. */
declare const loaded: import("@podkit/manifest").LoadedManifest;

// @context pod
/** A pod: `await Pod.fromManifest(loaded)`. */
declare const pod: import("@podkit/pod").Pod;

// @context store
/** The session store the manifest selects: `await openSessionStore(loaded)`. */
declare const store: Awaited<ReturnType<typeof import("@podkit/pod").openSessionStore>>;

// @context session-id
declare const sessionId: string;

// @context signal
/** The caller's abort signal. */
declare const signal: AbortSignal;

// @context worker-loop
/** The application's tools, its persistence of history and usage, and the rendered system prompt. */
declare const myTools: import("@podkit/llm-worker").Tool[];
declare const log: {
  append(item: import("@podkit/llm-worker").Item): Promise<void>;
  appendUsage(usage: import("@podkit/llm-worker").UsageRecord): Promise<void>;
};
declare const rendered: string;

// @context otel-providers
/** An OpenTelemetry SDK's providers (`@opentelemetry/sdk-trace`, `@opentelemetry/sdk-metrics`). */
declare const tracerProvider: import("@opentelemetry/api").TracerProvider;
declare const meterProvider: import("@opentelemetry/api").MeterProvider;

// @context task-state
/** The application's own reader of the task it tracks, null when there is none. */
declare function readTaskState(workspace: string): Promise<{ step: number; of: number } | null>;

// @context prompt-inputs
/** What a pod knows at construction (`LoadedManifest` and the tool server give these). */
declare const userConfigDir: string;
declare const workspace: string;
declare const promptPack: string;
declare const manifestDir: string;
declare const manifest: import("@podkit/manifest").ResolvedManifest;
declare const clock: () => Date;
declare const cwd: string;
declare const scope: import("@podkit/manifest").Scope;
declare const toolNames: string[];
declare const message: string;

// @context session-log
/** The workspace, the rendered system prompt, an item from the worker, the entries read so far. */
declare const workspace: string;
declare const rendered: string;
declare const item: import("@podkit/llm-worker").Item;
declare const seen: number;

// @context log-init
/** The rendered system prompt and the request config a session starts with. */
declare const systemPrompt: string;
declare const config: Record<string, unknown>;

// @context my-store
/** A third-party store and the scratch data it runs on. */
interface ScratchDatabase {
  writeSegment(ref: import("@podkit/session-store").SegmentRef, texts: readonly string[]): Promise<void>;
  drop(): Promise<void>;
}
declare function createScratchDatabase(): Promise<ScratchDatabase>;
declare const MyStore: new (database: ScratchDatabase) => import("@podkit/session-store").Store;

// @context system-prompt-under-test
declare const MY_SYSTEM_PROMPT: string;

// @context tool-loading
/** The pod's environment and a tool package given in code. */
declare const env: Record<string, string | undefined>;
declare const myPackage: import("@podkit/tools").PodkitToolPackage;

// @context error-scheme
/** Inside `@podkit/pod`: its base class and the package's marker test. */
import { PromptRefError } from "@podkit/pod";

declare function hasMarker(error: unknown, marker: symbol): boolean;
