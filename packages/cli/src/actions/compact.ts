import type { CommandContext, CommandInput } from "../commands/command.js";
import { jsonEventPrinter, textEventPrinter } from "../session/event-printer.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { type OpenedPod, openPod } from "../session/open-pod.js";
import { startTelemetry } from "../telemetry/index.js";

/** `podkit compact <session>`: one manual compaction, with a progress line. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = input.positionals[0] as string;
  const loaded = await loadPodManifest(input, ctx);
  const json = input.values.json === true;
  // Only with OTEL_EXPORTER_OTLP_ENDPOINT set: the compaction is exported as its own trace.
  const telemetry = await startTelemetry(ctx.io.env, (message) =>
    ctx.io.stderr.write(`warning: ${message}\n`),
  );
  let opened: OpenedPod;
  try {
    opened = await openPod(loaded, ctx, {
      sessionId,
      ...(telemetry.pod === undefined ? {} : { telemetry: telemetry.pod }),
    });
  } catch (error) {
    await telemetry.shutdown();
    throw error;
  }
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
    try {
      await opened.close();
    } finally {
      await telemetry.shutdown();
    }
  }
  return 0;
}
