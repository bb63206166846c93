import { constants } from "node:fs";
import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { writeTracked } from "../tracking/tracked-write.js";
import { writeFileAtomic } from "./atomic-write.js";
import { openChecked } from "./checked-open.js";
import { fsErrorMessage, notRegular } from "./fs-error-message.js";
import { checkToolPath, type FsToolContext, refusedOutput } from "./scoped-path.js";
import { cutLine, looksBinary, MAX_FILE_BYTES } from "./text.js";

const input = z.strictObject({
  path: z.string().min(1).describe("File to edit, relative to the workspace or absolute"),
  old_string: z.string().min(1).describe("Exact text to replace (whitespace and indentation included)"),
  new_string: z.string().describe("Replacement text"),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one"),
});

/**
 * `edit_file`: exact text replacement inside the scope (write permission). Without `replace_all`
 * the old text must occur exactly once; zero or several matches change nothing and the result
 * says why, with the nearby text that did match so the model can correct itself.
 */
export function editFileTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "edit_file",
    description:
      "Replace exact text in a file inside the writable scope. old_string must match exactly once (add surrounding lines to make it unique) unless replace_all is true. Nothing changes when the match fails.",
    inputSchema: input,
    async execute(args) {
      if (args.old_string === args.new_string) {
        return { summary: "old_string and new_string are identical; nothing to change", is_error: true };
      }
      const target = await checkToolPath(ctx, args.path, "write");
      if (!target.ok) return refusedOutput(target);
      let text: string;
      let before: Buffer;
      try {
        const handle = await openChecked(target.path, constants.O_RDONLY, target.shown);
        try {
          const stat = await handle.stat();
          if (stat.isDirectory())
            return { summary: `"${target.shown}" is a directory; edit_file edits files`, is_error: true };
          if (!stat.isFile()) return { summary: notRegular(target.shown), is_error: true };
          if (stat.size > MAX_FILE_BYTES) {
            return {
              summary: `"${target.shown}" is larger than edit_file handles (${MAX_FILE_BYTES} bytes)`,
              is_error: true,
            };
          }
          const bytes = await handle.readFile();
          if (looksBinary(bytes))
            return {
              summary: `"${target.shown}" is a binary file; edit_file edits text only`,
              is_error: true,
            };
          text = bytes.toString("utf8");
          before = bytes;
        } finally {
          await handle.close();
        }
      } catch (error) {
        return { summary: fsErrorMessage(error, target.shown), is_error: true };
      }

      const positions = occurrences(text, args.old_string);
      if (positions.length === 0) {
        return {
          summary: `old_string was not found in ${target.shown}; the file is unchanged. ${nearbyText(text, args.old_string)}`,
          is_error: true,
        };
      }
      if (positions.length > 1 && !args.replace_all) {
        const lines = positions.slice(0, 10).map((at) => lineOf(text, at));
        return {
          summary: `old_string occurs ${positions.length} times in ${target.shown} (lines ${lines.join(", ")}${positions.length > 10 ? ", …" : ""}); the file is unchanged. Include more surrounding text to make it unique, or set replace_all to replace every occurrence.`,
          is_error: true,
        };
      }
      const updated = args.replace_all
        ? text.split(args.old_string).join(args.new_string)
        : text.slice(0, positions[0]) +
          args.new_string +
          text.slice((positions[0] ?? 0) + args.old_string.length);
      let tracked: Awaited<ReturnType<typeof writeTracked>>;
      try {
        const after = Buffer.from(updated, "utf8");
        tracked = await writeTracked(ctx.files, target.path, { before, after }, () =>
          writeFileAtomic(target.path, updated, target.shown),
        );
      } catch (error) {
        return { summary: fsErrorMessage(error, target.shown), is_error: true };
      }
      const count = positions.length;
      return {
        summary: `replaced ${count} occurrence${count === 1 ? "" : "s"} in ${target.shown} (line ${lineOf(text, positions[0] ?? 0)}${count > 1 ? ", …" : ""})`,
        ...tracked,
      };
    },
  });
}

function occurrences(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) out.push(at);
  return out;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * The text around the longest leading part of `needle` that the file does contain, so the model
 * sees where its copy diverged (usually whitespace or a stale line).
 */
function nearbyText(text: string, needle: string): string {
  let low = 0;
  let high = needle.length;
  // Binary search on the prefix length: containment of prefixes is monotone.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (text.includes(needle.slice(0, mid))) low = mid;
    else high = mid - 1;
  }
  const trimmed = needle.trimStart();
  if (low < Math.min(8, needle.length) && trimmed !== needle && text.includes(trimmed.slice(0, 8))) {
    return `Its text appears with different leading whitespace: ${excerpt(text, text.indexOf(trimmed.slice(0, 8)))}`;
  }
  if (low < Math.min(8, needle.length))
    return "No part of it appears in the file; read the file again before editing.";
  const at = text.indexOf(needle.slice(0, low));
  return `The first ${low} of its ${needle.length} characters match at line ${lineOf(text, at)}; the file there reads:\n${excerpt(text, at + low)}`;
}

function excerpt(text: string, index: number): string {
  const lines = text.split("\n");
  const line = lineOf(text, index);
  const from = Math.max(1, line - 2);
  const to = Math.min(lines.length, line + 3);
  const shown: string[] = [];
  for (let n = from; n <= to; n++)
    shown.push(`${String(n).padStart(6)}\t${cutLine(lines[n - 1] ?? "", 300)}`);
  return shown.join("\n");
}
