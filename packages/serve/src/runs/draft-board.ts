import type { PodEvent } from "@podkit/pod";

type OutputPartial = Extract<PodEvent, { type: "output_partial" }>;

/**
 * A typed answer streaming in the response (docs/output.md, "Streaming"): the answer read so far,
 * how many times it changed, and the elements of its top-level arrays that completed, in order.
 */
export interface DraftOutput {
  callId: string;
  partial: Record<string, unknown>;
  version: number;
  elements: OutputPartial["elements"];
}

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
  /** The typed answers streaming in it (`final_answer` calls; usually none or one). */
  outputs: DraftOutput[];
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
    this.drafts.set(sessionId, { seq: this.seq, segmentId, after, text: "", reasoning: "", outputs: [] });
    this.changed(sessionId);
  }

  /** Text or reasoning streamed into the current response. */
  append(sessionId: string, kind: "text" | "reasoning", delta: string): void {
    const draft = this.drafts.get(sessionId);
    if (draft === undefined || delta === "") return;
    draft[kind] += delta;
    this.changed(sessionId);
  }

  /** The typed answer of the current response streamed further (an `output_partial` event). */
  output(sessionId: string, event: OutputPartial): void {
    const draft = this.drafts.get(sessionId);
    if (draft === undefined) return;
    let output = draft.outputs.find((o) => o.callId === event.callId);
    if (output === undefined) {
      output = { callId: event.callId, partial: event.partial, version: 0, elements: [] };
      draft.outputs.push(output);
    }
    output.partial = event.partial;
    output.version += 1;
    output.elements.push(...event.elements);
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
