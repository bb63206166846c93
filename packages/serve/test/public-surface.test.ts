import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";
import { ServeError, ServeTokenRequiredError, ServeUsageError } from "../src/index.js";

describe("the public surface of @podkit/serve", () => {
  it("exports what a user calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "ServeError",
      "ServeTokenRequiredError",
      "ServeUsageError",
      "isLoopbackHost",
      "startServer",
    ]);
  });

  it("recognises its errors by marker, not by name", () => {
    const refused = new ServeTokenRequiredError("0.0.0.0");
    expect(ServeTokenRequiredError.isInstance(refused)).toBe(true);
    expect(ServeError.isInstance(refused)).toBe(true);
    expect(ServeUsageError.isInstance(refused)).toBe(false);
    refused.name = "Renamed";
    expect(ServeTokenRequiredError.isInstance(refused)).toBe(true);
    expect(
      ServeTokenRequiredError.isInstance(Object.assign(new Error("x"), { name: "ServeTokenRequiredError" })),
    ).toBe(false);
    expect(refused.hint).toMatch(/PODKIT_SERVE_TOKEN/);
  });
});
