import type { LoadedManifest, PermissionMode } from "@podkit/manifest";
import {
  type Approver,
  type OutputSchemaInput,
  Pod,
  type PodTelemetryOptions,
  type PodWarning,
} from "@podkit/pod";
import { CorruptEntryError, NotFoundError } from "@podkit/session-store";
import type { CommandContext } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { checkApiKey } from "./load-pod-manifest.js";
import { openStore } from "./open-store.js";
import { cliPodOptions } from "./pod-options.js";

/** AGENTS.md above this size still renders, with a warning. */
const AGENTS_MD_WARN_BYTES = 64 * 1024;

/** A pod and the store it writes to (the CLI opened the store, so it closes it too). */
export interface OpenedPod {
  pod: Pod;
  close(): Promise<void>;
}

function opened(pod: Pod, store: { close(): Promise<void> }): OpenedPod {
  return {
    pod,
    close: async () => {
      await pod.close();
      await store.close();
    },
  };
}

export interface OpenPodOptions {
  /** Restore this session instead of starting a new one. */
  sessionId?: string;
  /** Where warnings go (default: `warning: …` lines on stderr). */
  onWarning?: (warning: PodWarning) => void;
  /** OpenTelemetry export for the pod (`startTelemetry`); none by default. */
  telemetry?: PodTelemetryOptions;
  /** Who answers approvals now (the terminal); none: they stay pending (`awaiting_approval`). */
  approver?: Approver;
  /** `--yes`: the builtin approval policy is off. */
  autoApprove?: boolean;
  /** `--mode`: the permission mode of this run. */
  mode?: PermissionMode;
  /** `--output-schema`: the pod's typed answer, in place of the manifest's `[output]` (docs/output.md). */
  output?: OutputSchemaInput;
}

/**
 * A pod ready to run: a new one whose system prompt is already rendered (so a problem with
 * AGENTS.md or the template stops the command before any session is written), or a restored one.
 * The API key is checked first, so a missing key never leaves an empty session behind.
 */
export async function openPod(
  loaded: LoadedManifest,
  ctx: CommandContext,
  options: OpenPodOptions = {},
): Promise<OpenedPod> {
  checkApiKey(loaded, ctx.io.env);
  const store = await openStore(loaded, ctx.io.env);
  const agentsProblems: Extract<PodWarning, { code: "agents_md.unreadable" }>[] = [];
  const onWarning = (warning: PodWarning) => {
    if (warning.code === "agents_md.unreadable") agentsProblems.push(warning);
    else (options.onWarning ?? ((w: PodWarning) => ctx.io.stderr.write(`warning: ${w.message}\n`)))(warning);
  };
  const podOptions = cliPodOptions(ctx, {
    store,
    onWarning,
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
    ...(options.approver === undefined ? {} : { approver: options.approver }),
    ...(options.autoApprove === true ? { autoApprove: true } : {}),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.output === undefined ? {} : { output: options.output }),
  });
  if (options.sessionId !== undefined) {
    try {
      // A sub-pod's session opens with its role's manifest, loan and depth (Pod.restore decides).
      return opened(await Pod.restore(loaded, options.sessionId, podOptions), store);
    } catch (error) {
      await store.close();
      throw await explainRestoreError(error, options.sessionId, loaded, ctx);
    }
  }
  const pod = await Pod.fromManifest(loaded, podOptions);
  try {
    await pod.renderSystemPrompt();
    const problem = agentsProblems[0];
    if (problem !== undefined) throw unreadableAgentsMd(problem);
    await warnAboutLargeAgentsMd(loaded, ctx);
    return opened(pod, store);
  } catch (error) {
    await pod.close();
    await store.close();
    throw error;
  }
}

/**
 * An AGENTS.md that exists but cannot be read. The pod would render the prompt without it (and
 * warn); the CLI stops instead, because the prompt is rendered once per session and kept.
 */
export function unreadableAgentsMd(problem: { file: string; message: string }): PodkitCliError {
  return new PodkitCliError(
    `cannot use ${problem.file}: ${problem.message.replace(/^ignoring [^:]+: /, "")}`,
    {
      hint: "fix the file (it must be readable UTF-8 text) or move it away; a session renders AGENTS.md into its system prompt once",
    },
  );
}

async function warnAboutLargeAgentsMd(loaded: LoadedManifest, ctx: CommandContext): Promise<void> {
  const { stat } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const size = await stat(join(loaded.workspace, "AGENTS.md")).then(
    (s) => s.size,
    () => 0,
  );
  if (size > AGENTS_MD_WARN_BYTES) {
    ctx.io.stderr.write(
      `warning: AGENTS.md is ${Math.round(size / 1024)} KiB; all of it goes into every request's system prompt\n`,
    );
  }
}

async function explainRestoreError(
  error: unknown,
  sessionId: string,
  loaded: LoadedManifest,
  ctx: CommandContext,
): Promise<unknown> {
  if (NotFoundError.isInstance(error)) {
    return new PodkitCliError(`no session ${sessionId} in ${loaded.workspace}`, {
      hint: "`podkit session list` shows this workspace's sessions",
      cause: error,
    });
  }
  if (CorruptEntryError.isInstance(error)) {
    const { corruptLogError } = await import("./corrupt-log.js");
    const store = await openStore(loaded, ctx.io.env);
    try {
      return await corruptLogError(error, store, sessionId);
    } finally {
      await store.close();
    }
  }
  return error;
}
