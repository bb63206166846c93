import {
  type FsStore,
  intactView,
  listSessionRows,
  NotFoundError,
  SessionLog,
  sessionForest,
} from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { readSessionView, sessionShowText } from "../session/session-show.js";
import { sessionListText, sessionTreeText } from "../session/session-tree.js";
import { withStore } from "../session/with-store.js";

/** `podkit session list` */
export async function list(input: CommandInput, ctx: CommandContext): Promise<number> {
  return withStore(input, ctx, async (store) => {
    const rows = await listSessionRows(store, {
      onSkipped: ({ sessionId, problem }) =>
        ctx.io.stderr.write(
          `warning: session ${sessionId} left out: ${problem} (\`podkit session doctor\` reports and removes such debris)\n`,
        ),
    });
    if (input.values.json === true) {
      ctx.io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else if (rows.length === 0) {
      ctx.io.stdout.write("no sessions yet in this workspace (`podkit run` starts one)\n");
    } else {
      ctx.io.stdout.write(sessionListText(sessionForest(rows)));
    }
    return 0;
  });
}

/** `podkit session doctor [--fix]` */
export async function doctor(input: CommandInput, ctx: CommandContext): Promise<number> {
  const fix = input.values.fix === true;
  return withStore(input, ctx, async (store) => {
    const found: { sessionId: string; problem: string; removed: boolean }[] = [];
    await listSessionRows(store, { onSkipped: (skipped) => found.push({ ...skipped, removed: false }) });
    for (const debris of found) {
      // Only the filesystem store can hold a session without a segment (PostgreSQL derives sessions from them).
      const fs = store as Partial<Pick<FsStore, "removeSessionDebris">>;
      if (fix && fs.removeSessionDebris !== undefined)
        debris.removed = await fs.removeSessionDebris(debris.sessionId);
    }
    if (input.values.json === true) {
      ctx.io.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      return 0;
    }
    if (found.length === 0) {
      ctx.io.stdout.write("no debris: every session of the store has a readable segment\n");
      return 0;
    }
    for (const { sessionId, problem, removed } of found) {
      ctx.io.stdout.write(`session ${sessionId}: ${problem}${removed ? " — removed" : ""}\n`);
    }
    const left = found.filter((debris) => !debris.removed).length;
    if (left > 0 && !fix)
      ctx.io.stdout.write(`remove what has no segment at all with: podkit session doctor --fix\n`);
    else if (left > 0)
      ctx.io.stdout.write(
        `${left} left in place: they hold a segment (damaged) or are not on the filesystem; see \`podkit session show\`\n`,
      );
    return 0;
  });
}

/** `podkit session show <id>` */
export async function show(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = input.positionals[0] as string;
  return withStore(input, ctx, async (store) => {
    const view = await readSessionView(store, sessionId).catch((error) => throwMissing(error, sessionId));
    if (input.values.json === true) {
      // The same document as serve's GET /sessions/:id.
      ctx.io.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    } else {
      ctx.io.stdout.write(sessionShowText(view, view.segments));
      if (view.tree.children.length > 0) ctx.io.stdout.write(sessionTreeText(view.tree, sessionId));
    }
    return 0;
  });
}

/** `podkit session fork <id> [--at-turn N]` */
export async function fork(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = input.positionals[0] as string;
  const atTurnText = stringOption(input.values["at-turn"]);
  const atTurn = atTurnText === undefined ? undefined : Number(atTurnText);
  if (atTurn !== undefined && !(Number.isInteger(atTurn) && atTurn >= 0)) {
    throw new PodkitCliError(`--at-turn must be a turn number (0 or more), got "${atTurnText}"`, {
      hint: "`podkit session show <session>` lists the turns",
    });
  }
  return withStore(input, ctx, async (store) => {
    // A corrupt session can still be forked from the turns before its bad line.
    const source = (await intactView(store, sessionId).catch((error) => throwMissing(error, sessionId)))
      .store;
    const log = await SessionLog.fork(source, sessionId, atTurn === undefined ? {} : { atTurn });
    const forked = {
      sessionId: log.sessionId,
      segmentId: log.segmentId,
      from: sessionId,
      atTurn: log.state.turn,
    };
    if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(forked)}\n`);
    else {
      ctx.io.stdout.write(
        `forked ${sessionId} at turn ${forked.atTurn} into session ${forked.sessionId}\ncontinue it with: podkit resume ${forked.sessionId}\n`,
      );
    }
    return 0;
  });
}

/** Rethrows `error`, a missing session as the CLI's error saying where to look. */
function throwMissing(error: unknown, sessionId: string): never {
  if (NotFoundError.isInstance(error)) {
    throw new PodkitCliError(`no session ${sessionId} in this workspace`, {
      hint: "`podkit session list` shows this workspace's sessions",
      cause: error,
    });
  }
  throw error;
}
