import type { Pod, PodRunResult } from "@podkit/pod";
import type { TextSink } from "../io.js";
import { reportError } from "../report-error.js";
import type { EventPrinter } from "./event-printer.js";
import type { LineInput } from "./line-input.js";
import { runTurn } from "./run-turn.js";

/** The state an interactive session shares with its Ctrl-C handler. */
export interface SessionControl {
  /** True while a turn runs. */
  turnRunning: boolean;
  /** Set by a Ctrl-C at an empty prompt; the next one exits. */
  exitArmed: boolean;
}

/**
 * Ctrl-C in an interactive session: during a turn it interrupts the turn (a pending approval
 * question is answered "no"); at the prompt the first one clears the line and says how to
 * leave, the second one leaves.
 */
export function interruptHandler(
  pod: Pod,
  lines: () => LineInput | undefined,
  control: SessionControl,
  out: TextSink,
  printer: EventPrinter,
): () => void {
  return () => {
    const input = lines();
    if (control.turnRunning) {
      input?.cancelPending();
      pod.interrupt("interrupted by Ctrl-C");
      return;
    }
    if (control.exitArmed || out.isTTY !== true) {
      // Without a terminal there is nobody to press Ctrl-C twice: the first one ends the session.
      if (out.isTTY !== true) out.write("interrupted\n");
      input?.close();
      return;
    }
    control.exitArmed = true;
    printer.endLine();
    out.write("\n(Ctrl-C again or Ctrl-D to exit)\n");
    input?.reprompt();
  };
}

/**
 * The read-run loop of `podkit run` / `podkit resume` without a prompt: each line is a turn;
 * Ctrl-D (or the end of piped input) ends the session. Turn failures are printed and the
 * session goes on, so one bad request does not lose the conversation.
 */
export async function interactiveLoop(
  pod: Pod,
  input: LineInput,
  control: SessionControl,
  out: TextSink,
  err: TextSink,
  printer: EventPrinter,
  prompt: string,
  debug: boolean,
  /** Shows what a turn that ended awaiting approval left pending. */
  onAwaitingApproval: (result: PodRunResult) => void,
  /** Shows a finished turn's result (a typed answer's JSON on stdout). */
  onFinished: (result: PodRunResult) => void = () => {},
): Promise<void> {
  for (;;) {
    const line = await input.nextLine(prompt);
    if (line === null) break;
    control.exitArmed = false;
    const text = line.trim();
    if (text === "") continue;
    control.turnRunning = true;
    try {
      const outcome = await runTurn(pod, text, printer);
      if (outcome.kind === "interrupted") out.write("(turn interrupted; the session goes on)\n");
      else if (outcome.result.status === "awaiting_approval") onAwaitingApproval(outcome.result);
      else if (outcome.result.status === "finished") onFinished(outcome.result);
      else out.write(`(turn ended: ${outcome.result.status})\n`);
    } catch (error) {
      printer.endLine();
      reportError(error, err, debug);
    } finally {
      control.turnRunning = false;
    }
  }
  printer.endLine();
}
