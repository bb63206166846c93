import { mkdir, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { findWorkspace } from "@podkit/manifest";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";

const DEFAULT_MODEL = "anthropic/claude-sonnet-4-5";

/** `podkit init`: a commented `.podkit/manifest.toml` in the cwd; an existing one is never replaced. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  // `podkit init` works in the cwd (or the --workspace given), never in an ancestor's workspace:
  // it is the one command that creates `.podkit/`.
  const root = ctx.env.workspace === undefined ? ctx.env.cwd : findWorkspace(ctx.env);
  const name = stringOption(input.values.name) ?? podName(basename(root));
  const model = stringOption(input.values.model) ?? DEFAULT_MODEL;
  const { safeParseModelRef } = await import("@podkit/manifest");
  const ref = safeParseModelRef(model);
  if ("problem" in ref) {
    throw new PodkitCliError(`--model: ${ref.problem}`, {
      hint: "e.g. --model openai/gpt-5 or --model ollama/llama3.2",
    });
  }
  const dir = join(root, ".podkit");
  const file = join(dir, "manifest.toml");
  await mkdir(dir, { recursive: true });
  try {
    await writeFile(file, manifestText(name, model), { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new PodkitCliError(`${file} already exists; podkit init never overwrites a manifest`, {
        hint: "edit it, or see what it resolves to with `podkit manifest show`",
      });
    }
    throw error;
  }
  ctx.io.stdout.write(
    [
      `wrote ${file}`,
      `next: \`podkit prompt render\` shows the system prompt; \`podkit run\` starts a session`,
      "",
    ].join("\n"),
  );
  return 0;
}

/** A pod name from a directory name: lower case, letters, digits and dashes. */
function podName(dir: string): string {
  const name = dir
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return name === "" ? "pod" : name;
}

function manifestText(name: string, model: string): string {
  return `# podkit manifest of this workspace (written by \`podkit init\`).
# Every key, its type and default: docs/manifest.md. Check what it resolves to: podkit manifest show

[pod]
name = "${name}"

[model]
# "<provider>/<model id>"; providers: anthropic, openai, openai-chat, google, ollama, openai-compatible.
# The API key comes from the provider's variable (ANTHROPIC_API_KEY, OPENAI_API_KEY,
# GOOGLE_GENERATIVE_AI_API_KEY); ollama and openai-compatible servers need base_url instead.
ref = "${model}"
# base_url = "http://127.0.0.1:11434/v1"

[worker]
# The system prompt is a nunjucks template rendered once per session; the default includes the
# scope, the tools and AGENTS.md. Uncomment to write your own:
# system_prompt = """You work in {{ cwd }}. {{ scope.summary }}"""
max_turns = 50

# What the file tools may touch: paths are relative to this file's directory (.podkit/).
[[scope.allow]]
target = ".."
permission = "write"

# Keep podkit's own files (sessions, memory) away from the generic write tools.
[[scope.deny]]
target = "."
permission = "write"

[tools]
# bash runs in the OS sandbox built from the scope above (docs/sandbox.md); an interactive
# \`podkit run\` asks before each call.
bash = false
# confirm_writes = true   # also ask before write_file / edit_file

# [compaction]            # uncomment to compact long sessions into a summary
# threshold = 120000
`;
}
