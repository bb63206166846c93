import { approvalCases } from "./cases-approvals.js";
import { basicCases } from "./cases-basic.js";
import { corruptionCases } from "./cases-corrupt.js";
import { lineageCases } from "./cases-lineage.js";
import { readFromCases } from "./cases-read-from.js";
import { writerCases } from "./cases-writers.js";
import type { CaseContext, ConformanceHarness, ConformanceTestApi } from "./harness.js";

export type { BlobConformanceHarness } from "../blobs/blob-conformance.js";
export { describeBlobStoreConformance } from "../blobs/blob-conformance.js";
export type { ConformanceHarness, ConformanceTestApi } from "./harness.js";

/** Options of the suite. */
export interface ConformanceOptions {
  /** Per-test timeout passed to `it` (default 30 000 ms). */
  timeoutMs?: number;
}

/**
 * Registers the store conformance suite: every guarantee of docs/session-store.md that is not about files —
 * ordering, byte-identical entries, the one-writer rule and drift forks, truncate, fork, forkAt,
 * the head rule, incremental reads (`readFrom`), corrupt and unknown-version data as typed errors. `createHarness` is called
 * once per test and must return an empty store; the harness is disposed after the test.
 *
 * ```ts
 * import { describe, it } from "vitest";
 * import { describeStoreConformance } from "@podkit/session-store/conformance";
 * describeStoreConformance("MyStore", async () => ({ store, openSecond, writeRaw, dispose }), { describe, it });
 * ```
 */
export function describeStoreConformance(
  name: string,
  createHarness: () => Promise<ConformanceHarness>,
  api: ConformanceTestApi,
  options: ConformanceOptions = {},
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
        options.timeoutMs ?? 30_000,
      );
    },
  };
  api.describe(`${name} conforms to the session store contract`, () => {
    api.describe("ordering, verbatim entries, listings", () => basicCases(context));
    api.describe("one writer per segment, drift forks, truncate", () => writerCases(context));
    api.describe("fork, forkAt, compaction and the head rule", () => lineageCases(context));
    api.describe("incremental reads from an index", () => readFromCases(context));
    api.describe("corrupt and unknown-version data", () => corruptionCases(context));
    api.describe("approvals answered exactly once from any writer", () => approvalCases(context));
  });
}
