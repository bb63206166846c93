import { readFile } from "node:fs/promises";
import { z } from "zod";
import { EvalDatasetError } from "./errors.js";
import type { EvalCase } from "./eval-types.js";

const turnNumber = z.number().int().min(1);

const RecordedCaseSchema = z.strictObject({
  session: z.string().min(1),
  from_turn: turnNumber.optional(),
  to_turn: turnNumber.optional(),
  expected: z.unknown().optional(),
  name: z.string().optional(),
});

const InputCaseSchema = z.strictObject({
  input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  expected: z.unknown().optional(),
  name: z.string().optional(),
});

const CaseSchema = z.union([RecordedCaseSchema, InputCaseSchema]);

/**
 * Reads a dataset file: JSON (an array of cases, or `{"cases": [...]}`) or JSON Lines (`.jsonl`,
 * one case per line; blank lines skipped). A case is `{"session", "from_turn"?, "to_turn"?,
 * "expected"?, "name"?}` or `{"input": "…" | ["…", …], "expected"?, "name"?}`. Throws
 * `EvalDatasetError` naming the file, the line and the key of the first problem.
 */
export async function readEvalDataset(file: string): Promise<EvalCase[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new EvalDatasetError(
      { file },
      `cannot be read (${(cause as NodeJS.ErrnoException).code ?? cause})`,
      {
        cause,
        hint: "check the path given to --dataset",
      },
    );
  }
  if (file.endsWith(".jsonl")) {
    const cases: EvalCase[] = [];
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      cases.push(toCase(parseJson(line, file, index + 1), file, index + 1, ""));
    }
    return cases;
  }
  const parsed = parseJson(text, file);
  const list = Array.isArray(parsed)
    ? parsed
    : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { cases?: unknown }).cases)
      ? ((parsed as { cases: unknown[] }).cases as unknown[])
      : undefined;
  if (list === undefined)
    throw new EvalDatasetError({ file }, 'expected an array of cases or {"cases": [...]}');
  const prefix = Array.isArray(parsed) ? "" : "cases";
  return list.map((value, index) => toCase(value, file, undefined, `${prefix}[${index}]`));
}

function parseJson(text: string, file: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new EvalDatasetError(
      { file, ...(line === undefined ? {} : { line }) },
      `not valid JSON: ${(cause as Error).message}`,
      { cause },
    );
  }
}

function toCase(value: unknown, file: string, line: number | undefined, at: string): EvalCase {
  const result = CaseSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const recorded = RecordedCaseSchema.safeParse(value);
    // Name the problem of the shape the case was meant to have.
    const meant =
      typeof value === "object" && value !== null && "session" in value ? recorded.error?.issues[0] : issue;
    const path = [at, ...(meant?.path ?? []).map(String)].filter((p) => p !== "").join(".");
    throw new EvalDatasetError(
      { file, ...(line === undefined ? {} : { line }), key: path },
      meant?.message ?? "not a case",
    );
  }
  const data = result.data;
  if ("session" in data) {
    if (data.from_turn !== undefined && data.to_turn !== undefined && data.to_turn < data.from_turn) {
      throw new EvalDatasetError(
        { file, ...(line === undefined ? {} : { line }), key: [at, "to_turn"].filter(Boolean).join(".") },
        `to_turn ${data.to_turn} is before from_turn ${data.from_turn}`,
      );
    }
    return {
      sessionId: data.session,
      ...(data.from_turn === undefined ? {} : { fromTurn: data.from_turn }),
      ...(data.to_turn === undefined ? {} : { toTurn: data.to_turn }),
      ...(data.expected === undefined ? {} : { expected: data.expected }),
      ...(data.name === undefined ? {} : { name: data.name }),
    };
  }
  return {
    input: data.input,
    ...(data.expected === undefined ? {} : { expected: data.expected }),
    ...(data.name === undefined ? {} : { name: data.name }),
  };
}
