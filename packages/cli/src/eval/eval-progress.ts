import type { EvalItemResult } from "@podkit/pod";
import type { TextSink } from "../io.js";
import { styleFor } from "../session/style.js";

/** What `podkit eval` tells its progress display. */
export interface EvalProgress {
  /** An item finished (or was found finished: `result.resumed`). */
  item(result: EvalItemResult, done: number, total: number): void;
  /** The eval is over (or failed): the live line is closed. */
  finish(): void;
}

const BAR_WIDTH = 20;

/**
 * The progress of an eval on `out` (stderr). On a terminal, one line redrawn in place — a bar,
 * items done of the total, divergences, failures and the time left (from the items run so far;
 * items found finished cost nothing and do not count) — and kept as a last line when it ends.
 * Anywhere else, one plain line per item, no control codes. Never stdout: `--json` stays clean.
 */
export function evalProgress(out: TextSink, total: number, now: () => number = Date.now): EvalProgress {
  if (out.isTTY !== true) {
    return {
      item: (result, done) => out.write(`[${done}/${total}] ${result.caseName} ${verdict(result)}\n`),
      finish: () => {},
    };
  }
  const style = styleFor(true);
  const started = now();
  let done = 0;
  let ran = 0;
  let divergences = 0;
  let failed = 0;
  let open = true;
  const line = () => {
    const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
    const bar = `${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}`;
    const elapsed = now() - started;
    const left = total - done;
    const eta = left === 0 ? "" : ran === 0 ? ", ETA …" : `, ETA ${duration((elapsed / ran) * left)}`;
    const failures = failed === 0 ? "" : `, ${style.red(`${failed} failed`)}`;
    return `eval ${bar} ${done}/${total} items, ${divergences} divergence${divergences === 1 ? "" : "s"}${failures}${eta} (${duration(elapsed)})`;
  };
  const draw = () => {
    if (open) out.write(`${style.clearLine}${line()}`);
  };
  draw();
  const timer = setInterval(draw, 1000);
  timer.unref();
  return {
    item(result, count) {
      done = count;
      if (!result.resumed) ran += 1;
      divergences += result.divergences.length;
      if (!result.pass) failed += 1;
      draw();
    },
    finish() {
      if (!open) return;
      clearInterval(timer);
      out.write(`${style.clearLine}${line()}\n`);
      open = false;
    },
  };
}

function verdict(result: EvalItemResult): string {
  const state = result.pass ? "pass" : "FAIL";
  const divergences = result.divergences.length;
  const notes = [
    ...(divergences === 0 ? [] : [`${divergences} divergence${divergences === 1 ? "" : "s"}`]),
    ...(result.resumed ? ["finished before"] : []),
  ];
  return notes.length === 0 ? state : `${state} (${notes.join(", ")})`;
}

/** `42s`, `3m05s`, `1h02m`. */
function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
