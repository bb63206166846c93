import { describe, expect, it } from "vitest";
import { ScriptError } from "../errors.js";
import { flattenToPartialArgs } from "./google-partial-args.js";

describe("flattenToPartialArgs", () => {
  it("walks nested objects and arrays in document order, continuing long strings", () => {
    expect(
      flattenToPartialArgs({ a: { b: "hello" }, list: [1, true, null], empty: [], none: {} }, 2, "here"),
    ).toEqual([
      { jsonPath: "$.a.b", stringValue: "he", willContinue: true },
      { jsonPath: "$.a.b", stringValue: "ll", willContinue: true },
      { jsonPath: "$.a.b", stringValue: "o" },
      { jsonPath: "$.list[0]", numberValue: 1 },
      { jsonPath: "$.list[1]", boolValue: true },
      { jsonPath: "$.list[2]", nullValue: null },
      { jsonPath: "$.empty[]" },
      { jsonPath: "$.none" },
    ]);
  });

  it("refuses arguments that are not an object", () => {
    expect(() => flattenToPartialArgs([1], 2, "google script part 0 (tool_call)")).toThrow(
      new ScriptError(
        "google script part 0 (tool_call): google tool call arguments must be a JSON object to be streamed in pieces",
      ),
    );
  });
});
