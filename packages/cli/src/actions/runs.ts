import type { Dispatcher, RunInfo, RunState } from "@podkit/dispatch";
import { UnknownRunError } from "@podkit/dispatch";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { openDispatcher } from "../dispatch/open-dispatcher.js";
import { positiveInteger } from "../dispatch/options.js";
import { runLogLines } from "../dispatch/run-log.js";
import { UsageError } from "../errors.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";

const STATES: readonly RunState[] = [
  "queued",
  "running",
  "retrying",
  "completed",
  "awaiting_approval",
  "cancelled",
  "dead",
];

async function withDispatcher<T>(
  input: CommandInput,
  ctx: CommandContext,
  use: (dispatcher: Dispatcher) => Promise<T>,
): Promise<T> {
  const loaded = await loadPodManifest(input, ctx);
  const dispatcher = await openDispatcher(loaded, ctx.io.env);
  try {
    return await use(dispatcher);
  } finally {
    await dispatcher.close();
  }
}

/** `podkit runs list` */
export async function list(input: CommandInput, ctx: CommandContext): Promise<number> {
  const states = stringList(input.values.state);
  for (const state of states) {
    if (!(STATES as readonly string[]).includes(state)) {
      throw new UsageError(`unknown run state "${state}"`, { hint: `one of ${STATES.join(", ")}` });
    }
  }
  const sessionId = stringOption(input.values.session);
  const limit = positiveInteger(input.values.limit, "--limit") ?? 50;
  return withDispatcher(input, ctx, async (dispatcher) => {
    const runs = await dispatcher.list({
      limit,
      ...(states.length === 0 ? {} : { states: states as RunState[] }),
      ...(sessionId === undefined ? {} : { sessionId }),
    });
    if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else if (runs.length === 0) ctx.io.stdout.write("no runs (`podkit submit` queues one)\n");
    else for (const run of runs) ctx.io.stdout.write(`${summaryLine(run)}\n`);
    return 0;
  });
}

/** `podkit runs show <run>`: the queue's view, then the run's entries of the session log. */
export async function show(input: CommandInput, ctx: CommandContext): Promise<number> {
  const runId = input.positionals[0] as string;
  const loaded = await loadPodManifest(input, ctx);
  const dispatcher = await openDispatcher(loaded, ctx.io.env);
  try {
    const run = await dispatcher.show(runId);
    if (run === undefined) throw new UnknownRunError(runId);
    const store = await openStore(loaded, ctx.io.env);
    let log: string[];
    try {
      log = await runLogLines(store, run);
    } finally {
      await store.close();
    }
    if (input.values.json === true) {
      ctx.io.stdout.write(`${JSON.stringify({ ...run, log }, null, 2)}\n`);
      return 0;
    }
    const lines = [
      `run        ${run.runId}`,
      `pod        ${run.pod}`,
      `session    ${run.sessionId}`,
      `state      ${run.state}${run.result === undefined ? "" : ` (${run.result})`}`,
      `attempts   ${run.attempts} of ${run.maxAttempts}`,
      `submitted  ${run.submittedAt.toISOString()}`,
      ...(run.startedAt === undefined ? [] : [`started    ${run.startedAt.toISOString()}`]),
      ...(run.endedAt === undefined ? [] : [`ended      ${run.endedAt.toISOString()}`]),
      ...(run.error === undefined ? [] : [`error      ${run.error.type}: ${run.error.message}`]),
      // The typed answer (docs/output.md) in full, one line of JSON.
      ...(run.output === undefined ? [] : [`output     ${JSON.stringify(run.output)}`]),
      "log:",
      ...log.map((line) => `  ${line}`),
    ];
    ctx.io.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    await dispatcher.close();
  }
}

/** `podkit runs cancel <run>` */
export async function cancel(input: CommandInput, ctx: CommandContext): Promise<number> {
  const runId = input.positionals[0] as string;
  return withDispatcher(input, ctx, async (dispatcher) => {
    const run = await dispatcher.cancel(runId);
    if (run === undefined) throw new UnknownRunError(runId);
    if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(run)}\n`);
    else ctx.io.stdout.write(`${summaryLine(run)}\n`);
    return 0;
  });
}

function summaryLine(run: RunInfo): string {
  const detail = run.result ?? (run.error === undefined ? "" : `${run.error.type}: ${run.error.message}`);
  return `${run.runId}  ${run.state.padEnd(17)}  ${run.submittedAt.toISOString()}  attempts ${run.attempts}/${run.maxAttempts}  session ${run.sessionId}${detail === "" ? "" : `  ${detail}`}`;
}
