import type { CommandContext, CommandInput } from "../commands/command.js";
import type { InputSource } from "../io.js";
import { reportError } from "../report-error.js";
import { type Approval, approvalHook, parseApproval, toolsNeedingApproval } from "./approvals.js";
import { type EventPrinter, jsonEventPrinter, textEventPrinter } from "./event-printer.js";
import { interactiveLoop, interruptHandler, type SessionControl } from "./interactive.js";
import { LineInput } from "./line-input.js";
import { loadPodManifest } from "./load-pod-manifest.js";
import { openPod } from "./open-pod.js";
import { runTurn } from "./run-turn.js";
import { styleFor } from "./style.js";

/** Exit code of a one-shot turn ended by Ctrl-C (128 + SIGINT, as shells report it). */
export const INTERRUPTED_EXIT = 130;
/** Exit code of a one-shot turn that stopped without a final answer (max_turns, a pause). */
export const UNFINISHED_EXIT = 3;

/**
 * `podkit run` and `podkit resume`: one turn for `prompt`, else an interactive session (lines
 * from a terminal, or piped in). Prints the session id and the resume command at the end.
 */
export async function turnCommand(
  input: CommandInput,
  ctx: CommandContext,
  target: { sessionId?: string; prompt?: string },
): Promise<number> {
  const { io } = ctx;
  const loaded = await loadPodManifest(input, ctx);
  const json = input.values.json === true;
  const opened = await openPod(
    loaded,
    ctx,
    target.sessionId === undefined ? {} : { sessionId: target.sessionId },
  );
  const { pod } = opened;
  const printer: EventPrinter = json
    ? jsonEventPrinter(io.stdout)
    : textEventPrinter(io.stdout, { hideReasoning: input.values["hide-reasoning"] === true });
  const terminal = io.stdin?.isTTY === true && io.stdout.isTTY === true && !json;
  const control: SessionControl = { turnRunning: false, exitArmed: false };
  let lines: LineInput | undefined;
  const onInterrupt = interruptHandler(pod, () => lines, control, io.stdout, printer);
  const openLines = () => {
    lines ??= new LineInput({ ...io, stdin: io.stdin as InputSource }, onInterrupt);
    return lines;
  };
  pod.addHooks(
    approvalHook({
      names: toolsNeedingApproval(loaded),
      yes: input.values.yes === true,
      onDeny: (call, reason) => printer.denied(call, reason),
      ...(terminal ? { ask: (question) => askApproval(openLines(), printer, question) } : {}),
    }),
  );
  const unsubscribeJobs = pod.subscribe((event) => {
    if (event.type === "memory_job") printer.print(event);
  });
  let code = 0;
  try {
    if (target.prompt !== undefined) {
      const unsubscribe = io.onInterrupt?.(onInterrupt);
      control.turnRunning = true;
      try {
        const outcome = await runTurn(pod, target.prompt, printer);
        if (outcome.kind === "interrupted") code = INTERRUPTED_EXIT;
        else if (outcome.result.status !== "finished") {
          io.stderr.write(`the turn ended without a final answer: ${outcome.result.status}\n`);
          code = UNFINISHED_EXIT;
        }
      } catch (error) {
        code = reportError(error, io.stderr, ctx.debug);
      } finally {
        unsubscribe?.();
        control.turnRunning = false;
      }
    } else if (io.stdin === undefined) {
      io.stderr.write("error: no prompt given and no input to read one from\n");
      code = 2;
    } else {
      const style = styleFor(terminal);
      if (terminal)
        io.stdout.write(
          style.dim(`pod "${loaded.manifest.pod.name}" · Ctrl-C interrupts a turn · Ctrl-D exits\n`),
        );
      await interactiveLoop(
        pod,
        openLines(),
        control,
        io.stdout,
        io.stderr,
        printer,
        terminal ? style.bold("› ") : "",
        ctx.debug,
      );
    }
  } finally {
    lines?.close();
    const sessionId = pod.sessionId;
    // A memory job started after the last turn finishes before the process ends.
    await pod.whenJobsIdle();
    await opened.close();
    unsubscribeJobs();
    if (json) {
      if (sessionId !== undefined) io.stdout.write(`${JSON.stringify({ type: "session", sessionId })}\n`);
    } else if (sessionId !== undefined) {
      io.stderr.write(`session ${sessionId} · continue it with: podkit resume ${sessionId}\n`);
    } else {
      io.stderr.write("no session was started (no turn ran)\n");
    }
  }
  return code;
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
