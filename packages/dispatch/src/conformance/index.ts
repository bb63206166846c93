import { failureCases } from "./cases-failures.js";
import { runCases } from "./cases-runs.js";
import { slotCases } from "./cases-slots.js";
import type { CaseContext, ConformanceTestApi, DispatcherHarness } from "./harness.js";

export type { ConformanceTestApi, DispatcherHarness } from "./harness.js";

/** Options of the suite. */
export interface DispatcherConformanceOptions {
  /** Per-test timeout passed to `it` (default 60 000 ms). */
  timeoutMs?: number;
}

/**
 * Registers the dispatcher conformance suite: the guarantees of the `Dispatcher` seam that every
 * engine adapter must keep — ids only, one enqueue per run id, one lease per run and one running
 * run per session, pods, retries bounded then dead-lettered, release, takeover after a holder
 * died (before later runs, without retry delay), cancellation reaching the holder within 2 s, the
 * approval continuation, the lease's confirmation time, and a worker claiming again after a cancel
 * or a lost lease once it settled the claim. `createHarness`
 * is called once per test and must return an empty engine; the harness is disposed after the test.
 *
 * ```ts
 * import { describe, it } from "vitest";
 * import { describeDispatcherConformance } from "@podkit/dispatch/conformance";
 * describeDispatcherConformance("MyDispatcher", async () => ({ dispatcher, connect, crash, loseLease, leaseBoundMs, dispose }), { describe, it });
 * ```
 */
export function describeDispatcherConformance(
  name: string,
  createHarness: () => Promise<DispatcherHarness>,
  api: ConformanceTestApi,
  options: DispatcherConformanceOptions = {},
): void {
  const context: CaseContext = {
    it(caseName, body) {
      api.it(
        caseName,
        async () => {
          const harness = await createHarness();
          try {
            await body(harness);
          } finally {
            await harness.dispose();
          }
        },
        options.timeoutMs ?? 60_000,
      );
    },
  };
  api.describe(`${name} conforms to the dispatcher contract`, () => {
    api.describe("submit, lease, order, completion, cancellation, approvals", () => runCases(context));
    api.describe("retries, dead letters, release, takeover", () => failureCases(context));
    api.describe("leases and slots: claims again after cancel and after a lost lease", () =>
      slotCases(context),
    );
  });
}
