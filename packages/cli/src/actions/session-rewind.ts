import { findWorkspace } from "@podkit/manifest";
import { type RewindFileReport, RewindRefusedError, type RewindReport, rewindSession } from "@podkit/pod";
import { NotFoundError } from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { PodkitCliError, UsageError } from "../errors.js";
import { withStore } from "../session/with-store.js";

const HINT =
  "podkit session rewind <session> --to-turn <n> (`podkit session show <session>` lists the turns)";

/** `podkit session rewind <id> --to-turn N [--files-only|--conversation-only] [--dry-run] [--force]` */
export async function rewind(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionId = input.positionals[0] as string;
  const toTurn = turnOption(stringOption(input.values["to-turn"]));
  const filesOnly = input.values["files-only"] === true;
  const conversationOnly = input.values["conversation-only"] === true;
  if (filesOnly && conversationOnly)
    throw new UsageError("give --files-only or --conversation-only, not both", { hint: HINT });
  const dryRun = input.values["dry-run"] === true;
  const json = input.values.json === true;
  return withStore(input, ctx, async (store, loaded) => {
    const workspace = loaded?.workspace ?? findWorkspace(ctx.env);
    let report: RewindReport;
    try {
      report = await rewindSession({
        store,
        sessionId,
        toTurn,
        workspace,
        filesOnly,
        conversationOnly,
        dryRun,
        force: input.values.force === true,
      });
    } catch (error) {
      if (NotFoundError.isInstance(error) && error.what === "session") {
        throw new PodkitCliError(`no session ${sessionId} in this workspace's store`, {
          hint: "`podkit session list` shows the sessions",
          errorKind: "not_found",
          cause: error,
        });
      }
      throw error;
    }
    if (report.recovered !== undefined) {
      ctx.io.stderr.write(
        report.recovered.outcome === "finished"
          ? `finished an interrupted rewind of session ${sessionId} to turn ${report.recovered.toTurn} first\n`
          : `undid an interrupted rewind of session ${sessionId} to turn ${report.recovered.toTurn} first (it had not committed; nothing of it was kept)\n`,
      );
    }
    if (json) ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.io.stdout.write(reportText(report));
    // A dry run that would be refused says so the way the rewind would, and exits as it would.
    if (report.refused !== undefined && report.refused.length > 0)
      throw new RewindRefusedError(sessionId, report.refused);
    if (!dryRun && !json && report.conversation.action !== "skipped")
      ctx.io.stderr.write(`continue it with: podkit resume ${sessionId}\n`);
    return 0;
  });
}

function turnOption(text: string | undefined): number {
  if (text === undefined)
    throw new UsageError("--to-turn is required: the last turn to keep", { hint: HINT });
  const turn = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(turn))
    throw new UsageError(`--to-turn must be a turn number (0 or more), got "${text}"`, { hint: HINT });
  return turn;
}

const VERB: Record<RewindFileReport["action"], [done: string, would: string]> = {
  write: ["restored ", "restore  "],
  delete: ["removed  ", "remove   "],
  unchanged: ["unchanged", "unchanged"],
};

function reportText(report: RewindReport): string {
  const dry = report.dryRun;
  const { conversation } = report;
  const lines = [`${dry ? "would rewind" : "rewound"} session ${report.sessionId} to turn ${report.toTurn}`];
  if (conversation.action === "fork") {
    lines.push(
      dry
        ? `conversation: would continue after turn ${report.toTurn} in a new segment forked from ${conversation.sourceSegmentId}`
        : `conversation: continues after turn ${report.toTurn} in segment ${conversation.headSegmentId} (forked from ${conversation.sourceSegmentId})`,
    );
  } else if (conversation.action === "unchanged") {
    lines.push(`conversation: already at turn ${report.toTurn}`);
  } else lines.push("conversation: left as it is (--files-only)");
  const changed = report.files.filter((file) => file.action !== "unchanged").length;
  if (report.files.length === 0) lines.push("files: none to restore");
  else {
    lines.push(
      `files: ${changed} ${dry ? "to restore or remove" : "restored or removed"}, ${report.files.length - changed} already right`,
    );
    for (const file of report.files) lines.push(`  ${VERB[file.action][dry ? 1 : 0]} ${file.path}`);
  }
  if (dry && (report.refused === undefined || report.refused.length === 0))
    lines.push("nothing was changed: run without --dry-run to do it");
  return `${lines.join("\n")}\n`;
}
