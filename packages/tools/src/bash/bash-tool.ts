import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import type { SandboxProbe, ToolSandbox } from "../sandbox/sandbox.js";
import { childEnvironment } from "./child-env.js";
import { runCommand } from "./run-command.js";

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

/**
 * `bash`: runs a shell command in the workspace, inside the pod's sandbox (docs/sandbox.md): the
 * scope's file rules and the manifest's network allow list hold for everything it starts. Without
 * a sandbox (`[sandbox] backend = "none"`, or one that cannot run) it is NOT confined — a command
 * can touch anything the user running the pod can — and its description says so.
 */
export function bashTool(options: BashToolOptions) {
  const input = z.strictObject({
    command: z.string().min(1).describe("The command line, run with bash -c in the workspace"),
    timeout_ms: z
      .int()
      .min(1)
      .max(options.maxTimeoutMs)
      .optional()
      .describe(`Timeout in milliseconds; default ${options.timeoutMs}, at most ${options.maxTimeoutMs}`),
  });
  const tool: Tool<z.infer<typeof input>> = defineTool({
    name: "bash",
    description:
      "Run a shell command (bash -c) in the workspace directory and return its exit code and output (stdout and stderr interleaved; long output keeps its beginning and end). " +
      containment(options.probe) +
      `Each call has a timeout (default ${options.timeoutMs} ms); the command and everything it started are killed when it expires. Background processes do not survive the call. Secret-looking environment variables are removed.`,
    inputSchema: input,
    async execute(args, ctx) {
      const timeoutMs = args.timeout_ms ?? options.timeoutMs;
      const result = await runCommand(args.command, {
        cwd: options.workspace,
        env: childEnvironment(options.env, {
          allow: options.allowEnv,
          alsoRemove: options.removeEnv,
        }),
        timeoutMs,
        maxOutputBytes: options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES,
        signal: ctx.signal,
        ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      });
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
        summary: `${ending}${size}`,
        content: result.output,
        ...(result.timedOut || result.aborted ? { is_error: true } : {}),
      };
    },
  });
  return tool;
}
