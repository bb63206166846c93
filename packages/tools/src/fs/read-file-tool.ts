import { constants } from "node:fs";
import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { openChecked } from "./checked-open.js";
import { fsErrorMessage, notRegular } from "./fs-error-message.js";
import { checkToolPath, type FsToolContext, refusedOutput } from "./scoped-path.js";
import { BoundedLines, cutLine, looksBinary, MAX_FILE_BYTES, splitLines } from "./text.js";

const DEFAULT_LIMIT = 2000;

const input = z.strictObject({
  path: z.string().min(1).describe("File to read, relative to the workspace or absolute"),
  offset: z.int().min(1).optional().describe("First line to show (1-based); default 1"),
  limit: z.int().min(1).max(10_000).optional().describe(`How many lines to show; default ${DEFAULT_LIMIT}`),
});

/** `read_file`: numbered lines of a text file inside the scope (read permission). */
export function readFileTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "read_file",
    readOnly: true,
    description:
      "Read a text file inside the scope. Returns numbered lines (like `cat -n`); use offset and limit to page through long files. Binary files are refused.",
    inputSchema: input,
    async execute(args) {
      const target = await checkToolPath(ctx, args.path, "read");
      if (!target.ok) return refusedOutput(target);
      let bytes: Buffer;
      try {
        const handle = await openChecked(target.path, constants.O_RDONLY, target.shown);
        try {
          const stat = await handle.stat();
          if (stat.isDirectory())
            return { summary: `"${target.shown}" is a directory; use glob to list it`, is_error: true };
          if (!stat.isFile()) return { summary: notRegular(target.shown), is_error: true };
          if (stat.size > MAX_FILE_BYTES) {
            return {
              summary: `"${target.shown}" is ${stat.size} bytes, more than read_file reads (${MAX_FILE_BYTES}); search it with grep instead`,
              is_error: true,
            };
          }
          bytes = await handle.readFile();
        } finally {
          await handle.close();
        }
      } catch (error) {
        return { summary: fsErrorMessage(error, target.shown), is_error: true };
      }
      if (looksBinary(bytes)) {
        return {
          summary: `"${target.shown}" is a binary file (${bytes.length} bytes, NUL bytes in its first 8 KiB); read_file shows text files only`,
          is_error: true,
        };
      }
      const lines = splitLines(bytes.toString("utf8"));
      const first = args.offset ?? 1;
      const last = Math.min(lines.length, first - 1 + (args.limit ?? DEFAULT_LIMIT));
      if (lines.length === 0) return { summary: `"${target.shown}" is empty`, content: "" };
      if (first > lines.length) {
        return {
          summary: `"${target.shown}" has ${lines.length} lines; offset ${first} is past the end`,
          is_error: true,
        };
      }
      const out = new BoundedLines(ctx.outputBudget?.("read_file"));
      let shownLast = first - 1;
      for (let n = first; n <= last; n++) {
        if (!out.push(`${String(n).padStart(6)}\t${cutLine(lines[n - 1] ?? "")}`)) break;
        shownLast = n;
      }
      const more =
        shownLast < lines.length
          ? `; ${lines.length - shownLast} more — continue with offset ${shownLast + 1}`
          : "";
      return {
        summary: `${target.shown}: lines ${first}-${shownLast} of ${lines.length}${more}`,
        content: out.text(),
      };
    },
  });
}
