import type { ContextSectionText } from "../catalog/pod-prompt.js";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { PodUsageError } from "../errors.js";
import { contextKey } from "./context-key.js";
import type { ContextSection, ContextSectionState } from "./context-section.js";

/** A context block to commit: the rendered `context_update_section` and the key it was built from. */
export interface ContextUpdate {
  readonly key: string;
  readonly body: string;
}

/** The key of "no section loaded": a pod whose sections all load nothing commits nothing. */
export const EMPTY_CONTEXT_KEY = contextKey([]);

/**
 * The pod's context sections in their fixed order (the builtin ones, then `PodOptions.contextSections`,
 * then `addContextSection` calls) and the key of the block last committed to history. Before each
 * request `update()` loads every section; the same key as the committed block means nothing to do
 * (nothing re-rendered), a new key gives the block to commit.
 */
export class ContextSections {
  private readonly sections: ContextSection[] = [];
  /** The last data each section loaded successfully (kept when a later load fails). */
  private readonly lastData = new Map<string, unknown>();
  private committed = EMPTY_CONTEXT_KEY;
  /** The key last computed and the data it was computed from, so unchanged data is not re-hashed. */
  private lastKey: { key: string; data: readonly (readonly [string, unknown])[] } = {
    key: EMPTY_CONTEXT_KEY,
    data: [],
  };
  private frozen = false;

  constructor(
    sections: readonly ContextSection[],
    private readonly warn: (message: string) => void,
  ) {
    for (const section of sections) this.add(section);
  }

  /** Adds a section after the others; not after the pod's first run. */
  add(section: ContextSection): void {
    if (this.frozen) {
      throw new PodUsageError(`context section "${section.id}" was added after the pod's first run`, {
        hint: "add context sections (like hooks) right after Pod.fromManifest / Pod.restore, or pass them as PodOptions.contextSections",
      });
    }
    if (this.sections.some((existing) => existing.id === section.id)) {
      throw new PodUsageError(`a context section with id "${section.id}" is already registered`, {
        hint: "give each context section its own id",
      });
    }
    this.sections.push(section as ContextSection);
  }

  /** The section order is final from the first run on. */
  freeze(): void {
    this.frozen = true;
  }

  get ids(): readonly string[] {
    return this.sections.map((section) => section.id);
  }

  /** The key of the block last committed to history (restored from the log, or set after compaction). */
  get committedKey(): string {
    return this.committed;
  }

  markCommitted(key: string): void {
    this.committed = key;
  }

  /**
   * Loads every section and returns the block to commit when the assembled data differs from the
   * committed block's, else null. A section whose `load` throws keeps its last data (a passing
   * failure must not make the block flap) and is reported through `warn`.
   */
  async update(state: ContextSectionState, catalog: PromptCatalog): Promise<ContextUpdate | null> {
    const loaded = await this.load(state);
    const key = this.keyOf(loaded.map(({ section, data }) => [section.id, data] as const));
    if (key === this.committed) return null;
    const sections: ContextSectionText[] = loaded.map(({ section, data }) => ({
      id: section.id,
      text: section.render(data),
    }));
    return { key, body: catalog.render("context_update_section", { sections }) };
  }

  /** The current block even when unchanged (a compaction re-commits it into the new segment). */
  async current(state: ContextSectionState, catalog: PromptCatalog): Promise<ContextUpdate | null> {
    const saved = this.committed;
    this.committed = "";
    try {
      const update = await this.update(state, catalog);
      return update?.key === EMPTY_CONTEXT_KEY ? null : update;
    } finally {
      this.committed = saved;
    }
  }

  /**
   * `contextKey` of the assembled data, reused when every section gave the very same data as last
   * time (equal strings, or the same object: a section that builds new objects is hashed again).
   */
  private keyOf(data: readonly (readonly [string, unknown])[]): string {
    const last = this.lastKey.data;
    const same =
      last.length === data.length &&
      data.every(([id, value], index) => last[index]?.[0] === id && Object.is(last[index]?.[1], value));
    if (same) return this.lastKey.key;
    const key = contextKey(data);
    this.lastKey = { key, data };
    return key;
  }

  private async load(state: ContextSectionState): Promise<{ section: ContextSection; data: unknown }[]> {
    const loaded: { section: ContextSection; data: unknown }[] = [];
    for (const section of this.sections) {
      let data: unknown;
      try {
        data = await section.load(state);
        this.lastData.set(section.id, data);
      } catch (error) {
        if (state.signal.aborted) throw error;
        data = this.lastData.get(section.id) ?? null;
        this.warn(
          `context section "${section.id}" failed to load (${(error as Error)?.message ?? String(error)}); keeping its last content`,
        );
      }
      if (data !== null && data !== undefined) loaded.push({ section, data });
    }
    return loaded;
  }
}
