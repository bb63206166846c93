import { type BlobGarbageReport, collectBlobGarbage, DEFAULT_BLOB_GRACE_MS } from "@podkit/session-store";
import type { CommandContext, CommandInput } from "../commands/command.js";
import { withStore } from "../session/with-store.js";

/** `podkit store gc [--dry-run]` */
export async function gc(input: CommandInput, ctx: CommandContext): Promise<number> {
  const dryRun = input.values["dry-run"] === true;
  return withStore(input, ctx, async (store) => {
    let report: BlobGarbageReport;
    try {
      report = await collectBlobGarbage(store, { dryRun });
    } catch (error) {
      ctx.io.stderr.write("store gc: stopped before removing anything\n");
      throw error;
    }
    if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.io.stdout.write(reportText(report));
    return 0;
  });
}

function reportText({ removed, kept, debris, dryRun }: BlobGarbageReport): string {
  const grace = `${DEFAULT_BLOB_GRACE_MS / 3_600_000} hour`;
  const lines: string[] = [];
  if (removed.length === 0) {
    lines.push(`no blob to remove: every blob stored more than ${grace} ago is named by a session`);
  } else {
    lines.push(
      `${dryRun ? "would remove" : "removed"} ${removed.length} blob(s) no session names, stored more than ${grace} ago:`,
      ...removed.map((digest) => `  ${digest}`),
    );
  }
  if (kept > 0) lines.push(`kept ${kept} blob(s) stored more than ${grace} ago that sessions name`);
  if (debris.length > 0) {
    lines.push(
      `${dryRun ? "would clean" : "cleaned"} ${debris.length} leftover(s) of interrupted blob writes:`,
      ...debris.map((path) => `  ${path}`),
    );
  }
  if (dryRun && removed.length + debris.length > 0) lines.push("run without --dry-run to remove them");
  return `${lines.join("\n")}\n`;
}
