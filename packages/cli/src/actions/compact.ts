import type { CommandContext, CommandInput } from "../commands/command.js";
import { jsonEventPrinter, textEventPrinter } from "../session/event-printer.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openPod } from "../session/open-pod.js";

/** `podkit compact <session>`: one manual compaction, with a progress line. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = input.positionals[0] as string;
  const loaded = await loadPodManifest(input, ctx);
  const json = input.values.json === true;
  const opened = await openPod(loaded, ctx, { sessionId });
  const printer = json ? jsonEventPrinter(ctx.io.stdout) : textEventPrinter(ctx.io.stdout);
  try {
    const outcome = await opened.pod.compact({ onEvent: (event) => printer.print(event) });
    if (json) ctx.io.stdout.write(`${JSON.stringify({ type: "compaction", sessionId, ...outcome })}\n`);
    else if (outcome.status === "skipped") {
      ctx.io.stdout.write(
        outcome.reason === "nothing_to_compact"
          ? "nothing to compact: the whole history fits in the retained part\n"
          : "nothing to compact: the session has no turns yet\n",
      );
    } else {
      ctx.io.stdout.write(`session ${sessionId} continues in segment ${outcome.toSegmentId}\n`);
    }
  } finally {
    await opened.close();
  }
  return 0;
}
