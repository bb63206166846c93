import { checkPolicy, type PolicyCheckReport, type PolicyFinding } from "@podkit/pod";
import { CorruptEntryError, segmentOfFile } from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { corruptLogError } from "../session/corrupt-log.js";
import { oneLine } from "../session/event-printer.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openCommandStore } from "../session/session-manifest.js";
import { permissionModeOption } from "../session/turn-command.js";

/**
 * `podkit policy check <session>...`: shadow mode. Exits 1 when any recorded call would be denied
 * or asked about, like a linter that found something, so a script or CI step can gate on it.
 */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const sessionIds = input.positionals;
  const mode = permissionModeOption(stringOption(input.values.mode));
  // The manifest is the rules to check against (required); its [session] selects the store.
  const loaded = await loadPodManifest(input, ctx);
  const store = await openCommandStore(loaded, ctx);
  let report: PolicyCheckReport;
  try {
    report = await checkPolicy({
      loaded,
      store,
      sessionIds,
      ...(mode === undefined ? {} : { mode }),
      tree: input.values.tree === true,
      onWarning: (warning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
    });
  } catch (error) {
    if (!CorruptEntryError.isInstance(error)) throw error;
    for (const sessionId of sessionIds) {
      const holds = await segmentOfFile(store, sessionId, error.file).catch(() => undefined);
      if (holds !== undefined) throw await corruptLogError(error, store, sessionId);
    }
    throw error;
  } finally {
    await store.close();
  }
  if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.io.stdout.write(reportText(report));
  return report.findings.length > 0 ? 1 : 0;
}

/** One line per finding, a note per session left unchecked, then the summary line. */
function reportText(report: PolicyCheckReport): string {
  const lines = report.findings.map(findingLine);
  for (const session of report.sessions) {
    if (session.unchecked !== undefined)
      lines.push(
        `note: session ${session.sessionId} (role "${session.role}") not checked: ${session.unchecked}`,
      );
  }
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  const denied = report.findings.filter((finding) => finding.outcome === "deny").length;
  const asked = report.findings.length - denied;
  const checked = report.sessions.filter((session) => session.unchecked === undefined).length;
  lines.push(
    `policy check (mode "${report.mode}", ${count(report.rules, "rule")}): ${count(report.callsChecked, "call")} in ${count(checked, "session")} checked; ${denied} would be denied, ${asked} asked about`,
  );
  return `${lines.join("\n")}\n`;
}

/** `✗ deny bash({"command":"git push"}) [call] by <rule>: <reason> · session <id>` */
function findingLine(finding: PolicyFinding): string {
  const mark = finding.outcome === "deny" ? "✗" : "?";
  const by = finding.reason.includes(finding.rule) ? "" : ` by ${oneLine(finding.rule, 90)}`;
  return `${mark} ${finding.outcome} ${finding.tool}(${oneLine(finding.arguments, 80)}) [${finding.callId}]${by}: ${oneLine(finding.reason, 160)} · session ${finding.sessionId}`;
}
