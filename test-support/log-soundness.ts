import { expect } from "vitest";

/**
 * The log-integrity check every package's tests run on the segments they leave (pods, dispatched
 * runs, killed workers): the segment replays with no tool call in flight (`replayed` is
 * `replay(entries)` of `@podkit/session-store`), and no `invoke` opens while another is open.
 * Returns whether the last `invoke` is still open (no `run_*` after it): a pod's own logs must
 * end closed, a SIGKILLed worker's may not.
 */
export function assertSegmentSound(
  segment: string,
  entries: readonly { readonly kind: string }[],
  replayed: { readonly inFlight?: unknown },
): boolean {
  expect(replayed.inFlight ?? null, `${segment}: an invoke was never closed`).toBeNull();
  let open = false;
  for (const entry of entries) {
    if (entry.kind === "invoke") {
      expect(open, `${segment}: invoke while another is open`).toBe(false);
      open = true;
    } else if (entry.kind === "run_completed" || entry.kind === "run_errored") {
      open = false;
    }
  }
  return open;
}
