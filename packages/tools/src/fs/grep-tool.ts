import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { fsErrorMessage } from "./fs-error-message.js";
import { compileGlob } from "./glob-tool.js";
import { searchFiles } from "./grep-search.js";
import { compileLineMatcher, type LineMatcher } from "./line-matcher.js";
import { checkToolPath, type FsToolContext, refusedOutput } from "./scoped-path.js";

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
    readOnly: true,
    description:
      "Search file contents inside the scope with a regular expression (JavaScript syntax). Honours .gitignore, skips binary files and symlinks. Output lines are `path:line:text` (context lines use `-`).",
    inputSchema: input,
    async execute(args, toolCtx) {
      let matcher: LineMatcher;
      try {
        matcher = compileLineMatcher(args.pattern, args.case_insensitive === true);
      } catch (error) {
        return { summary: `invalid regular expression: ${(error as Error).message}`, is_error: true };
      }
      const root = await checkToolPath(ctx, args.path ?? ".", "read");
      if (!root.ok) return refusedOutput(root);
      const limit = args.limit ?? DEFAULT_LIMIT;
      let result: Awaited<ReturnType<typeof searchFiles>>;
      try {
        result = await searchFiles(ctx, root.path, {
          matcher,
          include: args.include && args.include.length > 0 ? compileGlob(args.include) : undefined,
          context: args.context ?? 0,
          limit,
          signal: toolCtx.signal,
        });
      } catch (error) {
        if (toolCtx.signal.aborted) throw error;
        return { summary: fsErrorMessage(error, root.shown), is_error: true };
      }
      const cut = result.limited
        ? ` (stopped at ${limit} matches; narrow the search or raise limit)`
        : result.truncated
          ? " (output cut at the size budget; narrow the search)"
          : "";
      return {
        summary: `${result.matches} match${result.matches === 1 ? "" : "es"} in ${result.files} file${result.files === 1 ? "" : "s"} under ${root.shown}${cut}${result.skipped.summary()}`,
        content: result.text,
      };
    },
  });
}
