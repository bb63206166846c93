import { readFile } from "node:fs/promises";
import { z } from "zod";
import { EvalDatasetError } from "./errors.js";
import type { InternalCase } from "./internal-prompts-types.js";

const InternalCaseSchema = z.strictObject({
  session: z.string().min(1),
  segment: z.string().min(1).optional(),
  checklist: z.array(z.string().min(1)).optional(),
  name: z.string().optional(),
});

const HINT =
  'each case is {"session": "<id>", "segment"?: "<id>", "checklist"?: ["text that must survive", …], "name"?: "…"}; docs/evals.md';

/**
 * Reads the cases of an internal eval: JSON (an array, or `{"cases": [...]}`) or JSON Lines
 * (`.jsonl`, one case per line, blank lines skipped), each `{"session", "segment"?, "checklist"?,
 * "name"?}`. Throws `EvalDatasetError` naming the file, the line and the key of the first problem.
 */
export async function readInternalEvalDataset(file: string): Promise<InternalCase[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? String(cause);
    throw new EvalDatasetError({ file }, `cannot be read (${code})`, {
      cause,
      hint: "check the path given to --dataset",
    });
  }
  if (file.endsWith(".jsonl")) {
    const cases: InternalCase[] = [];
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() !== "") cases.push(toCase(parse(line, file, index + 1), file, index + 1, ""));
    }
    return cases;
  }
  const parsed = parse(text, file);
  const list = Array.isArray(parsed) ? parsed : (parsed as { cases?: unknown } | null)?.cases;
  if (!Array.isArray(list)) {
    throw new EvalDatasetError({ file }, 'expected an array of cases or {"cases": [...]}', { hint: HINT });
  }
  const prefix = Array.isArray(parsed) ? "" : "cases";
  return list.map((value, index) => toCase(value, file, undefined, `${prefix}[${index}]`));
}

function parse(text: string, file: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new EvalDatasetError(
      { file, ...(line === undefined ? {} : { line }) },
      `not valid JSON: ${(cause as Error).message}`,
      { cause, hint: HINT },
    );
  }
}

function toCase(value: unknown, file: string, line: number | undefined, at: string): InternalCase {
  const result = InternalCaseSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = [at, ...(issue?.path ?? []).map(String)].filter((p) => p !== "").join(".");
    throw new EvalDatasetError(
      { file, ...(line === undefined ? {} : { line }), key },
      issue?.message ?? "not a case",
      { hint: HINT },
    );
  }
  const { session, segment, checklist, name } = result.data;
  return {
    sessionId: session,
    ...(segment === undefined ? {} : { segmentId: segment }),
    ...(checklist === undefined ? {} : { checklist }),
    ...(name === undefined ? {} : { name }),
  };
}
