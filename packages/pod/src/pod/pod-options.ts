import type { ToolCallItem } from "@podkit/llm-worker";
import type { PermissionMode } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import type { PodkitToolPackage } from "@podkit/tools";
import type { ContextSection } from "../context/context-section.js";
import type { OutputSchemaInput } from "../output/output-schema.js";
import type { SubpodPlacement } from "../subpods/placement.js";
import type { PodTelemetryOptions } from "../telemetry/pod-telemetry.js";
import type { RenderLimits } from "../template/budget.js";
import type { WarningSink } from "../warnings.js";
import type { Approver } from "./approvals.js";
import type { HookPod, PodHooks } from "./hooks.js";
import type { ModelOverride } from "./model.js";

export interface PodOptions {
  /**
   * Where the session is written; default: the store `[session]` selects (`openSessionStore`),
   * which the pod closes with itself. A store given here is the caller's to close.
   */
  readonly store?: Store;
  /** The one clock of the system prompt's `date`/`time`/`datetime`; default `() => new Date()`. */
  readonly clock?: () => Date;
  /** Tool packages given in code, loaded after the manifest's. */
  readonly toolPackages?: readonly PodkitToolPackage[];
  /** A LanguageModelV3 instance, or a base URL for the manifest's model (the provider double). */
  readonly model?: ModelOverride;
  /**
   * Where API keys are read (at the first request) and the `[session] url_env` variable (when the
   * pod opens its store), and the environment tool packages get (`ctx.env`: bash's child
   * environment, MCP `headers_env` and stdio servers); default `process.env`.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Aborts loading, and every run of the pod. */
  readonly signal?: AbortSignal;
  /**
   * Receives every warning the pod reports, from construction to `close()` (catalog, AGENTS.md,
   * tool packages, the worker, dropped notifications, drift forks, failed background work, a
   * listener that threw): their one channel, the event stream carries none.
   */
  readonly onWarning?: WarningSink;
  /** An idle pod starts a turn for a notification (trigger `notify`). */
  readonly autoRun?: boolean;
  /**
   * Context sections after the builtin `notes`, in this order; more with
   * `pod.addContextSection` before the first run.
   */
  // biome-ignore lint/suspicious/noExplicitAny: a list of sections of different data types (each is checked where it is defined).
  readonly contextSections?: readonly ContextSection<any>[];
  /** Render limits of the system prompt and catalog templates. */
  readonly renderLimits?: Partial<RenderLimits>;
  /** OpenTelemetry providers and the contents opt-in; default the global providers, no contents. */
  readonly telemetry?: PodTelemetryOptions;
  /**
   * Optional packages the application ships, by name, used instead of resolving them where the
   * manifest is: `@podkit/store-postgres` (`[session] store = "postgres"`) and `@podkit/memory`
   * (`[memory]`). A globally installed CLI passes its own copies this way.
   */
  readonly packages?: Readonly<Record<string, () => Promise<unknown>>>;
  /**
   * With `[memory]` in the manifest the pod attaches memory itself (`attachManifestMemory`);
   * `false` leaves it to the caller, who calls `attachMemory(pod, options)` with its own options.
   */
  readonly attachMemory?: boolean;
  /**
   * Who answers an approval request now (the interactive CLI). Without one, or when it answers
   * undefined, the call stays pending in the log and the run ends `awaiting_approval`.
   */
  readonly approver?: Approver;
  /**
   * Turns the builtin approval policy off (`bash`, and with `[tools] confirm_writes` the write
   * tools, run without asking: the CLI's `--yes`). Hooks that ask still ask.
   */
  readonly autoApprove?: boolean;
  /**
   * The permission mode (docs/permissions.md): `read_only`, `default`, `accept_edits` or `bypass`.
   * For a root pod it replaces the manifest's `[permissions] mode` (the CLI's `--mode`); a child
   * gets its parent's and runs in the tighter of that and its role's.
   */
  readonly mode?: PermissionMode;
  /**
   * The pod's typed answer (docs/output.md): a zod schema or a JSON Schema (an object at the root).
   * Takes the place of the manifest's `[output] schema`; a run then ends with `result.output`
   * checked against it. Part of the cached request prefix: one per pod, from the first request.
   */
  readonly output?: OutputSchemaInput;
  /**
   * Hooks for this pod's children, at any depth (docs/subpods.md): called once for each child pod
   * as it is built or restored, with its identity; what it returns is registered on that child.
   * A child never gets this pod's own hooks — only what this function gives it, on purpose.
   */
  readonly childHooks?: (pod: HookPod) => PodHooks | undefined;
  /**
   * Called synchronously right before each tool call starts, in this pod and its children at any
   * depth (after hooks and approvals decided, nothing awaited in between); throwing stops the call
   * before its tool runs, and the turn fails with that error. `@podkit/dispatch` checks its lease
   * fence here, so a worker that lost its run starts no tool.
   */
  readonly toolStartCheck?: (call: Readonly<ToolCallItem>) => void;
  /** Where a child pod sits in its tree (set by its parent's `spawn_pod`; docs/subpods.md). */
  readonly subpod?: SubpodPlacement;
}

/** Capacity of the notification queue; the oldest is dropped beyond it. */
export const NOTIFICATION_CAPACITY = 128;
