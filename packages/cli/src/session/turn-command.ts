import { awaitingRunOf } from "@podkit/dispatch";
import { type LoadedManifest, PERMISSION_MODES, type PermissionMode } from "@podkit/manifest";
import { FINAL_OUTPUT_DOMAIN, type Pod, type PodRunResult, toOutputSchema } from "@podkit/pod";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { PodkitCliError, UsageError } from "../errors.js";
import type { InputSource, TextSink } from "../io.js";
import { reportError } from "../report-error.js";
import { startTelemetry } from "../telemetry/index.js";
import { type Approval, interactiveApprover, parseApproval, pendingApprovalsText } from "./approvals.js";
import { type EventPrinter, jsonEventPrinter, textEventPrinter } from "./event-printer.js";
import { interactiveLoop, interruptHandler, type SessionControl } from "./interactive.js";
import { LineInput } from "./line-input.js";
import { loadPodManifest } from "./load-pod-manifest.js";
import { type OpenedPod, openPod } from "./open-pod.js";
import { readOutputSchemaFile } from "./output-schema-file.js";
import { runTurn } from "./run-turn.js";
import { loadSessionManifest } from "./session-manifest.js";
import { styleFor } from "./style.js";

/** Exit code of a one-shot turn ended by Ctrl-C (128 + SIGINT, as shells report it). */
export const INTERRUPTED_EXIT = 130;
/** Exit code of a one-shot turn that stopped without a final answer (max_turns, a pause). */
export const UNFINISHED_EXIT = 3;
/** Exit code of a one-shot turn that ended awaiting approval: `podkit approve`, then `podkit resume`. */
export const AWAITING_APPROVAL_EXIT = 4;

/**
 * `podkit run` and `podkit resume`: one turn for `prompt`, else an interactive session (lines
 * from a terminal, or piped in). Prints the session id and the resume command at the end. A typed
 * answer (`--output-schema`, or `[output]` in the manifest; docs/output.md) makes stdout the
 * answer's JSON alone, one line per finished turn; everything else goes to stderr.
 */
export async function turnCommand(
  input: CommandInput,
  ctx: CommandContext,
  target: { sessionId?: string; prompt?: string },
): Promise<number> {
  const { io } = ctx;
  const loaded =
    target.sessionId === undefined
      ? await loadPodManifest(input, ctx)
      : await loadSessionManifest(input, ctx, target.sessionId);
  const json = input.values.json === true;
  const schemaFile = stringOption(input.values["output-schema"]);
  // Read before the pod is made (the schema is part of its first request): a bad file writes nothing.
  const outputSchema = schemaFile === undefined ? undefined : await readOutputSchemaFile(schemaFile, io.cwd);
  // Settled once the pod is open: a sub-pod's session is restored with its role's `[output]`.
  let typed = outputSchema !== undefined || loaded.manifest.output !== undefined;
  // Where everything but a typed answer goes: stdout, or stderr when stdout is the answer's.
  let out: TextSink = typed ? io.stderr : io.stdout;
  // Only with OTEL_EXPORTER_OTLP_ENDPOINT set; shut down (bounded) after the pod is closed.
  const telemetry = await startTelemetry(io.env, (message) => io.stderr.write(`warning: ${message}\n`));
  let printer: EventPrinter = eventPrinter(input, out);
  const terminal = io.stdin?.isTTY === true && out.isTTY === true && !json;
  const control: SessionControl = { turnRunning: false, exitArmed: false };
  let lines: LineInput | undefined;
  let onInterrupt: () => void = () => {};
  const openLines = () => {
    lines ??= new LineInput({ ...io, stdout: out, stdin: io.stdin as InputSource }, () => onInterrupt());
    return lines;
  };
  // In a terminal a person answers now; otherwise (or with --defer-approvals) calls stay pending.
  const autoApprove = input.values.yes === true;
  const askNow = terminal && !autoApprove && input.values["defer-approvals"] !== true;
  const manifestArg = stringOption(input.values.manifest);
  const mode = permissionModeOption(stringOption(input.values.mode));
  let opened: OpenedPod;
  try {
    opened = await openPod(loaded, ctx, {
      ...(target.sessionId === undefined ? {} : { sessionId: target.sessionId }),
      ...(telemetry.pod === undefined ? {} : { telemetry: telemetry.pod }),
      autoApprove,
      ...(mode === undefined ? {} : { mode }),
      ...(outputSchema === undefined ? {} : { output: outputSchema }),
      ...(askNow
        ? {
            approver: interactiveApprover({
              ask: (question) => askApproval(openLines(), printer, question),
              onDeny: (call, reason) => printer.denied(call, reason),
            }),
          }
        : {}),
    });
  } catch (error) {
    await telemetry.shutdown();
    throw error;
  }
  const { pod } = opened;
  const podOutput = pod.manifest.manifest.output;
  if (typed !== (outputSchema !== undefined || podOutput !== undefined)) {
    typed = !typed;
    out = typed ? io.stderr : io.stdout;
    printer = eventPrinter(input, out);
  }
  if (target.sessionId !== undefined) {
    try {
      const now =
        outputSchema !== undefined
          ? { schema: outputSchema, source: `--output-schema ${schemaFile}` }
          : podOutput === undefined
            ? undefined
            : { schema: podOutput.schema, source: `[output] schema (${podOutput.schemaSource})` };
      checkRestoredOutput(pod, now, io.stderr);
    } catch (error) {
      await opened.close();
      await telemetry.shutdown();
      throw error;
    }
  }
  // A dispatched run waiting for approvals is continued by a worker once they are answered
  // (`podkit approve` requeues it): continuing it here would leave the dispatcher's run stale.
  const dispatched = awaitingRunOf(pod);
  if (dispatched !== undefined && (await dispatcherStillHolds(loaded, io.env, dispatched))) {
    await opened.close();
    await telemetry.shutdown();
    throw new PodkitCliError(
      `session ${pod.sessionId} is dispatched run ${dispatched}, waiting for approvals: a worker continues it, not \`podkit resume\``,
      {
        hint: `answer its calls with \`podkit approve ${pod.sessionId} <call> --allow\` (the run is requeued), or \`podkit runs cancel ${dispatched}\` first`,
      },
    );
  }
  onInterrupt = interruptHandler(pod, () => lines, control, out, printer);
  // Background jobs (memory's) report on stderr in text mode: stdout is the answer.
  const jobPrinter = json ? printer : textEventPrinter(io.stderr);
  /** A typed answer's JSON, alone on stdout; false when a typed turn finished without one. */
  const printAnswer = (result: PodRunResult & { output?: unknown }): boolean => {
    if (!typed) return true;
    if (!Object.hasOwn(result, "output")) return false;
    io.stdout.write(`${JSON.stringify(result.output)}\n`);
    return true;
  };
  const unsubscribeJobs = pod.subscribe((event) => {
    if (event.type === "job_progress") jobPrinter.print(event);
  });
  let code = 0;
  let turnFailed = false;
  try {
    // `podkit resume <session>` of a run awaiting approval continues that run (its answered calls).
    const continuing = target.prompt === undefined && target.sessionId !== undefined && pod.awaitingApproval;
    if (target.prompt !== undefined || continuing) {
      const unsubscribe = io.onInterrupt?.(onInterrupt);
      control.turnRunning = true;
      try {
        const outcome = await runTurn(pod, target.prompt, printer);
        if (outcome.kind === "interrupted") {
          // Said on stderr in every mode: without a terminal nothing else would show why it stopped.
          io.stderr.write("interrupted (Ctrl-C): the turn stopped; what was written is kept\n");
          code = INTERRUPTED_EXIT;
        } else if (outcome.result.status === "awaiting_approval") {
          reportPending(pod, outcome.result, json ? out : io.stderr, json, manifestArg);
          code = AWAITING_APPROVAL_EXIT;
        } else if (outcome.result.status === "finished" && !printAnswer(outcome.result)) {
          io.stderr.write("error: the turn finished without a typed answer\n");
          io.stderr.write(`hint: ${NO_ANSWER_HINT}\n`);
          code = UNFINISHED_EXIT;
        } else if (outcome.result.status !== "finished") {
          const { status } = outcome.result;
          io.stderr.write(`error: the turn ended without a final answer: ${status}\n`);
          io.stderr.write(
            `hint: ${unfinishedHint(status, loaded.manifest.worker.max_turns, pod.sessionId)}\n`,
          );
          code = UNFINISHED_EXIT;
        }
      } catch (error) {
        code = reportError(error, io.stderr, ctx.debug);
        turnFailed = true;
      } finally {
        unsubscribe?.();
        control.turnRunning = false;
      }
    } else if (io.stdin === undefined) {
      io.stderr.write("error: no prompt given and no input to read one from\n");
      io.stderr.write('hint: give the prompt as an argument (podkit run "…") or pipe lines into stdin\n');
      code = 2;
    } else {
      const style = styleFor(terminal);
      if (terminal)
        out.write(style.dim(`pod "${loaded.manifest.pod.name}" · Ctrl-C interrupts a turn · Ctrl-D exits\n`));
      await interactiveLoop(
        pod,
        openLines(),
        control,
        out,
        io.stderr,
        printer,
        terminal ? style.bold("› ") : "",
        ctx.debug,
        (result) => reportPending(pod, result, json ? out : io.stderr, json, manifestArg),
        (result) => {
          if (!printAnswer(result)) io.stderr.write("(turn finished without a typed answer)\n");
        },
      );
    }
  } finally {
    lines?.close();
    const sessionId = pod.sessionId;
    // A memory job started after the last turn finishes before the process ends.
    await pod.whenJobsIdle();
    try {
      await opened.close();
    } finally {
      await telemetry.shutdown();
    }
    unsubscribeJobs();
    if (json) {
      if (sessionId !== undefined) out.write(`${JSON.stringify({ type: "session", sessionId })}\n`);
    } else if (sessionId !== undefined) {
      const failed = turnFailed ? "its turn failed (your message is kept) · " : "";
      io.stderr.write(`session ${sessionId} · ${failed}continue it with: podkit resume ${sessionId}\n`);
    } else {
      io.stderr.write("no session was started (no turn ran)\n");
    }
  }
  return code;
}

/** A typed turn finished without its answer: the pod should never allow it. */
const NO_ANSWER_HINT =
  "a pod with an output schema finishes only with the answer; rerun with --debug and report it";

/** The printer of the turns' events: JSON Lines with `--json`, else text. */
function eventPrinter(input: CommandInput, out: TextSink): EventPrinter {
  return input.values.json === true
    ? jsonEventPrinter(out)
    : textEventPrinter(out, { hideReasoning: input.values["hide-reasoning"] === true });
}

/**
 * A restored session and the schema it answers with now (`--output-schema`, else `[output]`): the
 * session's last typed answer (`pod.extensions`, its `final_output` entry) was checked against a
 * schema; another one would change the request prefix and the answer's type, so it is refused,
 * and none at all is warned of.
 */
function checkRestoredOutput(
  pod: Pod,
  now: { schema: Record<string, unknown>; source: string } | undefined,
  stderr: TextSink,
): void {
  const last = pod.extensions.get(FINAL_OUTPUT_DOMAIN) as { schema_digest?: unknown } | undefined;
  const recorded = typeof last?.schema_digest === "string" ? last.schema_digest : undefined;
  if (recorded === undefined) return;
  if (now === undefined) {
    stderr.write(
      `warning: session ${pod.sessionId}'s answers were typed (schema ${recorded}); without --output-schema this turn's answer is text\n`,
    );
    return;
  }
  const digest = toOutputSchema(now.schema).digest;
  if (digest === recorded) return;
  throw new PodkitCliError(
    `${now.source}: session ${pod.sessionId} answers with schema ${recorded}, this one is ${digest}`,
    {
      hint: "resume with the schema the session started with: it is part of the session's request prefix and cannot change (docs/output.md)",
    },
  );
}

/** What to do about a turn that stopped without an answer: raise the limit, or continue it. */
function unfinishedHint(status: string, maxTurns: number, sessionId: string | undefined): string {
  const resume = sessionId === undefined ? "`podkit resume <session>`" : `\`podkit resume ${sessionId}\``;
  if (status === "limit_reached") {
    return `the run used all ${maxTurns} model requests of [worker] max_turns; continue with ${resume} or raise max_turns in the manifest`;
  }
  return `the turn is kept open; continue it with ${resume}`;
}

/**
 * The calls a run left pending — its own and its sub-pods' at any depth, each with its pod path —
 * and the commands that answer them from this session (one JSON line with `--json`).
 */
function reportPending(
  pod: Pod,
  result: PodRunResult,
  out: TextSink,
  json: boolean,
  manifest: string | undefined,
): void {
  const sessionId = pod.sessionId as string;
  const pending = result.approvals ?? [];
  if (json) {
    const calls = pending.map(({ sessionId: holder, callId, tool, arguments: args, askedBy, podPath }) => ({
      callId,
      tool,
      arguments: args,
      askedBy,
      podPath,
      sessionId: holder,
    }));
    out.write(`${JSON.stringify({ type: "awaiting_approval", sessionId, pending: calls })}\n`);
  } else {
    out.write(pendingApprovalsText(sessionId, pending, manifest));
  }
}

/** Asks until the answer is y, n or a; an interrupted or closed input answers no. */
async function askApproval(lines: LineInput, printer: EventPrinter, question: string): Promise<Approval> {
  printer.endLine();
  for (;;) {
    const line = await lines.nextLine(question);
    if (line === null) return "no";
    const answer = parseApproval(line);
    if (answer !== undefined) return answer;
  }
}

/**
 * True unless the dispatcher says run `runId` has ended (cancelled with `podkit runs cancel`,
 * dead-lettered, completed): only then may the session be continued here.
 */
async function dispatcherStillHolds(
  loaded: LoadedManifest,
  env: Readonly<Record<string, string | undefined>>,
  runId: string,
): Promise<boolean> {
  if (loaded.manifest.session.store !== "postgres") return true;
  const { openDispatcher } = await import("../dispatch/open-dispatcher.js");
  const dispatcher = await openDispatcher(loaded, env);
  try {
    const run = await dispatcher.show(runId);
    return run !== undefined && !["cancelled", "dead", "completed"].includes(run.state);
  } finally {
    await dispatcher.close();
  }
}

/** `--mode <mode>`, checked: one of the permission modes (docs/permissions.md). */
export function permissionModeOption(value: string | undefined): PermissionMode | undefined {
  if (value === undefined) return undefined;
  if ((PERMISSION_MODES as readonly string[]).includes(value)) return value as PermissionMode;
  throw new UsageError(`--mode must be one of ${PERMISSION_MODES.join(", ")}, got "${value}"`, {
    hint: "e.g. --mode read_only (nothing changes the disk) or --mode accept_edits",
  });
}
