import type * as worker from "@podkit/llm-worker";
import * as store from "@podkit/session-store";
import { describe, expect, expectTypeOf, it } from "vitest";

// One vocabulary across packages: a type name means one thing everywhere. session-store depends on
// no other podkit package, so it declares its own copies; these checks (type-level under
// `pnpm typecheck`, value-level under vitest) fail when the two drift apart.
describe("llm-worker and session-store speak one vocabulary", () => {
  it("UsageRecord is one shape", () => {
    expectTypeOf<worker.UsageRecord>().toEqualTypeOf<store.UsageRecord>();
  });

  it("RunStatus is the worker's union plus budget_exhausted, and the log's schema accepts exactly it", () => {
    // A run's end in the log is the worker's status, or the pod's `budget_exhausted` (a cap
    // stopped the run before a request: the worker yielded).
    expectTypeOf<store.RunStatus>().toEqualTypeOf<worker.RunStatus | "budget_exhausted">();
    const statuses: Record<store.RunStatus, true> = {
      finished: true,
      paused: true,
      limit_reached: true,
      yielded: true,
      awaiting_approval: true,
      budget_exhausted: true,
    };
    expect([...store.RunStatusSchema.options].sort()).toEqual(Object.keys(statuses).sort());
  });
});
