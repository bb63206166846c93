import { describe, expect, it } from "vitest";
import { OutputValidationError } from "../../src/output/errors.js";

describe("OutputValidationError", () => {
  it("carries the raw answer, every issue and the repairs; the message names the first five", () => {
    const issues = Array.from({ length: 7 }, (_, i) => ({ path: `/items/${i}`, message: "must be string" }));
    const error = new OutputValidationError({ raw: { items: [1, 2, 3, 4, 5, 6, 7] }, issues, repairs: 1 });
    expect(error.raw).toEqual({ items: [1, 2, 3, 4, 5, 6, 7] });
    expect(error.issues).toHaveLength(7);
    expect(error.repairs).toBe(1);
    expect(error.refusal).toBeUndefined();
    expect(error.errorKind).toBe("transient");
    expect(error.message).toBe(
      "the model's answer does not match the output schema after 1 repair: /items/0: must be string; /items/1: must be string; /items/2: must be string; /items/3: must be string; /items/4: must be string; and 2 more",
    );
  });

  it("names the whole answer (root) and reads well without issues", () => {
    expect(
      new OutputValidationError({ raw: "x", issues: [{ path: "", message: "must be object" }], repairs: 0 })
        .message,
    ).toBe("the model's answer does not match the output schema after 0 repairs: (root): must be object");
    expect(new OutputValidationError({ raw: undefined, issues: [], repairs: 2 }).message).toBe(
      "the model's answer does not match the output schema after 2 repairs",
    );
  });
});
