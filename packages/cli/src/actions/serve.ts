import type { Dispatcher } from "@podkit/dispatch";
import type { CommandContext, CommandInput } from "../commands/command.js";
import { stringList, stringOption } from "../commands/command.js";
import { openDispatcher } from "../dispatch/open-dispatcher.js";
import { PodkitCliError } from "../errors.js";
import { checkApiKey, loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { readServeTokensFile } from "../session/serve-tokens-file.js";
import { servedPods } from "../session/served-pods.js";

/** `podkit serve`: runs until Ctrl-C (SIGINT), then closes the server, its pods and the store. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  const portText = stringOption(input.values.port) ?? "4111";
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port > 65535) {
    throw new PodkitCliError(`--port must be a port number (0 to 65535), got "${portText}"`, {
      hint: "e.g. --port 4111 (0 picks a free port)",
    });
  }
  const tokensFile = stringOption(input.values["tokens-file"]) ?? io.env.PODKIT_SERVE_TOKENS_FILE;
  const tokens =
    tokensFile === undefined || tokensFile === ""
      ? undefined
      : await readServeTokensFile(tokensFile, io.cwd, (message) => io.stderr.write(`warning: ${message}\n`));
  const loaded = await loadPodManifest(input, ctx);
  checkApiKey(loaded, io.env);
  const { startServer } = await import("@podkit/serve");
  const store = await openStore(loaded, io.env);
  let server: Awaited<ReturnType<typeof startServer>>;
  // Dispatched runs live on the PostgreSQL store's database: an answer that completes what one
  // waits for requeues it there (opened once, on first need, closed with the server).
  let dispatcher: Promise<Dispatcher> | undefined;
  const openRunDispatcher = () => {
    dispatcher ??= openDispatcher(loaded, io.env);
    return dispatcher;
  };
  try {
    server = await startServer({
      store,
      pods: servedPods(loaded, ctx, { yes: input.values.yes === true }),
      workspace: loaded.workspace,
      host: stringOption(input.values.host) ?? "127.0.0.1",
      port,
      token: io.env.PODKIT_SERVE_TOKEN,
      ...(tokens === undefined ? {} : { tokens }),
      corsOrigins: stringList(input.values["cors-origin"]),
      ...(loaded.manifest.session.store === "postgres" ? { dispatcher: openRunDispatcher } : {}),
      onWarning: (message) => io.stderr.write(`warning: ${message}\n`),
      onUnexpectedError: (error) =>
        io.stderr.write(
          `error: internal error: ${ctx.debug ? ((error as Error).stack ?? error) : (error as Error).message}\n`,
        ),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const where = loaded.manifest.session.store === "postgres" ? "PostgreSQL" : loaded.workspace;
  io.stdout.write(
    `podkit serve: listening on ${server.url} (sessions of pod "${loaded.manifest.pod.name}" in ${where})\n`,
  );
  io.stdout.write(`open ${server.url}/ for the session viewer · Ctrl-C stops\n`);
  await new Promise<void>((resolve) => {
    const unsubscribe = io.onInterrupt?.(() => {
      unsubscribe?.();
      resolve();
    });
    if (unsubscribe === undefined) resolve();
  });
  io.stderr.write("podkit serve: stopping (runs in progress are interrupted)\n");
  try {
    await server.close();
  } finally {
    await dispatcher?.then(
      (d) => d.close(),
      () => undefined,
    );
    await store.close();
  }
  return 0;
}
