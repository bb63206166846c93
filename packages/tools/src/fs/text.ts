/**
 * Bounds the builtin tools keep on their own output, below the worker's default 64 KiB cap, so a
 * result is cut where the tool can say how to continue rather than mid-line by the worker.
 */
export const OUTPUT_BUDGET_BYTES = 48 * 1024;
/** Longest line shown by read_file; longer lines are cut with a marker. */
export const MAX_LINE_CHARS = 2000;
/** Files larger than this are not read whole by read_file/edit_file (grep skips them). */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** How far into a file git looks for a NUL byte to call it binary. */
export const BINARY_PROBE_BYTES = 8192;

/** Git's rule: a NUL byte in the first 8 KiB means binary. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_PROBE_BYTES).indexOf(0) !== -1;
}

/** Splits text into lines without the final empty line a trailing newline would give. */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** `line` cut to `max` characters with a visible marker. */
export function cutLine(line: string, max = MAX_LINE_CHARS): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut at ${max} characters]`;
}

/** Collects lines until a byte budget is spent. */
export class BoundedLines {
  readonly lines: string[] = [];
  private bytes = 0;
  full = false;

  private readonly budget: number;

  constructor(budget?: number) {
    this.budget = budget ?? OUTPUT_BUDGET_BYTES;
  }

  /** Adds a line; false (and nothing added) once the budget would be exceeded. */
  push(line: string): boolean {
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (this.bytes + size > this.budget) {
      this.full = true;
      return false;
    }
    this.bytes += size;
    this.lines.push(line);
    return true;
  }

  text(): string {
    return this.lines.join("\n");
  }
}
