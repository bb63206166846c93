import { RunWorker, type RunWorkerEvent } from "@podkit/dispatch";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import type { PodOptions } from "@podkit/pod";
import { type CommandContext, type CommandInput, stringList } from "../commands/command.js";
import { openDispatcher } from "../dispatch/open-dispatcher.js";
import { positiveInteger } from "../dispatch/options.js";
import { PodkitCliError } from "../errors.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { cliPodOptions } from "../session/pod-options.js";

/** `podkit worker`: claims runs of its pods until Ctrl-C or SIGTERM drains it (a second one hands runs back). */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const manifests = await loadManifests(input, ctx);
  const concurrency = positiveInteger(input.values.concurrency, "--concurrency") ?? 1;
  const { io } = ctx;
  const json = input.values.json === true;
  const warn = (message: string) => io.stderr.write(`warning: ${message}\n`);
  const first = manifests[0] as LoadedManifest;
  const dispatcher = await openDispatcher(first, io.env, { concurrency, onWarning: warn });
  const store = await openStore(first, io.env);
  const worker = new RunWorker({
    dispatcher,
    store,
    manifests,
    concurrency,
    podOptions: (): PodOptions => cliPodOptions(ctx),
    // A JSON line carries when the worker did it (ISO time): a reader's own clock says only when it read it.
    onEvent: (event) =>
      io.stdout.write(
        json ? `${JSON.stringify({ at: new Date().toISOString(), ...event })}\n` : `${eventLine(event)}\n`,
      ),
  });
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals === 1) {
      io.stderr.write(
        "draining: runs in progress finish, nothing new is claimed (Ctrl-C again hands them back)\n",
      );
      worker.drain();
    } else {
      io.stderr.write("stopping: runs in progress are handed back to the queue\n");
      worker.stop();
    }
  };
  const unsubscribe = [io.onInterrupt?.(onSignal), io.onTerminate?.(onSignal)];
  try {
    io.stderr.write(
      `podkit worker: serving ${worker.pods.map((pod) => `"${pod}"`).join(", ")}, ${concurrency} at a time; Ctrl-C drains\n`,
    );
    await worker.start();
  } finally {
    for (const off of unsubscribe) off?.();
    await dispatcher.close();
    await store.close();
  }
  return signals > 1 ? 130 : 0;
}

async function loadManifests(input: CommandInput, ctx: CommandContext): Promise<LoadedManifest[]> {
  const files = stringList(input.values.manifest);
  const overlays = stringList(input.values.set);
  const manifests =
    files.length === 0
      ? [await loadPodManifest({ values: { set: overlays }, positionals: [] }, ctx)]
      : await Promise.all(files.map((file) => loadManifest({ file, overlays, env: ctx.env })));
  const first = manifests[0] as LoadedManifest;
  for (const other of manifests.slice(1)) {
    if (JSON.stringify(other.manifest.session) !== JSON.stringify(first.manifest.session)) {
      throw new PodkitCliError(
        `pods "${first.manifest.pod.name}" and "${other.manifest.pod.name}" select different session stores`,
        { hint: "one worker serves pods of one database: give them the same [session] table" },
      );
    }
  }
  return manifests;
}

/** One line per thing the worker did. */
export function eventLine(event: RunWorkerEvent): string {
  switch (event.type) {
    case "claimed":
      return `run ${event.runId}: attempt ${event.attempt} ${event.resumes ? "resumes" : "starts"} session ${event.sessionId}`;
    case "ended":
      return `run ${event.runId}: ${event.state}${event.result === undefined ? "" : ` (${event.result})`}`;
    case "failed":
      return `run ${event.runId}: failed: ${event.error.type}: ${event.error.message} (${event.retry ? "will be retried" : "dead-lettered"})`;
    case "lease_lost":
      return `run ${event.runId}: lease lost; another worker continues it`;
    case "handed_back":
      return `run ${event.runId}: handed back to the queue`;
    case "fired":
      return `schedule "${event.schedule}" of pod "${event.pod}": ${event.created ? "queued" : "already queued"} run ${event.runId}`;
    case "warning":
      return `warning: ${event.message}`;
  }
}
