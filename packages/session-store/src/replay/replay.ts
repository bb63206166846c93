import type { Entry, EntryOf, HistorySourceEntry, Lineage, MinimalItem } from "../entry/entry-schema.js";
import { ReplayError } from "../errors.js";
import type { ApprovalRecord, HistorySource, SessionState } from "./session-state.js";

/**
 * How one `extension` domain folds its entries into its state: `state` is the domain's state
 * so far (undefined before its first entry), `payload` the new entry's. Must be pure.
 */
export type ExtensionFold = (state: unknown, payload: unknown) => unknown;

/** How `user_input` and `system_item` entries become history items. */
export interface ReplayOptions<TItem = MinimalItem> {
  /** Default: `{type:"message", role:"user", content:[{type:"text", text}]}` (the llm-worker item). */
  userMessage?: (entry: EntryOf<"user_input", TItem>) => TItem;
  /**
   * Default: a `system` message whose single text part is the exact `body` the model saw, with the
   * item's `media` when it has a list of them (an attachment carrying tool results' media).
   */
  systemMessage?: (entry: EntryOf<"system_item", TItem>) => TItem;
  /**
   * Folds of `extension` domains, by domain name. A domain without one keeps its latest payload.
   * Register a fold where a domain's entries add up (e.g. a task list appending items).
   */
  extensionFolds?: Readonly<Record<string, ExtensionFold>>;
}

/** The on-disk form of history sources (`segment_start.history_sources`). */
export function historySourcesToEntry(sources: readonly HistorySource[]): HistorySourceEntry[] {
  return sources.map((source) =>
    source.from === "system_item"
      ? { index: source.index, system_item: source.item }
      : { index: source.index, segments: source.segments },
  );
}

function historySourcesFromEntry(entries: readonly HistorySourceEntry[] | undefined): HistorySource[] {
  return (entries ?? []).map((entry) =>
    "system_item" in entry
      ? { index: entry.index, from: "system_item", item: entry.system_item }
      : { index: entry.index, from: "user_input", segments: entry.segments },
  );
}

function textMessage(role: "user" | "system", text: string): MinimalItem {
  return { type: "message", role, content: [{ type: "text", text }] };
}

/**
 * A system item as the message the model saw: its body, and — for an attachment carrying tool
 * results' media (docs/media.md) — the media, by digest, as the worker committed them.
 */
function systemMessage(item: EntryOf<"system_item">["item"]): MinimalItem {
  const message = textMessage("system", item.body);
  return Array.isArray(item.media) ? { ...message, media: item.media } : message;
}

function lineageRef(lineage: Lineage | undefined) {
  return lineage === undefined ? null : { segmentId: lineage.segment_id, atTurn: lineage.at_turn };
}

/**
 * Everything needed to rebuild a fold's state in a new segment: the base state that goes into
 * `segment_start`, the verbatim entries that carry usage, extension and run state, and the
 * entries of a turn still in flight (replayed after its `invoke`, so a rollback of that turn
 * still works in the new segment).
 */
export interface ForkSnapshot<TItem> {
  systemPrompt: string | null;
  config: Record<string, unknown>;
  history: TItem[];
  historySources: HistorySource[];
  turn: number;
  carried: Entry<TItem>[];
}

interface BaseSnapshot<TItem> {
  config: Record<string, unknown>;
  historyLen: number;
  sourcesLen: number;
  turn: number;
  usageCount: number;
  extensions: EntryOf<"extension", TItem>[][];
  terminal: EntryOf<"run_completed" | "run_errored", TItem> | null;
}

/**
 * The incremental fold behind `replay`. A writer keeps one alive so its state always equals a
 * replay of what it wrote, and can move that state into a new segment (`forkSnapshot`).
 */
export class ReplayFold<TItem = MinimalItem> {
  readonly state: SessionState<TItem>;
  private readonly usageEntries: EntryOf<"llm_usage", TItem>[] = [];
  /** Per domain, the entries that rebuild its state: the latest one, or all of them for a folded domain. */
  private readonly extensionEntries = new Map<string, EntryOf<"extension", TItem>[]>();
  private readonly extensionFolds: Readonly<Record<string, ExtensionFold>>;
  private lastTerminal: EntryOf<"run_completed" | "run_errored", TItem> | null = null;
  /** The state just before the open turn's `invoke`, and the entries since (invoke included). */
  private openTurn: { base: BaseSnapshot<TItem>; entries: Entry<TItem>[] } | null = null;
  private runInterrupted = false;
  /** Per call id, its approval record and the entries that rebuild it. */
  private readonly approvalsByCall = new Map<
    string,
    { record: ApprovalRecord; entries: EntryOf<"approval_requested" | "approval_answered", TItem>[] }
  >();
  private approvalEntrySeen = false;
  private readonly userMessage: (entry: EntryOf<"user_input", TItem>) => TItem;
  private readonly systemMessage: (entry: EntryOf<"system_item", TItem>) => TItem;

  constructor(start: EntryOf<"segment_start", TItem>, options: ReplayOptions<TItem> = {}) {
    this.userMessage = options.userMessage ?? ((e) => textMessage("user", e.text) as TItem);
    this.systemMessage = options.systemMessage ?? ((e) => systemMessage(e.item) as TItem);
    this.extensionFolds = options.extensionFolds ?? {};
    const lineage = start.compacted_from ?? start.forked_from;
    this.state = {
      sessionId: start.session_id,
      segmentId: start.segment_id,
      formatVersion: start.v,
      systemPrompt: start.system_prompt,
      config: start.config,
      history: [...start.history],
      historySources: historySourcesFromEntry(start.history_sources),
      turn: lineage?.at_turn ?? 0,
      interrupted: false,
      inFlight: null,
      usage: [],
      extensions: new Map(),
      lineage: { forkedFrom: lineageRef(start.forked_from), compactedFrom: lineageRef(start.compacted_from) },
      approvals: [],
      awaitingApproval: false,
      ...(start.parent === undefined ? {} : { parent: start.parent }),
      entryCount: 1,
    };
  }

  /** Folds one entry (the entry following the last one folded). */
  apply(entry: Entry<TItem>): void {
    const state = this.state;
    const index = state.entryCount;
    if (entry.kind === "invoke") this.openTurn = { base: this.baseSnapshot(), entries: [] };
    this.openTurn?.entries.push(entry);
    switch (entry.kind) {
      case "segment_start":
        throw new ReplayError({
          entryIndex: index,
          reason: "a second segment_start; a segment has exactly one",
        });
      case "invoke":
        state.inFlight = { trigger: entry.trigger, entryIndex: index };
        state.awaitingApproval = false;
        break;
      case "user_input":
        state.history.push(this.userMessage(entry));
        if (entry.segments !== undefined) {
          state.historySources.push({
            index: state.history.length - 1,
            from: "user_input",
            segments: entry.segments,
          });
        }
        break;
      case "assistant_item":
        state.history.push(entry.item);
        break;
      case "tool_result": {
        state.history.push(entry.item);
        const callId = (entry.item as { call_id?: unknown }).call_id;
        const approval = typeof callId === "string" ? this.approvalsByCall.get(callId) : undefined;
        if (approval !== undefined) approval.record.closed = true;
        break;
      }
      case "system_item":
        state.history.push(this.systemMessage(entry));
        state.historySources.push({ index: state.history.length - 1, from: "system_item", item: entry.item });
        break;
      case "turn_end":
        state.turn = entry.turn;
        break;
      case "llm_usage":
        this.usageEntries.push(entry);
        state.usage.push(
          entry.reasoning_tokens === undefined
            ? {
                historyLen: entry.history_len,
                inputTokens: entry.input_tokens,
                cacheReadTokens: entry.cache_read_tokens,
                cacheWriteTokens: entry.cache_write_tokens,
                outputTokens: entry.output_tokens,
              }
            : {
                historyLen: entry.history_len,
                inputTokens: entry.input_tokens,
                cacheReadTokens: entry.cache_read_tokens,
                cacheWriteTokens: entry.cache_write_tokens,
                outputTokens: entry.output_tokens,
                reasoningTokens: entry.reasoning_tokens,
              },
        );
        break;
      case "run_completed":
      case "run_errored":
        this.lastTerminal = entry;
        this.openTurn = null;
        this.runInterrupted = entry.interrupted;
        state.inFlight = null;
        state.awaitingApproval = entry.kind === "run_completed" && entry.result === "awaiting_approval";
        break;
      case "approval_requested":
        this.approvalEntrySeen = true;
        this.requestApproval(entry);
        break;
      case "approval_answered":
        this.approvalEntrySeen = true;
        this.answerApproval(entry);
        break;
      case "config_changed":
        state.config = entry.config;
        break;
      case "extension": {
        const fold = Object.hasOwn(this.extensionFolds, entry.domain)
          ? this.extensionFolds[entry.domain]
          : undefined;
        const kept = fold === undefined ? [] : (this.extensionEntries.get(entry.domain) ?? []);
        this.extensionEntries.delete(entry.domain);
        this.extensionEntries.set(entry.domain, [...kept, entry]);
        const next =
          fold === undefined ? entry.payload : fold(state.extensions.get(entry.domain), entry.payload);
        state.extensions.delete(entry.domain);
        state.extensions.set(entry.domain, next);
        break;
      }
      default:
        throw new ReplayError({
          entryIndex: index,
          reason: `unknown kind ${JSON.stringify((entry as { kind: unknown }).kind)}`,
        });
    }
    state.interrupted = this.runInterrupted || state.inFlight !== null;
    state.entryCount = index + 1;
  }

  /**
   * The segment holds an approval entry (read by its writer: a v1 or v2 segment main wrote
   * approvals into takes more of them in its own version, see `format-versions.ts`).
   */
  get holdsApprovalEntries(): boolean {
    return this.approvalEntrySeen;
  }

  /**
   * The state to continue from in a new segment such that replaying that segment reproduces
   * this fold's state exactly (apart from ids, lineage and entry indices).
   */
  forkSnapshot(): ForkSnapshot<TItem> {
    const base = this.openTurn?.base ?? this.baseSnapshot();
    const carried: Entry<TItem>[] = [
      ...this.usageEntries.slice(0, base.usageCount),
      ...base.extensions.flat(),
    ];
    // Approvals of calls still without a result go along (those inside the open turn come with it).
    const inOpenTurn = new Set<Entry<TItem>>(this.openTurn?.entries ?? []);
    for (const { record, entries } of this.approvalsByCall.values()) {
      if (!record.closed) carried.push(...entries.filter((entry) => !inOpenTurn.has(entry)));
    }
    if (base.terminal !== null) carried.push(base.terminal);
    if (this.openTurn !== null) carried.push(...this.openTurn.entries);
    return {
      systemPrompt: this.state.systemPrompt,
      config: base.config,
      history: this.state.history.slice(0, base.historyLen),
      historySources: this.state.historySources.slice(0, base.sourcesLen),
      turn: base.turn,
      carried,
    };
  }

  /** A second request for the same call is ignored: the first one is what was asked. */
  private requestApproval(entry: EntryOf<"approval_requested", TItem>): void {
    if (this.approvalsByCall.has(entry.call_id)) return;
    const record: ApprovalRecord = {
      callId: entry.call_id,
      tool: entry.tool,
      arguments: entry.arguments,
      podPath: [...entry.pod_path],
      askedBy: entry.asked_by,
      ...(entry.reason === undefined ? {} : { reason: entry.reason }),
      ...(entry.child_session_id === undefined ? {} : { childSessionId: entry.child_session_id }),
      requestedAt: entry.ts,
      closed: false,
    };
    this.approvalsByCall.set(entry.call_id, { record, entries: [entry] });
    this.state.approvals.push(record);
  }

  /** The first answer counts; an answer without a request (a damaged log) answers nothing. */
  private answerApproval(entry: EntryOf<"approval_answered", TItem>): void {
    const approval = this.approvalsByCall.get(entry.call_id);
    if (approval === undefined || approval.record.answer !== undefined) return;
    approval.record.answer = {
      decision: entry.decision,
      ...(entry.reason === undefined ? {} : { reason: entry.reason }),
      by: entry.by,
      at: entry.ts,
      ...(entry.in_run === true ? { inRun: true } : {}),
    };
    approval.entries.push(entry);
  }

  private baseSnapshot(): BaseSnapshot<TItem> {
    return {
      config: this.state.config,
      historyLen: this.state.history.length,
      sourcesLen: this.state.historySources.length,
      turn: this.state.turn,
      usageCount: this.usageEntries.length,
      extensions: [...this.extensionEntries.values()],
      terminal: this.lastTerminal,
    };
  }
}

/** Starts a fold from the first entry, which must be the segment's `segment_start`. */
export function startFold<TItem>(
  first: Entry<TItem> | undefined,
  options?: ReplayOptions<TItem>,
): ReplayFold<TItem> {
  if (first === undefined)
    throw new ReplayError({ entryIndex: 0, reason: "no entries; a segment starts with segment_start" });
  if (first.kind !== "segment_start") {
    throw new ReplayError({ entryIndex: 0, reason: `expected segment_start, found "${first.kind}"` });
  }
  return new ReplayFold(first, options);
}

/**
 * Folds one segment's entries into the state a restore resumes from: verbatim system prompt,
 * config, history (items exactly as stored, provider metadata included), turn count,
 * interrupted flag (also set when an `invoke` has no terminal entry after it), usage records,
 * the origin of system and segmented user items, extension state per domain (latest payload,
 * or the domain's registered fold), and lineage. Pure: it reads nothing but `entries`.
 */
export function replay<TItem = MinimalItem>(
  entries: Iterable<Entry<TItem>>,
  options?: ReplayOptions<TItem>,
): SessionState<TItem> {
  let fold: ReplayFold<TItem> | undefined;
  for (const entry of entries) {
    if (fold === undefined) fold = startFold(entry, options);
    else fold.apply(entry);
  }
  if (fold === undefined) return startFold<TItem>(undefined).state;
  return fold.state;
}
