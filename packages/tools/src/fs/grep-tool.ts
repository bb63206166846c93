import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { compileGlob } from "./glob-tool.js";
import { searchFiles } from "./grep-search.js";
import { checkToolPath, type FsToolContext } from "./scoped-path.js";

const DEFAULT_LIMIT = 200;

const input = z.strictObject({
  pattern: z.string().min(1).describe("JavaScript regular expression, matched against each line"),
  path: z.string().min(1).optional().describe("File or directory to search; default the workspace"),
  include: z
    .array(z.string().min(1))
    .optional()
    .describe('Globs a file must match, e.g. ["*.ts", "docs/**"]'),
  context: z.int().min(0).max(20).optional().describe("Lines of context before and after each match"),
  case_insensitive: z.boolean().optional(),
  limit: z
    .int()
    .min(1)
    .max(5000)
    .optional()
    .describe(`Most matching lines to return; default ${DEFAULT_LIMIT}`),
});

/** `grep`: regex search over readable files (`.gitignore` respected), results bounded. */
export function grepTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "grep",
    description:
      "Search file contents inside the scope with a regular expression (JavaScript syntax). Honours .gitignore, skips binary files and symlinks. Output lines are `path:line:text` (context lines use `-`).",
    inputSchema: input,
    async execute(args, toolCtx) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, args.case_insensitive ? "i" : "");
      } catch (error) {
        return { summary: `invalid regular expression: ${(error as Error).message}`, is_error: true };
      }
      const root = await checkToolPath(ctx, args.path ?? ".", "read");
      if (!root.ok) return { summary: root.message, is_error: true };
      const limit = args.limit ?? DEFAULT_LIMIT;
      const result = await searchFiles(ctx, root.path, {
        regex,
        include: args.include && args.include.length > 0 ? compileGlob(args.include) : undefined,
        context: args.context ?? 0,
        limit,
        signal: toolCtx.signal,
      });
      const cut = result.limited
        ? ` (stopped at ${limit} matches; narrow the search or raise limit)`
        : result.truncated
          ? " (output cut at the size budget; narrow the search)"
          : "";
      return {
        summary: `${result.matches} match${result.matches === 1 ? "" : "es"} in ${result.files} file${result.files === 1 ? "" : "s"} under ${root.shown}${cut}`,
        content: result.text,
      };
    },
  });
}
