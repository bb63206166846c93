import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/dispatch", () => {
  it("exports what a user calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DispatchError",
      "FINAL_RUN_STATES",
      "InProcessDispatcher",
      "InProcessQueue",
      "LeaseLostError",
      "RUN_DOMAIN",
      "RunCancelledError",
      "RunEntrySchema",
      "RunInputError",
      "RunStateError",
      "RunWorker",
      "SessionRunningError",
      "UnknownPodError",
      "UnknownRunError",
      "awaitingRunOf",
      "continueAfterAnswer",
      "outcomeOf",
      "readRunJournal",
      "readRunProgress",
      "runIdForKey",
      "submitRun",
    ]);
  });

  it("recognises its errors by marker, not by name", () => {
    const error = new api.SessionRunningError({ sessionId: "s", runningRunId: "r" });
    expect(api.SessionRunningError.isInstance(error)).toBe(true);
    expect(api.DispatchError.isInstance(error)).toBe(true);
    expect(api.UnknownRunError.isInstance(error)).toBe(false);
    expect(api.DispatchError.isInstance({ name: "DispatchError" })).toBe(false);
  });
});
