import { defineTool, type Tool, type ToolDenial } from "@podkit/llm-worker";
import { z } from "zod";
import type { SandboxCommand, SandboxProbe, ToolSandbox, WrappedCommand } from "../sandbox/sandbox.js";
import type { FileTracking } from "../tracking/file-tracking.js";
import { childEnvironment } from "./child-env.js";
import { ESCALATE_ARGUMENT } from "./escalation.js";
import { runCommand, shellCommand } from "./run-command.js";

/** How the bash tool is configured (`[tools]` bash keys). */
export interface BashToolOptions {
  workspace: string;
  timeoutMs: number;
  maxTimeoutMs: number;
  /** Secret-looking variables the manifest lets through (`[tools] bash_env`). */
  allowEnv: readonly string[];
  /** Further variables to remove, e.g. the model's `api_key_env`. */
  removeEnv: readonly string[];
  /** The environment to start from: the pod's (`ToolPackageContext.env`). */
  env: Readonly<Record<string, string | undefined>>;
  maxOutputBytes?: number;
  /** The pod's sandbox; every command starts inside it. */
  sandbox?: ToolSandbox;
  /** What the sandbox probe found: what the description tells the model about containment. */
  probe?: SandboxProbe;
  /** The pod's file tracking: every command runs inside `files.around` (docs/rewind.md). */
  files?: FileTracking;
}

const DEFAULT_OUTPUT_BYTES = 30_000;

/** What the description says about containment: the sandbox as probed, or the warning without one. */
function containment(probe: SandboxProbe | undefined): string {
  if (probe?.active !== true) {
    return "WARNING: this tool is not confined by the file-system scope; it can read and change anything the user can. ";
  }
  const network =
    probe.network.length === 0
      ? "no network"
      : `network access only to ${probe.network.join(", ")} (through a proxy)`;
  return (
    "Commands run in a sandbox built from the file-system scope: they can read the readable paths and the system's programs, " +
    "write only the writable paths (plus a private /tmp and home directory, discarded after each call), cannot read what the scope denies, " +
    `and have ${network}. `
  );
}

/** What the description says about escalation, when the sandbox is active. */
function escalation(sandbox: ToolSandbox): string {
  if (sandbox.escalation === "never") {
    return "This pod is a sub-pod: a command never runs outside its sandbox, so `escalate` is always refused. ";
  }
  return (
    "If the sandbox stops something the task truly needs, you may ask to run that one command outside it with " +
    "`escalate: { reason }`: a person must approve the call, with your reason, before it runs with the user's full authority. " +
    "Ask only after the sandbox has stopped the command, and say exactly what it needs. "
  );
}

/** The arguments of `bash`; `escalate` exists only while the sandbox is active. */
interface BashArgs {
  command: string;
  timeout_ms?: number | undefined;
  escalate?: { reason: string } | undefined;
}

/**
 * `bash`: runs a shell command in the workspace, inside the pod's sandbox (docs/sandbox.md): the
 * scope's file rules and the manifest's network allow list hold for everything it starts, and what
 * they refused is reported in the output's `denied`. A call with `escalate` runs outside the
 * sandbox only when the pod approved that very call (`ToolSandbox.escalate`); otherwise it is
 * refused. Without a sandbox (`[sandbox] backend = "none"`, or one that cannot run) it is NOT
 * confined — a command can touch anything the user running the pod can — and its description says so.
 */
export function bashTool(options: BashToolOptions) {
  const sandbox = options.probe?.active === true ? options.sandbox : undefined;
  const fields = {
    command: z.string().min(1).describe("The command line, run with bash -c in the workspace"),
    timeout_ms: z
      .int()
      .min(1)
      .max(options.maxTimeoutMs)
      .optional()
      .describe(`Timeout in milliseconds; default ${options.timeoutMs}, at most ${options.maxTimeoutMs}`),
  };
  // Without an active sandbox there is nothing to leave: the schema and description stay as they were.
  const input: z.ZodType<BashArgs> =
    sandbox === undefined
      ? z.strictObject(fields)
      : z.strictObject({
          ...fields,
          [ESCALATE_ARGUMENT]: z
            .strictObject({
              reason: z
                .string()
                .min(1)
                .describe(
                  "Why this command must run outside the sandbox: what the sandbox stops that the task needs",
                ),
            })
            .optional()
            .describe(
              "Run this one command outside the sandbox, with the user's full authority, once a person approves it",
            ),
        });
  const tool: Tool<BashArgs> = defineTool({
    name: "bash",
    description:
      "Run a shell command (bash -c) in the workspace directory and return its exit code and output (stdout and stderr interleaved; long output keeps its beginning and end). " +
      containment(options.probe) +
      (sandbox === undefined ? "" : escalation(sandbox)) +
      `Each call has a timeout (default ${options.timeoutMs} ms); the command and everything it started are killed when it expires. Background processes do not survive the call. Secret-looking environment variables are removed.`,
    inputSchema: input,
    async execute(args, ctx) {
      const timeoutMs = args.timeout_ms ?? options.timeoutMs;
      const shell = shellCommand(args.command, {
        cwd: options.workspace,
        env: childEnvironment(options.env, {
          allow: options.allowEnv,
          alsoRemove: options.removeEnv,
        }),
      });
      let started: SandboxCommand | WrappedCommand = shell;
      if (args.escalate !== undefined && sandbox !== undefined) {
        const outcome = await sandbox.escalate(shell, ctx.callId);
        if (!outcome.ok) return refusedEscalation(outcome.denied);
        started = outcome.command;
      } else if (options.sandbox !== undefined) {
        started = await options.sandbox.wrap(shell);
      }
      const watched = "release" in started ? started : undefined;
      let result: Awaited<ReturnType<typeof runCommand>>;
      let denied: ToolDenial | undefined;
      try {
        result = await runCommand(started, {
          timeoutMs,
          maxOutputBytes: options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES,
          signal: ctx.signal,
        });
        const failed = !result.aborted && (result.timedOut || result.exitCode !== 0);
        denied = await watched?.denial(result.output, { failed });
      } finally {
        await watched?.release();
      }
      const outside = args.escalate !== undefined ? "ran outside the sandbox (escalation approved); " : "";
      const ending = result.timedOut
        ? `timed out after ${timeoutMs} ms; the command and its children were killed`
        : result.aborted
          ? "aborted; the command and its children were killed"
          : result.exitCode !== null
            ? `exit code ${result.exitCode}`
            : `killed by ${result.signal}`;
      const size =
        result.totalBytes > Buffer.byteLength(result.output)
          ? `, ${result.totalBytes} bytes of output (middle omitted)`
          : "";
      return {
        summary: `${outside}${ending}${size}`,
        content: result.output,
        ...(result.timedOut || result.aborted ? { is_error: true } : {}),
        ...(denied === undefined ? {} : { denied }),
      };
    },
  });
  const files = options.files;
  if (files === undefined) return tool;
  // What the command changed under the writable roots goes into the output's `fileChanges`.
  const tracked: Tool<BashArgs> = {
    ...tool,
    execute: (args, ctx) => files.around(async () => tool.execute(args, ctx), ctx.signal),
  };
  return tracked;
}

function refusedEscalation(denied: ToolDenial): { summary: string; is_error: true; denied: ToolDenial } {
  return {
    summary: `not run: ${denied.reason}. A command runs outside the sandbox only after the pod approved that very call (an approval that names the reason); run it inside the sandbox, or ask the user.`,
    is_error: true,
    denied,
  };
}
