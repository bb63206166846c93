import type { JSONSchema7 } from "@ai-sdk/provider";
import type { z } from "zod";
import type { ToolMedia } from "../media/media-ref.js";

/** What a tool execution receives besides its arguments. */
export interface ToolContext {
  /** Fires when the run is aborted; long-running tools must stop promptly. */
  readonly signal: AbortSignal;
  /** The provider's id of this call. */
  readonly callId: string;
}

/** What a tool returns: a short summary that is always kept, and optional full content. */
export interface ToolOutput {
  summary: string;
  content?: string;
  is_error?: boolean;
  /**
   * Images (PNG, JPEG, GIF, WebP) and PDF documents the model should see, as bytes in memory
   * (docs/media.md). The worker's `MediaStore` stores each (fitted to the provider's limits) before
   * the result is committed; the result carries their digests, never the bytes.
   */
  media?: readonly ToolMedia[];
  /**
   * The call's answer waits for an approval made elsewhere (a sub-pod's call a person must allow):
   * no result is committed for it, the run ends `awaiting_approval` once the batch's other results
   * are, and `resume()` executes the call again (the tool then continues where it waited).
   */
  awaiting_approval?: boolean;
  /**
   * Containment refused (part of) the call: the scope refused a path, or the OS sandbox stopped a
   * read, a write or a connection. The pod records it as a decision in the session log
   * (docs/permissions.md); the model sees only `summary`/`content`.
   */
  denied?: ToolDenial;
  /**
   * Files the call changed (docs/rewind.md): each path relative to the workspace (POSIX), with the
   * digests (`sha256:<hex>`) of its content before and after — `null` where the file did not exist
   * — whose bytes the tool stored in the session store's blobs first. The pod records them as a
   * `files.changed` entry; the model sees only `summary`/`content`.
   */
  fileChanges?: readonly {
    readonly path: string;
    readonly before: string | null;
    readonly after: string | null;
  }[];
}

/** Who in the containment stack refused a call, under which rule, and why. */
export interface ToolDenial {
  /** `scope`: a file tool's path check; `sandbox`: the OS sandbox (a file or network rule). */
  readonly by: "scope" | "sandbox";
  /** The rule that refused, as the manifest spells it (`deny = ".env"`, `network: example.com`). */
  readonly rule?: string;
  readonly reason: string;
}

/**
 * A tool the model can call. `inputSchema` is a zod schema or a JSON Schema object; arguments
 * are validated against it before `execute` runs (invalid arguments go back to the model as an
 * error result). Throwing from `execute` also becomes an error result.
 */
// biome-ignore lint/suspicious/noExplicitAny: a Tool<any> slot must accept tools of every argument type (parameters are contravariant)
export interface Tool<Args = any> {
  name: string;
  description: string;
  inputSchema: z.ZodType<Args> | JSONSchema7;
  /**
   * True when a call changes nothing outside the conversation — no file, process or remote state
   * (`read_file`, `grep`; an MCP tool annotated `readOnlyHint`). The `read_only` permission mode
   * runs only such tools; unset counts as changing things.
   */
  readOnly?: boolean;
  /**
   * True when `execute` checks the arguments itself: they reach it parsed but not validated against
   * `inputSchema` (which is still what the provider is sent). The pod's `final_answer` tool is one:
   * it repairs a wrapped or stringified answer before judging it (docs/output.md).
   */
  checksOwnArguments?: boolean;
  /**
   * The tool is deferred (docs/tools-deferred.md): its definition is not loaded into the model's
   * context up front. Where the provider has native tool search it is sent with `defer_loading`;
   * elsewhere it is left off the request and reached through the pod's `find_tools`/`call_tool`.
   * Either way the tools array a session sends never changes.
   */
  deferred?: boolean;
  execute(args: Args, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * Builds tools lazily. The tool server calls each factory exactly once, at `flushPending()`.
 * A tool package is an npm package that exports factories.
 */
export type ToolFactory = () => Tool | readonly Tool[] | Promise<Tool | readonly Tool[]>;

/** Identity helper that infers `Args` from a zod schema. */
export function defineTool<Args>(tool: Tool<Args> & { inputSchema: z.ZodType<Args> }): Tool<Args>;
export function defineTool(tool: Tool): Tool;
export function defineTool(tool: Tool): Tool {
  return tool;
}
