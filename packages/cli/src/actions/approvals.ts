import type { Item } from "@podkit/llm-worker";
import {
  type ApprovalRecord,
  answerApproval,
  isPendingApproval,
  listApprovals,
  type Store,
} from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { requeueAnsweredRun } from "../dispatch/requeue-answered.js";
import { PodkitCliError, UsageError } from "../errors.js";
import { approvalSubject, approveCommand, manifestArgument } from "../session/approvals.js";
import { rootSessionOf } from "../session/subpod-root.js";
import { withStore } from "../session/with-store.js";

/** `podkit approve <session> [<call>] --allow|--deny [--reason "…"] [--by <name>]` */
export async function approve(input: CommandInput, ctx: CommandContext): Promise<number> {
  const [sessionId, named] = input.positionals as [string, string | undefined];
  const manifest = stringOption(input.values.manifest);
  const hint = `answer with: podkit approve ${sessionId} <call> --allow (or --deny --reason "…")`;
  const allow = input.values.allow === true;
  const deny = input.values.deny === true;
  if (allow && deny) throw new UsageError("give either --allow or --deny, not both", { hint });
  return withStore(input, ctx, async (store, loaded) => {
    let callId = named;
    if (callId === undefined) {
      const pending = await pendingOf(store, sessionId);
      if (pending.length === 0) {
        throw new PodkitCliError(`session ${sessionId} has no tool call awaiting approval`, {
          hint: "`podkit approvals` lists the pending calls of every session",
        });
      }
      if (pending.length > 1) {
        ctx.io.stderr.write(`session ${sessionId} has ${pending.length} calls awaiting approval:\n`);
        for (const approval of pending)
          ctx.io.stderr.write(`  ${pendingLine(sessionId, approval, manifest)}\n`);
        throw new UsageError("name the call to answer", { hint });
      }
      callId = (pending[0] as ApprovalRecord).callId;
    }
    if (!allow && !deny) throw new UsageError("give --allow or --deny", { hint });
    const reason = stringOption(input.values.reason);
    const by = stringOption(input.values.by);
    const { approval, log } = await answerApproval(store, sessionId, callId, {
      decision: allow ? "allow" : "deny",
      ...(reason === undefined ? {} : { reason }),
      ...(by === undefined ? {} : { by }),
    });
    const stillPending = log.state.approvals.filter(isPendingApproval);
    const answer = approval.answer as NonNullable<ApprovalRecord["answer"]>;
    // A dispatched run waiting on these calls is queued again: a worker continues it.
    const requeued =
      stillPending.length === 0 && log.state.awaitingApproval
        ? await requeueAnsweredRun(loaded, ctx.io.env, log.state)
        : undefined;
    if (input.values.json === true) {
      ctx.io.stdout.write(
        `${JSON.stringify({ sessionId, callId, ...answer, pending: stillPending.map((a) => a.callId), requeued: requeued ?? null })}\n`,
      );
      return 0;
    }
    ctx.io.stdout.write(
      `${answer.decision === "allow" ? "allowed" : "denied"} ${approval.tool}(${approvalSubject(approval.arguments)}) ` +
        `[${callId}] of session ${sessionId}, by ${answer.by}\n`,
    );
    if (stillPending.length > 0) {
      ctx.io.stdout.write(`${stillPending.length} call(s) of this run still await approval:\n`);
      for (const other of stillPending) ctx.io.stdout.write(`  ${pendingLine(sessionId, other, manifest)}\n`);
    } else if (requeued !== undefined) {
      ctx.io.stdout.write(
        `nothing else is pending; dispatched run ${requeued} is queued again (\`podkit runs show ${requeued}\`)\n`,
      );
    } else if (log.state.awaitingApproval && log.state.parent !== undefined) {
      // A sub-pod runs only under its parent (its role's manifest, the parent's loan of scope).
      const { role } = log.state.parent;
      const rootId = await rootSessionOf(store, log.state.parent.session_id);
      ctx.io.stdout.write(
        `nothing else is pending; session ${sessionId} is a sub-pod (${role}): its parent continues it with send_pod, e.g. ` +
          `podkit resume ${rootId} "continue the ${role}"${manifestArgument(manifest)}\n`,
      );
    } else if (log.state.awaitingApproval) {
      ctx.io.stdout.write(
        `nothing else is pending; continue the run with: podkit resume ${sessionId}${manifestArgument(manifest)}\n`,
      );
    }
    return 0;
  });
}

/** `podkit approvals` */
export async function approvals(input: CommandInput, ctx: CommandContext): Promise<number> {
  const manifest = stringOption(input.values.manifest);
  return withStore(input, ctx, async (store) => {
    const listing = await listApprovals(store, { pendingOnly: true });
    for (const { sessionId, error } of listing.unreadable) {
      ctx.io.stderr.write(
        `warning: session ${sessionId} could not be read: ${(error as Error)?.message ?? error}\n`,
      );
    }
    if (input.values.json === true) {
      const rows = listing.sessions.flatMap(({ sessionId, approvals }) =>
        approvals.map(({ callId, tool, arguments: args, askedBy, podPath, requestedAt }) => ({
          sessionId,
          callId,
          tool,
          arguments: args,
          askedBy,
          podPath,
          requestedAt: new Date(requestedAt).toISOString(),
        })),
      );
      ctx.io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (listing.sessions.length === 0) {
      ctx.io.stdout.write("no tool call is awaiting approval\n");
      return 0;
    }
    for (const { sessionId, approvals: pending } of listing.sessions) {
      ctx.io.stdout.write(`session ${sessionId}\n`);
      for (const approval of pending)
        ctx.io.stdout.write(`  ${pendingLine(sessionId, approval, manifest)}\n`);
    }
    return 0;
  });
}

/** The session's pending calls; an unknown session is the store's `NotFoundError`. */
async function pendingOf(store: Store<Item>, sessionId: string): Promise<ApprovalRecord[]> {
  const listing = await listApprovals(store, { sessionIds: [sessionId], pendingOnly: true });
  const unreadable = listing.unreadable[0];
  if (unreadable !== undefined) throw unreadable.error;
  return listing.sessions[0]?.approvals ?? [];
}

/** One pending call: what it is, who asked and when, and the command that answers it. */
function pendingLine(sessionId: string, approval: ApprovalRecord, manifest: string | undefined): string {
  return (
    `${approval.callId}  ${approval.tool}(${approvalSubject(approval.arguments)})  asked by ${approval.askedBy} ` +
    `at ${new Date(approval.requestedAt).toISOString()}\n    answer: ${approveCommand(sessionId, approval.callId, manifest)}`
  );
}
