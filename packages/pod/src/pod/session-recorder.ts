import type { Item, ResponseCommit, UsageRecord, Worker } from "@podkit/llm-worker";
import type { EntryInput, SessionLog, SystemItem } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PodTrigger } from "./events.js";
import type { UsageLedger } from "./usage-ledger.js";

/** The `system_item` kinds the pod commits. */
export type SystemItemKind = "notification" | "interrupt" | "context" | "attachment";

/**
 * Why the turn before this one stopped before it ended, as its closing notes tell the model:
 * `person` — someone interrupted it (Ctrl-C, `pod.interrupt`, a cancelled run); `process_ended` —
 * the process running it ended (the log left the turn open); `moved` — the run moved to another
 * worker (a dispatcher's takeover). Each has its own catalog keys.
 */
export type InterruptCause = "person" | "process_ended" | "moved";

/** The catalog keys of the closing notes, per cause. */
const INTERRUPT_NOTES = {
  person: { summary: "interrupt_tool_result_summary", note: "interrupt_system_note" },
  process_ended: {
    summary: "interrupt_tool_result_summary_process_ended",
    note: "interrupt_system_note_process_ended",
  },
  moved: { summary: "interrupt_tool_result_summary_moved", note: "interrupt_system_note_moved" },
} as const;

interface SystemMark {
  kind: SystemItemKind;
  extra: Record<string, unknown>;
  onCommitted?: () => void;
}

/** A turn's `invoke` waiting to go out with the turn's first item. */
interface Opening {
  entry: EntryInput<Item>;
  onWritten: () => void;
}

/**
 * Turns what the worker commits into session-log entries. System items (notifications,
 * the interrupt note) are plain `system` messages to the worker; the pod marks the exact
 * objects it hands over, so the log records their kind while the model sees only `body`. It
 * owns the count of model output in the current turn (what decides a rollback), a user turn's
 * `invoke` until it is written with the turn's first item, and feeds the usage ledger from the
 * worker's usage callback.
 */
export class SessionRecorder {
  private readonly systemKinds = new WeakMap<object, SystemMark>();
  /** Items from the model (or its tools) committed since `startTurn`. */
  private modelOutput = 0;
  /** The current user turn's message is in the log. */
  private inputWritten = false;
  private opening: Opening | undefined;
  /** This process closed a turn the log left open (`closeCrashedTurn`); its notes are not yet written. */
  private closedCrashedTurn = false;
  /** Why the previous turn stopped, as the caller of the current run said (see `announceInterruptCause`). */
  private announcedCause: InterruptCause | undefined;

  constructor(
    private readonly logOf: () => SessionLog<Item> | undefined,
    private readonly usage: UsageLedger,
  ) {}

  /** The turn's own work starts (after its invoke and any interrupt closure): no model output yet. */
  startTurn(): void {
    this.modelOutput = 0;
  }

  /**
   * A user turn's `invoke` goes out in one write with the first item committed through
   * `onHistoryAppend` — the user's message (the worker's `run()` commits it before any request), or
   * the interrupt closure before it — instead of a write of its own. The turn starts (`onWritten`:
   * its `turn_start` is reported) once that write is durable, before the worker uses the item. A
   * turn without input writes its invoke itself (a resume may claim the session, and its first
   * entry may be an approval's).
   */
  openTurn(invoke: EntryInput<Item>, onWritten: () => void): void {
    this.opening = { entry: invoke, onWritten };
    this.inputWritten = false;
  }

  /** True once the current user turn's message was committed (see `openTurn`). */
  get userInputWritten(): boolean {
    return this.inputWritten;
  }

  /** The `invoke` of a turn that failed before it wrote anything (undefined once written): taken back. */
  takeUnwrittenOpening(): EntryInput<Item> | undefined {
    const opening = this.opening;
    this.opening = undefined;
    return opening?.entry;
  }

  /** True once the model (or a tool it called) committed anything since `startTurn`. */
  get hasModelOutput(): boolean {
    return this.modelOutput > 0;
  }

  /**
   * A `system` message item the log will record as `system_item{kind, ...extra}`; `onCommitted`
   * runs once its entry is written (e.g. the context block's key becomes the committed one).
   */
  systemMessage(
    kind: SystemItemKind,
    body: string,
    extra: Record<string, unknown> = {},
    onCommitted?: () => void,
  ): Item {
    const item: Item = { type: "message", role: "system", content: [{ type: "text", text: body }] };
    this.systemKinds.set(item, { kind, extra, ...(onCommitted === undefined ? {} : { onCommitted }) });
    return item;
  }

  entryFor(item: Item): EntryInput<Item> {
    const mark = this.systemKinds.get(item);
    if (mark !== undefined) {
      const body = item.type === "message" ? item.content.map((part) => part.text).join("") : "";
      return { kind: "system_item", item: { kind: mark.kind, body, ...mark.extra } as SystemItem };
    }
    if (item.type === "message" && item.role === "system" && item.media !== undefined) {
      // The message the worker commits to carry a batch's media (docs/media.md): an attachment.
      this.modelOutput += 1;
      const body = item.content.map((part) => part.text).join("");
      return { kind: "system_item", item: { kind: "attachment", body, media: item.media } as SystemItem };
    }
    if (item.type === "message" && item.role === "user") {
      this.inputWritten = true;
      return { kind: "user_input", text: item.content.map((part) => part.text).join("") };
    }
    this.modelOutput += 1;
    if (item.type === "tool_result") return { kind: "tool_result", item };
    return { kind: "assistant_item", item };
  }

  /** The worker's `onHistoryAppend`: the item is committed before the worker uses it. */
  readonly onHistoryAppend = async (item: Item): Promise<void> => {
    const entry = this.entryFor(item);
    if (this.opening === undefined) await this.require().append(entry);
    else await this.writeOpening([entry]);
    this.systemKinds.get(item)?.onCommitted?.();
  };

  /**
   * The worker's `onResponseCommit`: a model response's `llm_usage` (snake_case on disk) and its
   * items in one write (one lock check, one probe, one write instead of one per entry), then the
   * ledger. The worker uses none of them before the write ends.
   */
  readonly onResponseCommit = async ({ usage, items }: ResponseCommit): Promise<void> => {
    const entries = items.map((item) => this.entryFor(item));
    if (usage !== undefined) entries.unshift(usageEntry(usage));
    await this.require().appendMany(entries);
    if (usage !== undefined) this.usage.record(usage);
  };

  /** The turn's `invoke` and `entries` in one write; the turn has started once it is durable. */
  private async writeOpening(entries: EntryInput<Item>[]): Promise<void> {
    const opening = this.opening as Opening;
    this.opening = undefined;
    try {
      await this.require().appendMany([opening.entry, ...entries]);
    } catch (error) {
      // Not written: the turn's failure is recorded with its invoke (see takeUnwrittenOpening).
      this.opening = opening;
      throw error;
    }
    opening.onWritten();
  }

  /**
   * The run about to start knows why the previous turn stopped (undefined: it does not, and the
   * log decides); set for every run, so it never outlives the run it was given for.
   */
  announceInterruptCause(cause: InterruptCause | undefined): void {
    this.announcedCause = cause;
  }

  /**
   * Orphan tool calls get the catalog's interrupt summary, then the interrupt note is committed,
   * in its variant for what follows it (the user's message, a notification, or the resumed work).
   * Both say why the turn stopped: as the run's caller announced it, else `process_ended` when this
   * process closed a turn the log left open, else `person`.
   */
  async recordInterrupt(worker: Worker, catalog: PromptCatalog, trigger: PodTrigger): Promise<void> {
    const cause = this.announcedCause ?? (this.closedCrashedTurn ? "process_ended" : "person");
    const keys = INTERRUPT_NOTES[cause];
    await worker.closeUnansweredToolCalls(catalog.render(keys.summary, {}));
    await worker.append([this.systemMessage("interrupt", catalog.render(keys.note, { trigger }))]);
    this.closedCrashedTurn = false;
  }

  /**
   * A turn the previous process never closed (it crashed) is closed before anything else. When it
   * died waiting for an approval — an open call its own approver never answered, so its batch
   * never ran (answers from outside may have come since) — it is closed as `awaiting_approval`:
   * nothing ran, and `resume()` goes on once every call is answered. That close claims the
   * session (`SessionBusyError` if another process wrote first).
   */
  async closeCrashedTurn(log: SessionLog<Item>): Promise<boolean> {
    if (log.state.inFlight == null) return false;
    if (log.state.approvals.some((approval) => !approval.closed && approval.answer?.inRun !== true)) {
      await log.append(
        { kind: "run_completed", result: "awaiting_approval", interrupted: true },
        { ifUnchanged: true },
      );
      return true;
    }
    await log.append({
      kind: "run_errored",
      message: "the process ended during this turn",
      interrupted: true,
    });
    this.closedCrashedTurn = true;
    return false;
  }

  private require(): SessionLog<Item> {
    const log = this.logOf();
    // The run prelude creates the session head before the worker can commit anything.
    if (log === undefined) throw new Error("internal: no session head before the first commit");
    return log;
  }
}

/** The `llm_usage` entry of one model call (snake_case on disk). */
function usageEntry(usage: UsageRecord): EntryInput<Item> {
  return {
    kind: "llm_usage",
    history_len: usage.historyLen,
    input_tokens: usage.inputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    output_tokens: usage.outputTokens,
    ...(usage.reasoningTokens === undefined ? {} : { reasoning_tokens: usage.reasoningTokens }),
  } as EntryInput<Item>;
}
