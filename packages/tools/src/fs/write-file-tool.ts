import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { writeTracked } from "../tracking/tracked-write.js";
import { writeFileAtomic } from "./atomic-write.js";
import { fsErrorMessage } from "./fs-error-message.js";
import { checkToolPath, type FsToolContext, refusedOutput } from "./scoped-path.js";

const input = z.strictObject({
  path: z.string().min(1).describe("File to write, relative to the workspace or absolute"),
  content: z.string().describe("The complete new content of the file"),
});

/** `write_file`: creates or replaces a file inside the scope (write permission), atomically. */
export function writeFileTool(ctx: FsToolContext): Tool<z.infer<typeof input>> {
  return defineTool({
    name: "write_file",
    description:
      "Create or overwrite a file inside the writable scope with the given content (parent directories are created). The file is replaced atomically. Prefer edit_file for changes to an existing file.",
    inputSchema: input,
    async execute(args) {
      const target = await checkToolPath(ctx, args.path, "write");
      if (!target.ok) return refusedOutput(target);
      const after = Buffer.from(args.content, "utf8");
      let tracked: Awaited<ReturnType<typeof writeTracked>>;
      try {
        tracked = await writeTracked(ctx.files, target.path, { after }, () =>
          writeFileAtomic(target.path, args.content, target.shown),
        );
      } catch (error) {
        return { summary: fsErrorMessage(error, target.shown), is_error: true };
      }
      return { summary: `wrote ${after.length} bytes to ${target.shown}`, ...tracked };
    },
  });
}
