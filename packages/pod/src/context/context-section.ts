/**
 * What a context section's `load` is given: the pod's actual state, never the text of messages
 * (seed 003: sections load because a file exists or a feature is on, not because of keywords).
 */
export interface ContextSectionState {
  /** The workspace directory (absolute). */
  readonly workspace: string;
  /** The session and its current segment; undefined before the first run created them. */
  readonly sessionId: string | undefined;
  readonly segmentId: string | undefined;
  /** Completed turns of the session. */
  readonly turn: number;
  /** Extension state of the current segment by domain (features fold their own). */
  readonly extensions: ReadonlyMap<string, unknown>;
  /** Fires when the run is aborted; a slow `load` must stop. */
  readonly signal: AbortSignal;
}

/**
 * A context section: a piece of runtime context assembled before each request, beside
 * the immutable system prompt. `load` returns the section's data, or null when it has nothing to
 * show (the section is left out). The data must be JSON-serializable: its canonical JSON is the
 * section's part of the cache key, so `render` runs only when the data changed. The rendered text
 * is committed to history inside a `context_update_section` block, so the system prompt and
 * everything before the block stay byte-identical (provider caches keep hitting).
 */
export interface ContextSection<T = unknown> {
  /** Stable id, unique within a pod (`notes`, `memory`, …); shown to the model as the block's id. */
  readonly id: string;
  load(state: ContextSectionState): T | null | Promise<T | null>;
  render(data: T): string;
}
