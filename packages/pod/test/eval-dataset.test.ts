import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EvalDatasetError } from "../src/eval/errors.js";
import { readEvalDataset } from "../src/eval/eval-dataset.js";
import { useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();

describe("eval dataset files", () => {
  it("reads JSON Lines and JSON (an array, or {cases}) into recorded and input cases", async () => {
    const dir = await tempDir("dataset");
    await writeFiles(dir, {
      "cases.jsonl":
        '{"session":"s1"}\n\n{"session":"s2","from_turn":2,"to_turn":3,"name":"second"}\n{"input":["a","b"],"expected":{"n":1}}\n',
      "cases.json": JSON.stringify({ cases: [{ input: "hi", expected: "Hello." }] }),
      "list.json": JSON.stringify([{ session: "s3" }]),
    });
    expect(await readEvalDataset(join(dir, "cases.jsonl"))).toEqual([
      { sessionId: "s1" },
      { sessionId: "s2", fromTurn: 2, toTurn: 3, name: "second" },
      { input: ["a", "b"], expected: { n: 1 } },
    ]);
    expect(await readEvalDataset(join(dir, "cases.json"))).toEqual([{ input: "hi", expected: "Hello." }]);
    expect(await readEvalDataset(join(dir, "list.json"))).toEqual([{ sessionId: "s3" }]);
  });

  it("names the file, the line and the key of a bad case", async () => {
    const dir = await tempDir("dataset");
    await writeFiles(dir, {
      "typo.jsonl": '{"session":"s1"}\n{"session":"s2","from_turn":0}\n',
      "reversed.json": JSON.stringify({ cases: [{ session: "s", from_turn: 3, to_turn: 2 }] }),
      "broken.jsonl": '{"session":"s1"}\n{"session":\n',
      "neither.json": JSON.stringify({ inputs: [] }),
    });
    const failure = async (file: string) => {
      const error = await readEvalDataset(join(dir, file)).catch((e: unknown) => e);
      expect(EvalDatasetError.isInstance(error), file).toBe(true);
      return (error as Error).message;
    };
    expect(await failure("typo.jsonl")).toMatch(/typo\.jsonl:2 at from_turn: .*>=1/);
    expect(await failure("reversed.json")).toMatch(
      /reversed\.json at cases\[0\]\.to_turn: to_turn 2 is before from_turn 3/,
    );
    expect(await failure("broken.jsonl")).toMatch(/broken\.jsonl:2: not valid JSON/);
    expect(await failure("neither.json")).toContain('expected an array of cases or {"cases": [...]}');
    expect(await failure("missing.json")).toContain("cannot be read (ENOENT)");
  });
});
