import { stat } from "node:fs/promises";
import { defineTool, type Tool } from "@podkit/llm-worker";
import picomatch from "picomatch";
import { z } from "zod";
import { fsErrorMessage } from "./fs-error-message.js";
import { checkToolPath, type FsToolContext, refusedOutput, shownPath } from "./scoped-path.js";
import { SkippedPaths } from "./skipped-paths.js";
import { BoundedLines } from "./text.js";
import { walkTree } from "./walk-tree.js";

const DEFAULT_LIMIT = 500;

const input = z.strictObject({
  pattern: z.string().min(1).describe('Glob relative to path, e.g. "**/*.ts" or "src/*.{js,mjs}"'),
  path: z.string().min(1).optional().describe("Directory to search; default the workspace"),
  limit: z.int().min(1).max(5000).optional().describe(`Most paths to return; default ${DEFAULT_LIMIT}`),
});

/** `glob`: files under a readable directory matching a glob (picomatch), `.gitignore` respected. */
export function globTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "glob",
    readOnly: true,
    description:
      "List files inside the scope whose path (relative to `path`) matches a glob pattern. Honours .gitignore; does not follow symlinks. Returns workspace-relative paths, sorted.",
    inputSchema: input,
    async execute(args, toolCtx) {
      const root = await checkToolPath(ctx, args.path ?? ".", "read");
      if (!root.ok) return refusedOutput(root);
      const matches = compileGlob(args.pattern);
      const limit = args.limit ?? DEFAULT_LIMIT;
      const out = new BoundedLines(ctx.outputBudget?.("glob"));
      const skipped = new SkippedPaths();
      let found = 0;
      try {
        if (!(await stat(root.path)).isDirectory()) {
          return {
            summary: `"${root.shown}" is not a directory; glob lists the files under a directory`,
            is_error: true,
          };
        }
        const walk = walkTree(root.path, {
          scope: ctx.scope,
          stopAt: ctx.workspace,
          signal: toolCtx.signal,
          onUnreadable: (dir, code) => skipped.add(code, shownPath(ctx, dir)),
        });
        collect: for await (const { files } of walk) {
          for (const file of files) {
            if (!matches(file.rel)) continue;
            found++;
            if (found > limit || !out.push(shownPath(ctx, file.path))) break collect;
          }
        }
      } catch (error) {
        if (toolCtx.signal.aborted) throw error;
        return { summary: fsErrorMessage(error, root.shown), is_error: true };
      }
      const cut = found > limit || out.full;
      return {
        summary: `${out.lines.length} file${out.lines.length === 1 ? "" : "s"} matching ${JSON.stringify(args.pattern)} under ${root.shown}${cut ? " (more exist; narrow the pattern or raise limit)" : ""}${skipped.summary()}`,
        content: out.text(),
      };
    },
  });
}

/**
 * A matcher for paths relative to the search root. A pattern without `/` matches the base name
 * at any depth (`*.ts` finds `src/a.ts`), as in `.gitignore` and most search tools.
 */
export function compileGlob(pattern: string | readonly string[]): (rel: string) => boolean {
  const patterns = typeof pattern === "string" ? [pattern] : [...pattern];
  const matchers = patterns.map((p) => picomatch(p, { dot: true, basename: !p.includes("/") }));
  return (rel) => matchers.some((m) => m(rel));
}
