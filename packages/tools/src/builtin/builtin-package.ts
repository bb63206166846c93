import type { Tool, ToolFactory } from "@podkit/llm-worker";
import { BUILTIN_TOOL_NAMES, READ_TOOLS, TOOLS_DEFAULTS } from "@podkit/manifest";
import { z } from "zod";
import { bashTool } from "../bash/bash-tool.js";
import { PodkitFiles } from "../containment/podkit-files.js";
import { editFileTool } from "../fs/edit-file-tool.js";
import { globTool } from "../fs/glob-tool.js";
import { grepTool } from "../fs/grep-tool.js";
import { readFileTool } from "../fs/read-file-tool.js";
import type { FsToolContext } from "../fs/scoped-path.js";
import { OUTPUT_BUDGET_BYTES } from "../fs/text.js";
import { writeFileTool } from "../fs/write-file-tool.js";
import { definePodkitToolPackage } from "../package/tool-package.js";

/** The name the builtin package goes by in warnings and errors. */
export const BUILTIN_PACKAGE_NAME = "@podkit/tools";

/**
 * Options of the builtin package: the `[tools]` keys that concern it (the loader passes them),
 * plus variables bash must never see (the model's key variable).
 */
export const builtinOptionsSchema = z.strictObject({
  builtin: z.array(z.enum(BUILTIN_TOOL_NAMES)).default([...READ_TOOLS]),
  bash: z.boolean().default(TOOLS_DEFAULTS.bash),
  bash_env: z.array(z.string()).default([]),
  bash_timeout_ms: z.int().min(1).default(TOOLS_DEFAULTS.bash_timeout_ms),
  bash_max_timeout_ms: z.int().min(1).default(TOOLS_DEFAULTS.bash_max_timeout_ms),
  remove_env: z.array(z.string()).default([]),
  /** podkit's own directories (`podkitPaths`), which the writing file tools refuse whatever the scope grants. */
  podkit_paths: z.array(z.string()).default([]),
  /** `[worker.tool_output]`: the tools keep their output under these caps. */
  tool_output: z
    .object({ default_max_bytes: z.int().min(1), per_tool: z.record(z.string(), z.int().min(1)).default({}) })
    .optional(),
});

export type BuiltinToolOptions = z.input<typeof builtinOptionsSchema>;

const FS_TOOLS: Record<(typeof BUILTIN_TOOL_NAMES)[number], (ctx: FsToolContext) => Tool> = {
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  glob: globTool,
  grep: grepTool,
};

/**
 * podkit's own tools, written against the same interface as any third-party package: the
 * scoped filesystem tools named in `options.builtin`, and `bash` when `options.bash` is true.
 */
export const builtinToolPackage = definePodkitToolPackage({
  name: BUILTIN_PACKAGE_NAME,
  async tools(ctx) {
    const parsed = builtinOptionsSchema.safeParse(ctx.options);
    if (!parsed.success)
      throw new Error(`invalid options for ${BUILTIN_PACKAGE_NAME}: ${parsed.error.message}`);
    const options = parsed.data;
    const caps = options.tool_output;
    // File tracking, when the pod has it on (`[tools] track_files`, docs/rewind.md).
    const files = ctx.files;
    // Room for the summary line the worker counts in the same cap.
    const outputBudget = (tool: string) =>
      Math.max(
        1024,
        Math.min(OUTPUT_BUDGET_BYTES, (caps?.per_tool[tool] ?? caps?.default_max_bytes ?? Infinity) - 512),
      );
    const fsContext: FsToolContext = {
      scope: ctx.scope,
      workspace: ctx.workspace,
      outputBudget,
      podkitFiles: await PodkitFiles.of(options.podkit_paths),
      ...(files === undefined ? {} : { files }),
    };
    const factories: ToolFactory[] = options.builtin.map((name) => () => FS_TOOLS[name](fsContext));
    if (options.bash) {
      // The description says how the command is contained, so it waits for the sandbox's probe.
      factories.push(async () => {
        return bashTool({
          workspace: ctx.workspace,
          timeoutMs: options.bash_timeout_ms,
          maxTimeoutMs: options.bash_max_timeout_ms,
          allowEnv: options.bash_env,
          removeEnv: options.remove_env,
          env: ctx.env,
          maxOutputBytes: Math.min(30_000, outputBudget("bash")),
          sandbox: ctx.sandbox,
          probe: await ctx.sandbox.probe(),
          ...(files === undefined ? {} : { files }),
        });
      });
    }
    return factories;
  },
});
