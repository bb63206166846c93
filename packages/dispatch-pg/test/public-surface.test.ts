import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";
import { queueOf } from "../src/index.js";

describe("the public surface of @podkit/dispatch-pg", () => {
  it("exports what a user calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual(["DispatchEngineError", "PgDispatcher", "queueOf"]);
  });

  it("gives every pod name a queue pg-boss accepts, distinct pods distinct queues", () => {
    expect(queueOf("reviewer")).toBe("podkit.run.reviewer");
    const odd = ["code review", "réviseur", "a/b", "a:b"].map(queueOf);
    for (const queue of odd) expect(queue).toMatch(/^[\w.\-/]+$/);
    expect(new Set(odd).size).toBe(odd.length);
  });

  it("recognises its errors by marker, not by name", () => {
    const error = new api.DispatchEngineError("refused");
    expect(api.DispatchEngineError.isInstance(error)).toBe(true);
    expect(api.DispatchEngineError.isInstance({ name: "DispatchEngineError" })).toBe(false);
  });
});
