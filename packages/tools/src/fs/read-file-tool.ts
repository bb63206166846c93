import { constants } from "node:fs";
import { basename } from "node:path";
import { defineTool, type SniffedMedia, sniffMedia, type Tool, type ToolOutput } from "@podkit/llm-worker";
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

/** `image/png 1200×800, 345 KB` or `application/pdf, 2.1 MB`. */
function describeMedia(media: SniffedMedia, bytes: number): string {
  const size =
    bytes < 1024 * 1024
      ? `${Math.max(1, Math.round(bytes / 1024))} KB`
      : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return media.width === undefined
    ? `${media.mediaType}, ${size}`
    : `${media.mediaType} ${media.width}×${media.height}, ${size}`;
}

/**
 * An image or a PDF, as media the model sees (docs/media.md): recognised by the file's own
 * signature, never by its name, so a `.png` holding text is read as text and a renamed PNG is an
 * image. The worker's media store fits it to the provider and keeps it as a blob.
 */
function mediaOutput(shown: string, bytes: Buffer, media: SniffedMedia): ToolOutput {
  return {
    summary: `${shown}: ${describeMedia(media, bytes.length)} (attached)`,
    media: [{ mediaType: media.mediaType, data: bytes, name: basename(shown) }],
  };
}

/** `read_file`: numbered lines of a text file inside the scope (read permission); images and PDFs as media. */
export function readFileTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "read_file",
    readOnly: true,
    description:
      "Read a file inside the scope. A text file comes back as numbered lines (like `cat -n`); use offset and limit to page through long files. An image (PNG, JPEG, GIF, WebP) or a PDF comes back as an attachment you can see. Other binary files are refused.",
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
      const media = sniffMedia(bytes);
      if (media !== undefined) return mediaOutput(target.shown, bytes, media);
      if (looksBinary(bytes)) {
        return {
          summary: `"${target.shown}" is a binary file (${bytes.length} bytes, NUL bytes in its first 8 KiB); read_file shows text files, images and PDFs only`,
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
