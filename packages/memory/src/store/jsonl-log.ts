import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/** Appends one JSON record as a line (one small write; the newline commits it). */
export async function appendJsonLine(file: string, record: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${JSON.stringify(record)}\n`, "utf8");
}

/** Every complete line of a JSONL file that parses; a torn last line is not a record yet. */
export async function readJsonLines(file: string): Promise<unknown[]> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });
  const lines = text.split("\n");
  lines.pop();
  const out: unknown[] = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A log for people and reports: one damaged line must not hide the rest.
    }
  }
  return out;
}
