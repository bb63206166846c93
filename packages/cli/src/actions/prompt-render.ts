import type { CommandContext, CommandInput } from "../commands/command.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { unreadableAgentsMd } from "../session/open-pod.js";
import { cliPodOptions } from "../session/pod-options.js";

/** `podkit prompt render`: the system prompt a new session would get; no model, no key, no session. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadPodManifest(input, ctx);
  const { Pod } = await import("@podkit/pod");
  const problems: { file: string; message: string }[] = [];
  const pod = await Pod.fromManifest(
    loaded,
    cliPodOptions(ctx, {
      // Memory adds context items after the system prompt, never to it: not needed to render it.
      attachMemory: false,
      onWarning: (warning) => {
        if (warning.code === "agents_md.unreadable") problems.push(warning);
        else ctx.io.stderr.write(`warning: ${warning.message}\n`);
      },
    }),
  );
  try {
    const prompt = await pod.renderSystemPrompt();
    const problem = problems[0];
    if (problem !== undefined) throw unreadableAgentsMd(problem);
    ctx.io.stdout.write(prompt.endsWith("\n") ? prompt : `${prompt}\n`);
  } finally {
    await pod.close();
  }
  return 0;
}
