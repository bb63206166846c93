import type { Item, MediaRef } from "@podkit/llm-worker";
import { mediaRefsOf, mediaTokensOf, withoutMedia } from "../media/media-refs.js";
import { bytesOfItem } from "../usage/token-estimator.js";

/** Prune knobs of `[compaction]`. */
export interface PruneConfig {
  /** The newest part of history, in estimated tokens, whose tool output is never dropped. */
  readonly protectedTokens: number;
  /** The least saving (estimated tokens) worth changing the request prefix for. */
  readonly minSavings: number;
  /** What stands in for a media part left out (the catalog's `media_elided`); without it, media stay. */
  readonly mediaMarker?: (ref: MediaRef) => string;
}

/** What one request is sent with. */
export interface PrunePlan {
  /** Tool results before this history index are sent without `content`. */
  readonly upTo: number;
  /** The items to send (the history itself when nothing is pruned). */
  readonly items: readonly Item[];
  /** Estimated tokens the dropped content would have cost. */
  readonly savedTokens: number;
}

/** What leaving an item's prunable parts out saves: a tool result's content, and its media (docs/media.md). */
const contentTokens = (item: Item, withMedia: boolean) =>
  (item.type === "tool_result" && item.content !== undefined ? Buffer.byteLength(item.content) / 4 : 0) +
  (withMedia ? mediaTokensOf(item) : 0);

/** The first index of the protected tail: the newest items holding at least `tokens` estimated tokens. */
export function protectedTailStart(items: readonly Item[], tokens: number): number {
  let total = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    total += bytesOfItem(items[i] as Item) / 4;
    if (total >= tokens) return i;
  }
  return 0;
}

/**
 * Request-local prune. Tool-result `content` before the boundary `upTo` is dropped from
 * the request copy; `summary` stays, and history is never touched. The boundary only moves forward,
 * and only when the content it would newly drop saves at least `minSavings`: each move changes the
 * request prefix from the first newly pruned item on (the provider re-bills it once), and between
 * moves every request sends the same prefix, so Anthropic cache breakpoints keep hitting. A boundary
 * that crept forward with the protected tail would change that prefix on every request instead.
 */
export function planPrune(items: readonly Item[], previousUpTo: number, config: PruneConfig): PrunePlan {
  let upTo = Math.min(previousUpTo, items.length);
  const candidate = protectedTailStart(items, config.protectedTokens);
  if (candidate > upTo) {
    let gain = 0;
    for (let i = upTo; i < candidate; i++)
      gain += contentTokens(items[i] as Item, config.mediaMarker !== undefined);
    if (gain >= config.minSavings) upTo = candidate;
  }
  return { upTo, ...prunedItems(items, upTo, config.mediaMarker) };
}

/**
 * The request copy of `items` with the tool-result content before `upTo` dropped — and, given
 * `mediaMarker`, their media and those of the messages carrying them, each replaced by its marker
 * (docs/media.md) — and what that saves.
 */
export function prunedItems(
  items: readonly Item[],
  upTo: number,
  mediaMarker?: (ref: MediaRef) => string,
): { items: readonly Item[]; savedTokens: number } {
  if (upTo === 0) return { items, savedTokens: 0 };
  let savedTokens = 0;
  const pruned = items.map((item, index) => {
    if (index >= upTo) return item;
    const media = mediaMarker !== undefined && mediaRefsOf(item).length > 0;
    if (!media && (item.type !== "tool_result" || item.content === undefined)) return item;
    savedTokens += contentTokens(item, media);
    const kept = media ? withoutMedia(item, mediaMarker) : item;
    if (kept.type !== "tool_result" || kept.content === undefined) return kept;
    const { content: _dropped, ...rest } = kept;
    return rest;
  });
  return { items: pruned, savedTokens: Math.round(savedTokens) };
}
