import { AbortedError, CancelledError } from "@podkit/llm-worker";
import type { Pod, PodRunResult } from "@podkit/pod";
import type { EventPrinter } from "./event-printer.js";

/** How one turn ended, as the CLI reports it. */
export type TurnOutcome = { kind: "completed"; result: PodRunResult } | { kind: "interrupted" };

/**
 * Runs one turn (`input`) or continues a paused one (`undefined`), printing its events as they
 * come. An interrupt (Ctrl-C) ends it as `interrupted`; any other failure is thrown.
 */
export async function runTurn(
  pod: Pod,
  input: string | undefined,
  printer: EventPrinter,
): Promise<TurnOutcome> {
  const handle = input === undefined ? pod.resume() : pod.run(input);
  try {
    // Background jobs' events (memory) come through pod.subscribe, printed by the caller.
    for await (const event of handle) if (event.type !== "job_progress") printer.print(event);
    return { kind: "completed", result: await handle };
  } catch (error) {
    printer.endLine();
    if (AbortedError.isInstance(error) || CancelledError.isInstance(error)) return { kind: "interrupted" };
    throw error;
  }
}
