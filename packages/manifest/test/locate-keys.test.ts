import { describe, expect, it } from "vitest";
import { KeyLocator } from "../src/toml/locate-keys.js";

describe("KeyLocator", () => {
  const source = [
    "# comment = 1", // 1
    "[worker]", // 2
    'system_prompt = """', // 3
    "fake = 1", // 4  (inside the string)
    "[not.a.table]", // 5  (inside the string)
    '"""', // 6
    "max_turns = 3 # trailing", // 7
    "stop_sequences = [", // 8
    '  "x = 1",', // 9
    "]", // 10
    "[worker.tool_output]", // 11
    'per_tool = { grep = 1, "my.tool" = 2 }', // 12
    "[[scope.allow]]", // 13
    'target = "a"', // 14
    "[[scope.allow]]", // 15
    '  "permission" = "read"', // 16
    "[scope.allow.extra]", // 17
    "deep = 1", // 18
    "[model]", // 19
    "tuning.top_k = 5", // 20
    "prompt = '''", // 21
    "ref = 'no'", // 22  (inside the literal string)
    "'''", // 23
  ].join("\n");
  const locator = new KeyLocator(source);

  it("finds keys and table headers, skipping the bodies of multi-line strings and arrays", () => {
    expect(locator.lineOf(["worker"])).toBe(2);
    expect(locator.lineOf(["worker", "system_prompt"])).toBe(3);
    expect(locator.lineOf(["worker", "fake"])).toBe(2);
    expect(locator.lineOf(["not"])).toBeUndefined();
    expect(locator.lineOf(["worker", "max_turns"])).toBe(7);
    expect(locator.lineOf(["worker", "x = 1"])).toBe(2);
    expect(locator.lineOf(["model", "ref"])).toBe(19);
  });

  it("counts arrays of tables and attaches sub-tables to their latest element", () => {
    expect(locator.lineOf(["scope", "allow", 0, "target"])).toBe(14);
    expect(locator.lineOf(["scope", "allow", 1])).toBe(15);
    expect(locator.lineOf(["scope", "allow", 1, "permission"])).toBe(16);
    expect(locator.lineOf(["scope", "allow", 1, "extra", "deep"])).toBe(18);
    expect(locator.lineOf(["scope", "allow", 0, "extra"])).toBe(13);
  });

  it("falls back to the enclosing key for inline tables and indexes dotted keys", () => {
    expect(locator.lineOf(["worker", "tool_output", "per_tool", "my.tool"])).toBe(12);
    expect(locator.lineOf(["model", "tuning", "top_k"])).toBe(20);
    expect(locator.lineOf(["model", "tuning"])).toBe(20);
  });
});
