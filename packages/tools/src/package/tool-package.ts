import type { ToolFactory } from "@podkit/llm-worker";
import type { Scope } from "@podkit/manifest";
import { hasMarker } from "../errors.js";
import type { ToolSandbox } from "../sandbox/sandbox.js";
import type { FileTracking } from "../tracking/file-tracking.js";
import type { Guardrail } from "./guardrail.js";

/** Something a tool package reports and then works around (an MCP server that went away, …). */
export interface ToolWarning {
  /** Stable code, e.g. `mcp.server_exited`, `mcp.tools_changed`. */
  readonly code: string;
  readonly message: string;
  /** The package (or `mcp:<server>`) that raised it. */
  readonly source: string;
}

/** Where warnings go; the pod forwards them to its event stream, the CLI prints them. */
export type ToolWarningSink = (warning: ToolWarning) => void;

/**
 * Where a package stores bytes by their content: the session store's blobs (docs/rewind.md,
 * "Blobs"). `put` resolves to the digest, `sha256:<64 hex>`, once the bytes are durable.
 */
export interface BlobWriter {
  put(bytes: Uint8Array): Promise<string>;
}

/** What a tool package's `tools(ctx)` is given. */
export interface ToolPackageContext {
  /** The manifest scope; every path a tool touches is checked against it on its canonical form. */
  readonly scope: Scope;
  /** The workspace directory (absolute). */
  readonly workspace: string;
  /**
   * The pod's environment (`PodOptions.env`, else `process.env`): where a package reads the
   * variables it needs (secrets named in the manifest, a child process's environment). Read
   * this, never `process.env`, so an app that gives its pod an environment is obeyed.
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The package's options from the manifest (`[tools.options."<package>"]`), `{}` when none. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Reports a problem the package works around. */
  readonly warn: ToolWarningSink;
  /**
   * The pod's OS sandbox (docs/sandbox.md): start every process through it (`sandbox.spawn`, or
   * `sandbox.wrap` for a library that spawns by itself), so it runs under the scope's file rules
   * and the manifest's network allow list like `bash` and stdio MCP servers do.
   */
  readonly sandbox: ToolSandbox;
  /**
   * The session store's blobs, where file contents go before an entry names them by digest;
   * undefined when the store keeps none.
   */
  readonly blobs?: BlobWriter;
  /**
   * The pod's file tracking (docs/rewind.md, "What is tracked"): wrap a call that may change
   * files in the workspace in `files.around`, or record a write the package makes itself with
   * `files.write`, and the changes reach the session log. Undefined when tracking is off
   * (`[tools] track_files = false`) or the store keeps no blobs.
   */
  readonly files?: FileTracking;
  /** Fires when the pod closes or its construction is abandoned; long set-up work must stop. */
  readonly signal: AbortSignal;
  /**
   * Registers clean-up (close connections, kill child processes) run once when the tools are
   * closed, in reverse order of registration. Errors in one callback do not skip the others.
   */
  onClose(callback: () => void | Promise<void>): void;
}

/**
 * A tool package: what an npm package (or a local module) exports for podkit to load. `tools`
 * returns lazy factories; the tool server materializes them at `flushPending()`, just before the
 * system prompt is rendered, so the tool list is final from then on.
 */
export interface PodkitToolPackage {
  /** The package's name as users see it in warnings and errors (usually its npm name). */
  readonly name: string;
  tools(ctx: ToolPackageContext): readonly ToolFactory[] | Promise<readonly ToolFactory[]>;
  /**
   * Guardrails the package adds to every pod that loads it: checks on the input, before and after
   * each tool call, and on the final answer (docs/permissions.md, "Guardrails").
   */
  guardrails?(ctx: ToolPackageContext): readonly Guardrail[] | Promise<readonly Guardrail[]>;
}

const PACKAGE_MARKER = Symbol.for("podkit.tools.package");

/** A package definition as `definePodkitToolPackage` returns it (marked, frozen). */
export type DefinedToolPackage = PodkitToolPackage & { readonly [PACKAGE_MARKER]: true };

/**
 * Declares a tool package. Export the result as the module's default export (or as
 * `podkitToolPackage`); podkit checks the marker, so a package built against another copy of
 * `@podkit/tools` still loads.
 */
export function definePodkitToolPackage(definition: PodkitToolPackage): DefinedToolPackage {
  return Object.freeze({ ...definition, [PACKAGE_MARKER]: true as const });
}

/** True for a value made by `definePodkitToolPackage` (from any copy of this package). */
export function isPodkitToolPackage(value: unknown): value is DefinedToolPackage {
  return (
    hasMarker(value, PACKAGE_MARKER) &&
    typeof (value as { tools?: unknown }).tools === "function" &&
    typeof (value as { name?: unknown }).name === "string"
  );
}
