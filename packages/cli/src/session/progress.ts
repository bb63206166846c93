import type { TextSink } from "../io.js";
import { styleFor } from "./style.js";

/** Long work in progress (compaction, consolidation) as the user sees it. */
export interface Progress {
  done(outcome: string): void;
  failed(outcome: string): void;
}

/**
 * Starts a progress indicator for `label`: in a terminal a live line with the elapsed time,
 * rewritten in place every 100 ms; otherwise a start line and a done line, no control codes.
 */
export function startProgress(out: TextSink, label: string, now: () => number = Date.now): Progress {
  const started = now();
  const elapsed = () => `${((now() - started) / 1000).toFixed(1)}s`;
  const style = styleFor(out.isTTY === true);
  if (out.isTTY !== true) {
    out.write(`${label}…\n`);
    return {
      done: (outcome) => out.write(`${label}: ${outcome} (${elapsed()})\n`),
      failed: (outcome) => out.write(`${label} failed: ${outcome} (${elapsed()})\n`),
    };
  }
  const draw = () => out.write(`${style.clearLine}${style.dim(`${label}… ${elapsed()}`)}`);
  draw();
  const timer = setInterval(draw, 100);
  timer.unref();
  const finish = (line: string) => {
    clearInterval(timer);
    out.write(`${style.clearLine}${line}\n`);
  };
  return {
    done: (outcome) => finish(`${style.green("✓")} ${label}: ${outcome} (${elapsed()})`),
    failed: (outcome) => finish(`${style.red("✗")} ${label} failed: ${outcome} (${elapsed()})`),
  };
}
