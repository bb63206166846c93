import { type Entry, type EntryInput, FORMAT_VERSION, type MinimalItem } from "../entry/entry-schema.js";
import { formatIntroducing, isLegacyApprovalEntry } from "../entry/format-versions.js";
import { NotFoundError, SessionBusyError, SessionStoreError, SessionStoreUsageError } from "../errors.js";
import { newId } from "../ids.js";
import { type ReplayFold, type ReplayOptions, replay, startFold } from "../replay/replay.js";
import type { HistorySource, SessionState } from "../replay/session-state.js";
import { entriesThroughTurn } from "../replay/turn-cut.js";
import { type AppendOutcome, appendEither, type SegmentRef, type Store } from "../store/store.js";
import { GroupCommit } from "./group-commit.js";
import { collect, type SegmentHead, segmentStart } from "./segment-start.js";
import { describeSession, type SegmentInfo } from "./session-head.js";
import type {
  AppendResult,
  DriftFork,
  SegmentInit,
  SessionLogOptions,
  WriteCallOptions,
} from "./session-log-types.js";

export type {
  AppendResult,
  DriftFork,
  SegmentInit,
  SessionLogOptions,
  WriteCallOptions,
} from "./session-log-types.js";

const MAX_DRIFT_FORKS = 3;

/**
 * A writer on one session: the append-only log a pod persists every step to. It keeps the
 * replayed state of what it wrote (`state`) and the entry count it knows; an append whose
 * segment no longer holds that count (someone else wrote) does not touch that segment but
 * continues in a new one with `forked_from`, carrying the state over exactly. Writes are
 * asynchronous and run one at a time in call order, so callers may fire appends without
 * awaiting each one; appends that queue up behind a write in flight share the next write (group
 * commit). Every append is committed when its promise resolves.
 */
export class SessionLog<TItem = MinimalItem> {
  private fold: ReplayFold<TItem>;
  private currentRef: SegmentRef;
  private readonly writes: GroupCommit<TItem>;
  /**
   * Live segments of the session other than the one this log continues, as found when it was
   * opened by `SessionLog.open` (empty otherwise): branches a restore did not pick (see the head rule).
   */
  otherBranches: readonly SegmentInfo[] = [];
  private readonly now: () => number;
  private readonly newId: () => string;

  private constructor(
    private readonly store: Store<TItem>,
    fold: ReplayFold<TItem>,
    private readonly options: SessionLogOptions<TItem>,
  ) {
    this.fold = fold;
    this.currentRef = SessionLog.refOf(fold);
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? newId;
    this.writes = new GroupCommit((entries, signal) => this.write(entries, signal));
  }

  // Frozen so a store may cache what it derives from it (FsStore caches the file path).
  private static refOf(fold: ReplayFold<unknown>): SegmentRef {
    return Object.freeze({ sessionId: fold.state.sessionId, segmentId: fold.state.segmentId });
  }

  private moveTo(fold: ReplayFold<TItem>): void {
    this.fold = fold;
    this.currentRef = SessionLog.refOf(fold);
  }

  /** Starts a new session with its first segment (the `segment_start` is written atomically). */
  static create<TItem = MinimalItem>(
    store: Store<TItem>,
    init: SegmentInit<TItem>,
    options: SessionLogOptions<TItem> = {},
  ): Promise<SessionLog<TItem>> {
    const ids = options.newId ?? newId;
    const sessionId = ids();
    return SessionLog.startSegment(
      store,
      { sessionId, segmentId: ids(), ...init, history: init.history ?? [] },
      options,
    );
  }

  /**
   * Restores a session: replays its head segment (the live branch written to last; its
   * `segment_start` carries the full history) and continues appending to it. The session's
   * other live branches are listed in `otherBranches`, never dropped silently.
   */
  static async open<TItem = MinimalItem>(
    store: Store<TItem>,
    sessionId: string,
    options: SessionLogOptions<TItem> = {},
  ): Promise<SessionLog<TItem>> {
    const overview = await describeSession(store, sessionId);
    const log = await SessionLog.openSegment(
      store,
      { sessionId, segmentId: overview.head.segmentId },
      options,
    );
    log.otherBranches = overview.otherBranches;
    return log;
  }

  /** Opens one specific segment for reading and appending. */
  static async openSegment<TItem = MinimalItem>(
    store: Store<TItem>,
    ref: SegmentRef,
    options: SessionLogOptions<TItem> = {},
  ): Promise<SessionLog<TItem>> {
    let fold: ReplayFold<TItem> | undefined;
    const apply = (entry: Entry<TItem>) => {
      if (fold === undefined) fold = startFold(entry, options);
      else fold.apply(entry);
    };
    // One await per batch: a per-entry await was a tenth of a restore.
    for await (const batch of store.readFrom(ref, 0)) for (const entry of batch) apply(entry);
    if (fold === undefined) fold = startFold<TItem>(undefined);
    if (fold.state.segmentId !== ref.segmentId || fold.state.sessionId !== ref.sessionId) {
      throw new SessionStoreUsageError(
        `segment file ${ref.sessionId}/${ref.segmentId} starts with ids ${fold.state.sessionId}/${fold.state.segmentId}; ` +
          "it was copied or renamed — restore it under its original ids",
      );
    }
    return new SessionLog(store, fold, options);
  }

  /**
   * Forks a whole session into a new session, cut at `atTurn` of its head segment (default:
   * its current turn, so an unfinished turn is left behind). The source is not modified.
   */
  static async fork<TItem = MinimalItem>(
    store: Store<TItem>,
    sessionId: string,
    options: SessionLogOptions<TItem> & { atTurn?: number } = {},
  ): Promise<SessionLog<TItem>> {
    const { head } = await describeSession(store, sessionId);
    const ids = options.newId ?? newId;
    return SessionLog.cutInto(
      store,
      { sessionId, segmentId: head.segmentId },
      options.atTurn,
      ids(),
      options,
    );
  }

  /**
   * Starts a new segment in the same session holding the state of `segmentId` at the end of
   * turn `turn`; usage records and extension state start empty. The source is not modified.
   */
  static async forkAt<TItem = MinimalItem>(
    store: Store<TItem>,
    segmentId: string,
    turn: number,
    options: SessionLogOptions<TItem> = {},
  ): Promise<SessionLog<TItem>> {
    const sessionId = await store.lookupSessionOf(segmentId);
    if (sessionId === undefined)
      throw new NotFoundError({ what: "segment", id: segmentId, where: "its store" });
    return SessionLog.cutInto(store, { sessionId, segmentId }, turn, sessionId, options);
  }

  /** A new segment in `targetSessionId` holding `source`'s state at the end of `atTurn` (default: its current turn). */
  private static async cutInto<TItem>(
    store: Store<TItem>,
    source: SegmentRef,
    atTurn: number | undefined,
    targetSessionId: string,
    options: SessionLogOptions<TItem>,
  ): Promise<SessionLog<TItem>> {
    const entries = await collect(store.readAll(source));
    const turn = atTurn ?? replay(entries, options).turn;
    const keep = entriesThroughTurn(entries, turn, source.segmentId);
    const fold = startFold(entries[0], options);
    for (let i = 1; i < keep; i++) fold.apply(entries[i] as Entry<TItem>);
    const ids = options.newId ?? newId;
    return SessionLog.startSegment(
      store,
      {
        sessionId: targetSessionId,
        segmentId: ids(),
        systemPrompt: fold.state.systemPrompt,
        config: fold.state.config,
        history: fold.state.history,
        historySources: fold.state.historySources,
        forkedFrom: { segment_id: source.segmentId, at_turn: turn },
      },
      options,
    );
  }

  private static async startSegment<TItem>(
    store: Store<TItem>,
    head: SegmentHead<TItem>,
    options: SessionLogOptions<TItem>,
    carried: readonly Entry<TItem>[] = [],
  ): Promise<SessionLog<TItem>> {
    const entries = [segmentStart(head, (options.now ?? Date.now)()), ...carried];
    await store.createSegment({ sessionId: head.sessionId, segmentId: head.segmentId }, entries);
    const fold = startFold(entries[0], options);
    for (const entry of carried) fold.apply(entry);
    return new SessionLog(store, fold, options);
  }

  get sessionId(): string {
    return this.fold.state.sessionId;
  }

  get segmentId(): string {
    return this.fold.state.segmentId;
  }

  /** The segment this log writes to. */
  get ref(): SegmentRef {
    return this.currentRef;
  }

  /** The live replayed state (read-only view; it changes as entries are appended). */
  get state(): Readonly<SessionState<TItem>> {
    return this.fold.state;
  }

  /** Entries in the current segment, `segment_start` included. */
  get entryCount(): number {
    return this.fold.state.entryCount;
  }

  /**
   * Appends one entry (`ts` defaults to the clock, read now). Committed (newline written) when
   * the promise resolves. Throws `InvalidEntryError` before writing anything invalid.
   */
  append(input: EntryInput<TItem>, options?: WriteCallOptions): Promise<AppendResult> {
    let entry: Entry<TItem>;
    try {
      entry = this.stamp(input);
    } catch (error) {
      return Promise.reject(error);
    }
    if (options?.ifUnchanged === true) return this.writes.run(() => this.claim([entry], options.signal));
    return this.writes.append([entry], options?.signal);
  }

  /** One conditional write that never forks: on drift, `SessionBusyError` and nothing written. */
  private async claim(entries: Entry<TItem>[], signal: AbortSignal | undefined): Promise<AppendResult> {
    const refused = this.refusedBySegment(entries);
    if (refused !== undefined) {
      // Never reached by the claims podkit makes (an answer or an `awaiting_approval` close lands
      // in a segment holding its request; a resume's `invoke` is in every format).
      throw new SessionStoreUsageError(
        `segment ${this.segmentId} is format v${this.state.formatVersion}, which cannot hold this "${refused.kind}" ` +
          "entry, and a write that claims the session cannot continue in a new segment; append it without ifUnchanged",
      );
    }
    const index = this.entryCount;
    const outcome = await this.store.append(this.ref, entries, { expectedCount: index, signal });
    if (outcome.status === "drift") {
      throw new SessionBusyError({
        sessionId: this.sessionId,
        segmentId: this.segmentId,
        expectedCount: index,
        actualCount: outcome.count,
      });
    }
    for (const entry of entries) this.fold.apply(entry);
    return { segmentId: this.segmentId, index, driftFork: null };
  }

  /**
   * Appends several entries in one write — the entries one step commits (each line still
   * commits on its own in a crash).
   */
  async appendMany(inputs: readonly EntryInput<TItem>[], options?: WriteCallOptions): Promise<AppendResult> {
    const entries = inputs.map((input) => this.stamp(input));
    return this.writes.append(entries, options?.signal);
  }

  /**
   * Cuts the current segment back to its first `keep` entries — e.g. to the `inFlight.entryIndex`
   * of a turn cancelled before any model output — and replays the rest. If someone else wrote to
   * the segment meanwhile, it is left alone and the cut state continues in a drift fork instead.
   * The result's `index` is where the next append lands.
   */
  truncate(keep: number, options?: WriteCallOptions): Promise<AppendResult> {
    return this.writes.run(() => this.truncateNow(keep, options));
  }

  private async truncateNow(keep: number, options?: WriteCallOptions): Promise<AppendResult> {
    const known = this.entryCount;
    if (!Number.isInteger(keep) || keep < 1 || keep > known) {
      throw new SessionStoreUsageError(
        `cannot truncate to ${keep} entries: this log holds ${known} (minimum 1)`,
      );
    }
    const source = this.ref;
    const outcome = await this.store.truncate(source, keep, {
      expectedCount: known,
      signal: options?.signal,
    });
    const prefix = await collect(this.store.readAll(source), keep);
    if (prefix.length !== keep) {
      throw new SessionStoreError(
        `segment ${source.segmentId} was cut below ${keep} entries by another writer; restore the session to continue`,
      );
    }
    const fold = startFold(prefix[0], this.options);
    for (let i = 1; i < prefix.length; i++) fold.apply(prefix[i] as Entry<TItem>);
    if (outcome.status === "truncated") {
      this.moveTo(fold);
      return { segmentId: source.segmentId, index: keep, driftFork: null };
    }
    const driftFork = await this.moveToFork(fold, known, outcome.count);
    return { segmentId: this.segmentId, index: this.entryCount, driftFork };
  }

  /**
   * Starts the segment that follows a compaction: same session, `compacted_from` this segment,
   * the given history, and by default the same system prompt string and config. Usage records
   * and extension state start empty. This segment is not modified.
   */
  createCompactedSegment(args: {
    history: TItem[];
    /** Origins of items of `history` that came from system items or segmented user input. */
    historySources?: HistorySource[];
    systemPrompt?: string | null;
    config?: Record<string, unknown>;
    atTurn?: number;
  }): Promise<SessionLog<TItem>> {
    return SessionLog.startSegment(
      this.store,
      {
        sessionId: this.sessionId,
        segmentId: this.newId(),
        systemPrompt: args.systemPrompt === undefined ? this.state.systemPrompt : args.systemPrompt,
        config: args.config ?? this.state.config,
        history: args.history,
        historySources: args.historySources,
        compactedFrom: { segment_id: this.segmentId, at_turn: args.atTurn ?? this.state.turn },
        ...(this.state.parent === undefined ? {} : { parent: this.state.parent }),
      },
      this.options,
    );
  }

  private stamp(input: EntryInput<TItem>): Entry<TItem> {
    if ((input as { kind: string }).kind === "segment_start") {
      throw new SessionStoreUsageError(
        "segment_start cannot be appended; start segments with create, fork, forkAt or createCompactedSegment",
      );
    }
    // `kind` and `ts` lead every line, so logs stay readable with head/grep. (A spread: the keys
    // already placed keep their place, and it is cheaper than destructuring the rest.)
    const ts = input.ts ?? this.now();
    const entry: Record<string, unknown> = { kind: undefined, ts, ...(input as object) };
    if (entry.ts === undefined) entry.ts = ts; // an explicit `ts: undefined`
    return entry as unknown as Entry<TItem>;
  }

  /**
   * Writes a batch at this log's entry count; on drift, moves to a fork and writes it there.
   * Gives the result directly when the store finished without waiting (see `appendNow`).
   */
  private write(
    entries: Entry<TItem>[],
    signal: AbortSignal | undefined,
    attempt = 0,
    driftFork: DriftFork | null = null,
  ): AppendResult | Promise<AppendResult> {
    if (this.refusedBySegment(entries) !== undefined) {
      return this.continueInFork(this.fold).then(() => this.write(entries, signal, attempt, driftFork));
    }
    const index = this.entryCount;
    const written = appendEither(this.store, this.ref, entries, index, signal);
    if (written instanceof Promise) {
      return written.then((outcome) => this.written(outcome, entries, signal, index, attempt, driftFork));
    }
    return this.written(written, entries, signal, index, attempt, driftFork);
  }

  /** After a write: fold what was appended, or on drift move to a fork and write there. */
  private written(
    outcome: AppendOutcome,
    entries: Entry<TItem>[],
    signal: AbortSignal | undefined,
    index: number,
    attempt: number,
    driftFork: DriftFork | null,
  ): AppendResult | Promise<AppendResult> {
    if (outcome.status === "appended") {
      for (const entry of entries) this.fold.apply(entry);
      return { segmentId: this.segmentId, index, driftFork };
    }
    if (attempt >= MAX_DRIFT_FORKS) {
      throw new SessionStoreError(
        `segment ${this.segmentId} changed under this writer ${attempt + 1} times in a row; another process keeps ` +
          "appending to this session's new segments — stop the other writer and restore the session",
      );
    }
    return this.moveToFork(this.fold, index, outcome.count).then((fork) =>
      this.write(entries, signal, attempt + 1, fork),
    );
  }

  /**
   * The first of `entries` the current segment's format version does not include, if any: an
   * entry added by a later version (`format-versions.ts`) — except the approval entries main
   * wrote into v1 and v2 segments, which a segment already holding one takes in its own version.
   * A writer never puts such an entry into such a segment: the previous release would call the
   * segment corrupt, though it could read it before. It continues in a segment of the current
   * version first (`continueInFork`), as a drift fork does.
   */
  private refusedBySegment(entries: readonly Entry<TItem>[]): Entry<TItem> | undefined {
    const version = this.fold.state.formatVersion;
    if (version >= FORMAT_VERSION) return undefined;
    for (const entry of entries) {
      if (formatIntroducing(entry) <= version) continue;
      if (this.fold.holdsApprovalEntries && isLegacyApprovalEntry(entry)) continue;
      return entry;
    }
    return undefined;
  }

  /**
   * Moves this writer onto a new segment that replays to `fold`'s state (`forked_from` the
   * current one). The store has already released the old segment's lock when it reported the
   * drift, so writers waiting for it are not held up while the whole history is written here.
   */
  private async moveToFork(
    fold: ReplayFold<TItem>,
    expectedCount: number,
    actualCount: number,
  ): Promise<DriftFork> {
    const from = this.segmentId;
    await this.continueInFork(fold);
    const event: DriftFork = { fromSegmentId: from, toSegmentId: this.segmentId, expectedCount, actualCount };
    this.options.onDriftFork?.(event);
    return event;
  }

  /**
   * Continues in a new segment of the session, in the current format version, `forked_from` the
   * current one, holding `fold`'s state: the byte-identical system prompt and history up to the
   * open turn, the entries that carry usage, extension, approval and run state, then the open
   * turn's entries verbatim (see `ForkSnapshot`). Used after a drift, and before an entry the
   * current segment's version cannot hold.
   */
  private async continueInFork(fold: ReplayFold<TItem>): Promise<void> {
    const from = this.segmentId;
    const snapshot = fold.forkSnapshot();
    const next = await SessionLog.startSegment(
      this.store,
      {
        sessionId: this.sessionId,
        segmentId: this.newId(),
        systemPrompt: snapshot.systemPrompt,
        config: snapshot.config,
        history: snapshot.history,
        historySources: snapshot.historySources,
        forkedFrom: { segment_id: from, at_turn: snapshot.turn },
        ...(this.state.parent === undefined ? {} : { parent: this.state.parent }),
      },
      this.options,
      snapshot.carried,
    );
    this.moveTo(next.fold);
  }
}

/** Replays a session's head segment (see `describeSession`): the state `Pod.restore` resumes from. */
export async function restoreSession<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
  options?: ReplayOptions<TItem>,
): Promise<SessionState<TItem>> {
  return (await SessionLog.open(store, sessionId, options)).state;
}
