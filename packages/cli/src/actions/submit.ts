import { submitRun } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod } from "@podkit/pod";
import type { Store } from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { openDispatcher } from "../dispatch/open-dispatcher.js";
import { positiveInteger } from "../dispatch/options.js";
import { UsageError } from "../errors.js";
import type { CliIo } from "../io.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { cliPodOptions } from "../session/pod-options.js";

/** `podkit submit ["prompt"]` */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = stringOption(input.values.session);
  const resume = input.values.continue === true;
  if (resume && (sessionId === undefined || input.positionals.length > 0)) {
    throw new UsageError("--continue resumes an existing session without new input", {
      hint: "pass --session <id> and no prompt",
    });
  }
  const maxAttempts = positiveInteger(input.values["max-attempts"], "--max-attempts");
  const loaded = await loadPodManifest(input, ctx);
  const prompt = resume ? null : (input.positionals[0] ?? (await readPiped(ctx.io)));
  const dispatcher = await openDispatcher(loaded, ctx.io.env);
  const store = await openStore(loaded, ctx.io.env);
  try {
    const key = stringOption(input.values.key);
    const { run, created } = await submitRun(dispatcher, store, {
      pod: loaded.manifest.pod.name,
      session:
        sessionId === undefined ? { create: () => startSession(loaded, store, ctx) } : { id: sessionId },
      input: prompt,
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
    });
    if (input.values.json === true) {
      ctx.io.stdout.write(
        `${JSON.stringify({ run_id: run.runId, session_id: run.sessionId, state: run.state, created })}\n`,
      );
    } else {
      ctx.io.stdout.write(`${run.runId}\n`);
      if (!created)
        ctx.io.stderr.write(`note: run ${run.runId} was already submitted with this key (${run.state})\n`);
    }
    return 0;
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

/** A new session of the pod, its system prompt rendered here (tools listed, AGENTS.md read) once. */
async function startSession(
  loaded: LoadedManifest,
  store: Store<Item>,
  ctx: CommandContext,
): Promise<string> {
  const pod = await Pod.fromManifest(loaded, cliPodOptions(ctx, { store }));
  try {
    return await pod.startSession();
  } finally {
    await pod.close();
  }
}

/** The prompt from standard input when it is piped; a usage error on a terminal or without input. */
async function readPiped(io: CliIo): Promise<string> {
  const stdin = io.stdin;
  if (stdin === undefined || stdin.isTTY === true) {
    throw new UsageError("no prompt: give it as an argument or pipe it in", {
      hint: 'podkit submit "Review the diff." (or --continue --session <id> to resume)',
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") {
    throw new UsageError("no prompt: standard input was empty", { hint: 'podkit submit "Review the diff."' });
  }
  return text;
}
