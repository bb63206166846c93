import type { Item } from "@podkit/llm-worker";
import type { SessionLog } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSection, ContextSectionState } from "../context/context-section.js";
import { ContextSections, type ContextUpdate, EMPTY_CONTEXT_KEY } from "../context/context-sections.js";
import { createNotesSection } from "../context/notes-section.js";
import type { SessionRecorder } from "./session-recorder.js";

/**
 * A pod's context sections wired to its log: the builtin `notes` first, then the given
 * sections; the block is committed as `system_item{kind:"context", key}` through the worker, and
 * the committed key is taken back from the log on restore, rollback and compaction.
 */
export class PodContext {
  readonly sections: ContextSections;

  constructor(
    sections: readonly ContextSection[],
    private readonly recorder: SessionRecorder,
    private readonly catalog: PromptCatalog,
    warn: (message: string) => void,
  ) {
    this.sections = new ContextSections(
      [createNotesSection(catalog, warn) as ContextSection, ...sections],
      warn,
    );
  }

  /** The block to commit before this request when the assembled sections changed, else nothing. */
  async take(state: ContextSectionState): Promise<Item[]> {
    const update = await this.sections.update(state, this.catalog);
    if (update === null) return [];
    return [this.item(update)];
  }

  /** Takes the committed key from the segment's last context block (its `key` field). */
  syncFromLog(log: SessionLog<Item> | undefined): void {
    const sources = log?.state.historySources ?? [];
    const last = sources.findLast(
      (source) => source.from === "system_item" && source.item.kind === "context",
    );
    const key = last?.from === "system_item" ? last.item.key : undefined;
    this.sections.markCommitted(typeof key === "string" ? key : EMPTY_CONTEXT_KEY);
  }

  /** The current block even when unchanged (a compaction re-commits it into the new segment). */
  current(state: ContextSectionState): Promise<ContextUpdate | null> {
    return this.sections.current(state, this.catalog);
  }

  private item(update: ContextUpdate): Item {
    return this.recorder.systemMessage("context", update.body, { key: update.key }, () =>
      this.sections.markCommitted(update.key),
    );
  }
}
