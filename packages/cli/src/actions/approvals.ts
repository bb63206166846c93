import { continueAfterAnswer } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import {
  type ApprovalRecord,
  answerApproval,
  approvalsAwaitedBy,
  isAnswerable,
  listApprovals,
  type Store,
  sessionHoldingCall,
} from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { openDispatcher } from "../dispatch/open-dispatcher.js";
import { PodkitCliError, UsageError } from "../errors.js";
import { approvalSubject, approveCommand, manifestArgument } from "../session/approvals.js";
import { withStore } from "../session/with-store.js";

/**
 * `podkit approve <session> [<call>] --allow|--deny [--reason "…"] [--by <name>]`: answers a call
 * of the session's tree (its own, or a sub-pod's its run waits on, answered from the root), then
 * does what the one continuation rule says (`continueAfterAnswer`): lists what is still awaited,
 * requeues the dispatched run that waited, or says which session to resume.
 */
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
    const holder = (await sessionHoldingCall(store, sessionId, callId)) ?? sessionId;
    const { approval } = await answerApproval(store, holder, callId, {
      decision: allow ? "allow" : "deny",
      ...(reason === undefined ? {} : { reason }),
      ...(by === undefined ? {} : { by }),
    });
    // Opened only when a dispatched run waits for this answer, and closed right after.
    let dispatcher: ReturnType<typeof openDispatcher> | undefined;
    const next = await continueAfterAnswer(store, holder, {
      dispatcher: () => {
        if (loaded === undefined) {
          // Dispatched runs live on PostgreSQL, which only a manifest selects.
          throw new PodkitCliError(
            `the run of session ${holder} was dispatched; its queue needs the pod's manifest`,
            {
              hint: `answer it again with --manifest <file> (the manifest whose [session] holds the dispatcher's database)`,
            },
          );
        }
        dispatcher ??= openDispatcher(loaded, ctx.io.env);
        return dispatcher;
      },
    }).finally(() => dispatcher?.then((opened) => opened.close()));
    const stillPending = next.kind === "wait" ? next.pending : [];
    const answer = approval.answer as NonNullable<ApprovalRecord["answer"]>;
    if (input.values.json === true) {
      ctx.io.stdout.write(
        `${JSON.stringify({
          sessionId: holder,
          callId,
          ...answer,
          pending: stillPending.map((a) => a.callId),
          next: next.kind,
          resume: next.kind === "resume" ? next.sessionId : null,
          requeued: next.kind === "requeued" ? next.runId : null,
        })}\n`,
      );
      return 0;
    }
    ctx.io.stdout.write(
      `${answer.decision === "allow" ? "allowed" : "denied"} ${approval.tool}(${approvalSubject(approval.arguments)}) ` +
        `[${callId}] of session ${holder}, by ${answer.by}\n`,
    );
    switch (next.kind) {
      case "wait":
        ctx.io.stdout.write(`${stillPending.length} call(s) the run waits on still await approval:\n`);
        for (const other of stillPending)
          ctx.io.stdout.write(`  ${pendingLine(next.sessionId, other, manifest)}\n`);
        break;
      case "requeued":
        ctx.io.stdout.write(
          `nothing else is pending; dispatched run ${next.runId} is queued again (\`podkit runs show ${next.runId}\`)\n`,
        );
        break;
      case "resume":
        ctx.io.stdout.write(
          `nothing else is pending; continue the run with: podkit resume ${next.sessionId}${manifestArgument(manifest)}\n`,
        );
        break;
      case "none":
        break;
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

/**
 * The calls a person may answer from session `sessionId`: those its run waits on (its own and its
 * sub-pods' at any depth), else its own pending calls; an unknown session is the store's `NotFoundError`.
 */
async function pendingOf(store: Store<Item>, sessionId: string): Promise<ApprovalRecord[]> {
  const awaited = await approvalsAwaitedBy(store, sessionId);
  if (awaited.length > 0) return awaited;
  const listing = await listApprovals(store, { sessionIds: [sessionId], pendingOnly: true });
  const unreadable = listing.unreadable[0];
  if (unreadable !== undefined) throw unreadable.error;
  return (listing.sessions[0]?.approvals ?? []).filter(isAnswerable);
}

/** One pending call: what it is, who asked and when, and the command that answers it. */
function pendingLine(sessionId: string, approval: ApprovalRecord, manifest: string | undefined): string {
  return (
    `${approval.callId}  ${approval.tool}(${approvalSubject(approval.arguments)})  asked by ${approval.askedBy} ` +
    `at ${new Date(approval.requestedAt).toISOString()}\n    answer: ${approveCommand(sessionId, approval.callId, manifest)}`
  );
}
