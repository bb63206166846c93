import { pathToFileURL } from "node:url";
import type { Tool, ToolFactory, ToolServer } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { BUILTIN_PACKAGE_NAME, builtinToolPackage } from "../builtin/builtin-package.js";
import { PodkitFiles, podkitPaths } from "../containment/podkit-files.js";
import type { DeferredPairDescriptions } from "../deferred/deferred-pair.js";
import { type DeferralDecision, ToolDeferral } from "../deferred/tool-deferral.js";
import type { McpToolsChanged } from "../deferred/tools-changed.js";
import { ToolPackageExportError, type ToolPackageLocation } from "../errors.js";
import { type McpToolsChange, mcpToolPackage } from "../mcp/mcp-tool-package.js";
import { type Guardrail, isGuardrail, type PackageGuardrail } from "../package/guardrail.js";
import {
  type BlobWriter,
  type DefinedToolPackage,
  isPodkitToolPackage,
  type PodkitToolPackage,
  type ToolPackageContext,
  type ToolWarningSink,
} from "../package/tool-package.js";
import type { SandboxBackend } from "../sandbox/backend.js";
import { createSandbox } from "../sandbox/pod-sandbox.js";
import type { SandboxProbe } from "../sandbox/sandbox.js";
import { stdioToolTracking, trackStdioServers } from "../tracking/tracked-mcp.js";
import { TrackedTree } from "../tracking/tracked-tree.js";
import type { TrackingLimits } from "../tracking/tree-scan.js";
import { WorkspaceTracker } from "../tracking/workspace-tracker.js";
import { resolveToolPackage } from "./resolve-package.js";

/** Inputs of `loadToolPackages` besides the manifest. */
export interface LoadToolPackagesOptions {
  /**
   * Packages given in code, loaded after the manifest's, with `{}` options unless
   * `extraOptions` has some. (The manifest's `[[mcp.server]]` entries are loaded without this:
   * they come in as the `mcp` package after `[tools] packages`.)
   */
  extraPackages?: readonly PodkitToolPackage[];
  extraOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Where packages report problems they work around. */
  warn: ToolWarningSink;
  /** The environment every package's `ctx.env` is (the pod's); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Abandons loading; also fires every package's `ctx.signal`. */
  signal?: AbortSignal;
  /**
   * Another sandbox backend in place of the OS one (a container, a remote runner): the seam
   * `[sandbox] backend` values beyond `os` and `none` plug into. Default: by the manifest.
   */
  sandboxBackend?: SandboxBackend;
  /**
   * The pod is a sub-pod, whose scope and `[sandbox]` are lent by its parent: its sandbox refuses
   * every escalation, even one `approveEscalation` was called for (authority only narrows).
   */
  loaned?: boolean;
  /**
   * The session store's blobs: every package's `ctx.blobs`, and what file tracking stores file
   * contents in (`[tools] track_files`, docs/rewind.md). Without them nothing is tracked.
   */
  blobs?: BlobWriter;
  /** File tracking's bounds on a full scan; default 20,000 files and 256 MiB. */
  trackingLimits?: TrackingLimits;
}

/** The tools of a pod: factories for its tool server, and the clean-up its packages registered. */
export interface ToolSet {
  /**
   * Lazy factories: builtin first, then `[tools] packages` in order, then one per
   * `[[mcp.server]]`, then `extraPackages`.
   */
  readonly factories: readonly ToolFactory[];
  /** The names of the packages loaded, in the same order. */
  readonly packages: readonly string[];
  /** The packages' guardrails, in the order the packages loaded. */
  readonly guardrails: readonly PackageGuardrail[];
  /**
   * What the sandbox probe found (the payload of the pod's `sandbox.probe` log entry): set once it
   * ran — at load when the pod can start processes (bash, a stdio MCP server), else when a
   * package first starts one; undefined before.
   */
  sandboxProbe(): SandboxProbe | undefined;
  /**
   * Lets the call `callId` run outside the sandbox, once: for the pod to call after a person
   * allowed a `bash` call's `escalate` (`escalationReason` reads it from the call). Without it,
   * and always in a sub-pod (`loaned`), such a call is refused and its output says so in `denied`.
   */
  approveEscalation(callId: string): void;
  /**
   * The pod's first run begins: file tracking takes its first scan now, in the background while
   * the model answers (never at load: materializing the tools for \`podkit prompt render\` writes
   * nothing). Idempotent; a no-op without tracking.
   */
  startTracking(): void;
  /** Queues every factory on `server` (materialized by its `flushPending()`). */
  register(server: ToolServer): void;
  /**
   * The `find_tools`/`call_tool` pair over `server`'s deferred tools (docs/tools-deferred.md), for a
   * pod whose provider has no native tool search: queue it on `server` after `register`. It
   * materializes to no tool when nothing was deferred, and lets a deferred MCP server's changed
   * tools reach `find_tools` and `call_tool`.
   */
  deferredPair(server: ToolServer, descriptions: DeferredPairDescriptions): ToolFactory;
  /** What was deferred, per source (`[tools.defer]`, `[[mcp.server]] defer`), once the flush ran. */
  deferrals(): readonly DeferralDecision[];
  /**
   * Calls `listener` when an MCP server's tool list changed after the flush, with what changed and
   * whether the change reached the model's tools. Returns the unsubscribe.
   */
  onToolsChanged(listener: (change: McpToolsChanged) => void): () => void;
  /**
   * Fires the packages' `ctx.signal` and runs their `onClose` callbacks in reverse order of
   * registration; a failing callback is reported through `warn` and does not skip the others.
   * Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Loads a pod's tools: the builtin package configured from `[tools]`, every
 * `[tools] packages` entry (resolved as Node would from the directory of the manifest that
 * listed it, imported, and checked to export a `definePodkitToolPackage` value as its default
 * export or as `podkitToolPackage`), then `extraPackages`. Each package's `tools(ctx)` gets the
 * scope, the workspace, the environment, its `[tools.options."<entry>"]` table, the warning sink
 * and a signal.
 * Throws `ToolPackageNotFoundError` or `ToolPackageExportError` naming the package, where it
 * was looked for and what was wrong; packages loaded before the failure are closed first.
 */
export async function loadToolPackages(
  loaded: LoadedManifest,
  options: LoadToolPackagesOptions,
): Promise<ToolSet> {
  const { manifest } = loaded;
  const env = options.env ?? process.env;
  const controller = new AbortController();
  const forwardAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  const ownPaths = podkitPaths(loaded);
  const sandbox = createSandbox({
    config: manifest.sandbox,
    scope: loaded.scope,
    workspace: loaded.workspace,
    protectedPaths: ownPaths,
    env,
    warn: options.warn,
    ...configuredIn(loaded),
    ...(options.sandboxBackend === undefined ? {} : { backend: options.sandboxBackend }),
    ...(options.loaned === true ? { loaned: true } : {}),
  });
  // The first callback registered runs last: MCP servers and packages stop before the proxy does.
  const closers: (() => void | Promise<void>)[] = [() => sandbox.close()];
  const files =
    options.blobs === undefined || !manifest.tools.track_files
      ? undefined
      : new WorkspaceTracker({
          tree: await TrackedTree.of(loaded.scope, loaded.workspace, await PodkitFiles.of(ownPaths)),
          blobs: options.blobs,
          warn: options.warn,
          sandbox,
          env,
          signal: controller.signal,
          ...(options.trackingLimits === undefined ? {} : { limits: options.trackingLimits }),
        });
  // Runs after the packages' own clean-up, once the signal has stopped any scan in progress.
  if (files !== undefined) closers.push(() => files.settled());
  const factories: ToolFactory[] = [];
  const names: string[] = [];
  const guardrails: PackageGuardrail[] = [];
  // `"auto"` defers a source whose definitions pass this many tokens (docs/tools-deferred.md).
  const deferral = new ToolDeferral(manifest.tools.defer_auto_share * manifest.model.context_window);
  const changeListeners = new Set<(change: McpToolsChanged) => void>();
  let pairServer: ToolServer | undefined;
  let trackChanged: ((tool: Tool) => Tool) | undefined;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      options.signal?.removeEventListener("abort", forwardAbort);
      controller.abort(new Error("the tools were closed"));
      for (const callback of closers.splice(0).reverse()) {
        try {
          await callback();
        } catch (error) {
          options.warn({
            code: "tools.close_failed",
            message: `a clean-up callback failed: ${error instanceof Error ? error.message : String(error)}`,
            source: "@podkit/tools",
          });
        }
      }
    })();
    return closed;
  };

  const use = async (
    pkg: PodkitToolPackage,
    packageOptions: Readonly<Record<string, unknown>>,
    location?: ToolPackageLocation,
    file?: string,
    track?: (produced: readonly ToolFactory[]) => readonly ToolFactory[],
  ) => {
    options.signal?.throwIfAborted();
    const ctx: ToolPackageContext = {
      scope: loaded.scope,
      workspace: loaded.workspace,
      env,
      options: Object.freeze(structuredClone(packageOptions)),
      warn: options.warn,
      sandbox,
      ...(options.blobs === undefined ? {} : { blobs: options.blobs }),
      ...(files === undefined ? {} : { files }),
      signal: controller.signal,
      onClose: (callback) => {
        closers.push(callback);
      },
    };
    let produced: readonly ToolFactory[];
    try {
      produced = await pkg.tools(ctx);
    } catch (error) {
      const problem = `its tools(ctx) failed: ${error instanceof Error ? error.message : String(error)}`;
      throw new ToolPackageExportError(
        location ?? { specifier: pkg.name, declaredIn: "", resolveFrom: "" },
        file ?? pkg.name,
        problem,
        error,
      );
    }
    if (!Array.isArray(produced) || produced.some((f) => typeof f !== "function")) {
      const problem = "its tools(ctx) must return an array of tool factories (functions returning tools)";
      throw new ToolPackageExportError(
        location ?? { specifier: pkg.name, declaredIn: "", resolveFrom: "" },
        file ?? pkg.name,
        problem,
      );
    }
    factories.push(...(track === undefined ? produced : track(produced)));
    names.push(pkg.name);
    if (pkg.guardrails === undefined) return;
    let guards: readonly Guardrail[];
    try {
      guards = await pkg.guardrails(ctx);
    } catch (error) {
      const problem = `its guardrails(ctx) failed: ${error instanceof Error ? error.message : String(error)}`;
      throw new ToolPackageExportError(
        location ?? { specifier: pkg.name, declaredIn: "", resolveFrom: "" },
        file ?? pkg.name,
        problem,
        error,
      );
    }
    if (!Array.isArray(guards) || !guards.every(isGuardrail)) {
      const problem =
        "its guardrails(ctx) must return an array of guardrails (a non-empty `name` and at least one of input, beforeTool, afterTool, finalAnswer as functions)";
      throw new ToolPackageExportError(
        location ?? { specifier: pkg.name, declaredIn: "", resolveFrom: "" },
        file ?? pkg.name,
        problem,
      );
    }
    for (const guardrail of guards) guardrails.push({ package: pkg.name, guardrail });
  };

  try {
    // A pod that can start processes probes its sandbox now: one that cannot run with
    // fail_if_unavailable stops the pod here, before any package or server starts.
    if (startsProcesses(manifest)) await sandbox.ensureAvailable(options.signal);
    await use(builtinToolPackage, {
      builtin: manifest.tools.builtin,
      bash: manifest.tools.bash,
      bash_env: manifest.tools.bash_env,
      bash_timeout_ms: manifest.tools.bash_timeout_ms,
      bash_max_timeout_ms: manifest.tools.bash_max_timeout_ms,
      remove_env: manifest.model.api_key_env ? [manifest.model.api_key_env] : [],
      podkit_paths: ownPaths,
      tool_output: manifest.worker.tool_output,
      ...options.extraOptions?.[BUILTIN_PACKAGE_NAME],
    });
    for (const ref of loaded.toolPackages) {
      const location: ToolPackageLocation = {
        specifier: ref.specifier,
        declaredIn: ref.declaredIn,
        resolveFrom: ref.resolveFrom,
      };
      const file = await resolveToolPackage(location);
      const pkg = await importToolPackage(location, file);
      const defer = manifest.tools.defer[ref.specifier] ?? false;
      await use(pkg, manifest.tools.options[ref.specifier] ?? {}, location, file, (produced) =>
        deferral.wrap(pkg.name, defer, produced),
      );
    }
    if (manifest.mcp.server.length > 0) {
      const servers = manifest.mcp.server;
      // A stdio server writes where its sandbox lets it: its calls are tracked like bash's.
      trackChanged = files === undefined ? undefined : stdioToolTracking(servers, files);
      // The package makes one factory per server, in order: each server is a source of its own.
      const track = (produced: readonly ToolFactory[]) =>
        (files === undefined ? produced : trackStdioServers(produced, servers, files)).flatMap((factory, i) =>
          deferral.wrap(`mcp:${servers[i]?.name}`, servers[i]?.defer ?? false, [factory]),
        );
      const onToolsChanged = (change: McpToolsChange) => {
        const source = `mcp:${change.server}`;
        let applied = false;
        // Only the pair keeps deferred tools off the request, so only then may they change.
        if (pairServer !== undefined && deferral.isDeferredSource(source)) {
          try {
            deferral.replace(source, pairServer, change.tools.map(trackChanged ?? ((tool) => tool)));
            applied = true;
          } catch (error) {
            options.warn({
              code: "mcp.tools_changed",
              source,
              message: `MCP server "${change.server}"'s changed tools cannot be offered: ${error instanceof Error ? error.message : String(error)}`,
            });
          }
        }
        const { server, added, removed, changed } = change;
        for (const listener of changeListeners)
          listener({ server, added: [...added], removed: [...removed], changed: [...changed], applied });
      };
      await use(mcpToolPackage(servers, { onToolsChanged }), {}, undefined, undefined, track);
    }
    for (const pkg of options.extraPackages ?? []) {
      if (!isPodkitToolPackage(pkg)) {
        throw new ToolPackageExportError(
          { specifier: String((pkg as { name?: unknown }).name), declaredIn: "", resolveFrom: "" },
          "(given in code)",
          "not made by definePodkitToolPackage",
        );
      }
      await use(pkg, options.extraOptions?.[pkg.name] ?? {});
    }
  } catch (error) {
    await close();
    throw error;
  }

  return {
    factories,
    packages: names,
    guardrails,
    sandboxProbe: () => sandbox.probed,
    approveEscalation: (callId) => sandbox.approveEscalation(callId),
    startTracking: () => files?.prepare(),
    register(server) {
      for (const factory of factories) server.registerTool(factory);
    },
    deferredPair(server, descriptions) {
      pairServer = server;
      return deferral.pair(server, descriptions);
    },
    deferrals: () => deferral.decisions,
    onToolsChanged(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    close,
  };
}

/** True when the pod can start processes from its manifest alone: bash, or a stdio MCP server. */
function startsProcesses(manifest: LoadedManifest["manifest"]): boolean {
  return manifest.tools.bash || manifest.mcp.server.some((server) => server.command !== undefined);
}

/** The manifest file that set `[sandbox] fail_if_unavailable`, when a file did. */
function configuredIn(loaded: LoadedManifest): { configuredIn?: string } {
  const file = loaded.provenance.get("sandbox.fail_if_unavailable")?.layer.file;
  return file === undefined ? {} : { configuredIn: file };
}

async function importToolPackage(location: ToolPackageLocation, file: string): Promise<DefinedToolPackage> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const problem = `importing it failed: ${error instanceof Error ? error.message : String(error)}`;
    throw new ToolPackageExportError(location, file, problem, error);
  }
  for (const candidate of [module.default, module.podkitToolPackage]) {
    if (isPodkitToolPackage(candidate)) return candidate;
  }
  const found = Object.keys(module).filter((key) => key !== "__esModule");
  const problem =
    found.length === 0
      ? "it exports nothing"
      : `neither its default export nor \`podkitToolPackage\` was made by definePodkitToolPackage (it exports ${found.map((k) => `\`${k}\`: ${kindOfExport(module[k])}`).join(", ")})`;
  throw new ToolPackageExportError(location, file, problem);
}

/** What an export that is not a tool package is, for the error message ("an array", "a function"…). */
function kindOfExport(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object without the podkit package marker";
  return typeof value === "function" ? "a function" : `a ${typeof value}`;
}
