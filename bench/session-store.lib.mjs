// Shared by the session-store and store-postgres benches (not a bench itself: run.mjs only runs
// `*.bench.mjs`): medians, per-round ratios with their spread, and event-loop gaps.
import { monitorEventLoopDelay } from "node:perf_hooks";

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Prints `BENCH <name> <median ratio> x spread <min>–<max>` from per-round timings of both sides:
 * each round's ratio is taken within the round (both sides ran back to back, on the same load),
 * and the median and range of those ratios are reported.
 */
export function printRatio(name, ours, floor) {
  const ratios = ours.map((ms, round) => ms / floor[round]);
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `BENCH ${name} ${median(ratios).toFixed(2)} x spread ${sorted[0].toFixed(2)}–${sorted.at(-1).toFixed(2)}`,
  );
}

/** Prints `BENCH <name> <median> <unit> spread <min>–<max>` of per-round values. */
export function printValue(name, values, unit, digits = 1) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    `BENCH ${name} ${median(values).toFixed(digits)} ${unit} spread ${sorted[0].toFixed(digits)}–${sorted.at(-1).toFixed(digits)}`,
  );
}

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/**
 * Runs `fn` and returns its result, the longest event-loop stall seen meanwhile (`gapMs`, wall
 * time) and the most CPU the process used within one stall (`busyMs`). On a machine shared with
 * other jobs a stall's wall time also counts the time this process waited for a core; `busyMs`
 * is the part it spent working (its helper threads included, so it errs on the high side).
 */
export async function withLoopGap(fn) {
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  // A timer chain as well: the histogram samples at its resolution, the chain sees every stall.
  let last = performance.now();
  let lastCpu = cpuMs();
  let worst = 0;
  let busy = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    const cpu = cpuMs();
    worst = Math.max(worst, now - last);
    busy = Math.max(busy, Math.min(cpu - lastCpu, now - last));
    last = now;
    lastCpu = cpu;
    if (running) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  try {
    const result = await fn();
    // Let the chain tick once more: a stall at the very end (or a fully synchronous `fn`) is
    // only seen by the first tick after it.
    await new Promise((resolve) => setTimeout(resolve, 3));
    return { result, gapMs: Math.max(worst, histogram.max / 1e6), busyMs: busy };
  } finally {
    running = false;
    histogram.disable();
  }
}
