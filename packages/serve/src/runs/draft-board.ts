/**
 * The text and reasoning of the model response a session's run is streaming right now, before it
 * is committed. `after` is the number of entries of `segmentId` committed when the response began:
 * once a client holds more entries of that segment than that, the response is in the log and the
 * preview is stale. Previews are for display only; nothing is decided from them.
 */
export interface Draft {
  /** Increases with every new response, so a client can tell a new preview from a longer one. */
  seq: number;
  segmentId: string;
  after: number;
  text: string;
  reasoning: string;
}

/** The live previews of the runs in this process, by session, with a listener per change. */
export class DraftBoard {
  private readonly drafts = new Map<string, Draft>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private seq = 0;

  /** The preview of `sessionId`'s current response, if one is streaming. */
  get(sessionId: string): Draft | undefined {
    return this.drafts.get(sessionId);
  }

  /** A new response began in `segmentId` after `after` committed entries. */
  begin(sessionId: string, segmentId: string, after: number): void {
    this.seq += 1;
    this.drafts.set(sessionId, { seq: this.seq, segmentId, after, text: "", reasoning: "" });
    this.changed(sessionId);
  }

  /** Text or reasoning streamed into the current response. */
  append(sessionId: string, kind: "text" | "reasoning", delta: string): void {
    const draft = this.drafts.get(sessionId);
    if (draft === undefined || delta === "") return;
    draft[kind] += delta;
    this.changed(sessionId);
  }

  /** The run ended: no response is streaming. */
  clear(sessionId: string): void {
    if (this.drafts.delete(sessionId)) this.changed(sessionId);
  }

  /** Calls `listener` on every change of `sessionId`'s preview; returns the unsubscribe. */
  watch(sessionId: string, listener: () => void): () => void {
    let set = this.listeners.get(sessionId);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(sessionId);
    };
  }

  private changed(sessionId: string): void {
    for (const listener of this.listeners.get(sessionId) ?? []) listener();
  }
}
