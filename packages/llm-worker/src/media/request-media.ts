import type { Item } from "../items/item.js";
import type { MediaCapabilities } from "./capabilities.js";
import { type MediaRef, mediaLabel, mediaRefsOf } from "./media-ref.js";

/** The bytes of the media one request names, by digest; `null` where the store had none. */
export type MediaBytes = ReadonlyMap<string, Uint8Array | null>;

/** A media part a request sends, with its bytes. */
export interface SentMedia {
  readonly ref: MediaRef;
  readonly data: Uint8Array;
}

/** What one history item sends of its media: the parts, and the notes added to its text. */
export interface ItemMedia {
  readonly sent: readonly SentMedia[];
  readonly notes: readonly string[];
}

// The notes a request carries in a part's place. They are wire formatting, like the blank line
// between a result's summary and content: derived from the item alone, so a replay sends them
// byte for byte (docs/media.md, "What the model reads").
const NOTES = {
  elsewhere: (label: string) => `[${label}: in the message after the tool results]`,
  noMedia: (label: string) => `[${label}: not shown, this model takes no images or documents]`,
  unsupported: (label: string, type: string) => `[${label}: not shown, this model does not take ${type}]`,
  unavailable: (label: string, digest: string) =>
    `[${label}: not available, its stored bytes (${digest}) are missing]`,
  overLimit: (label: string) =>
    `[${label}: left out of this request, over what the provider takes in one request]`,
  repeated: (label: string) => `[${label}: the same file as shown above]`,
} as const;

/** The history items whose media a request may carry: tool results, and messages that are not the model's. */
function carriesMedia(item: Item): boolean {
  return item.type === "tool_result" || (item.type === "message" && item.role !== "assistant");
}

interface Occurrence {
  readonly index: number;
  readonly ref: MediaRef;
  /** Where it would go if sent: the tool result itself, or a message. */
  readonly inToolResult: boolean;
}

/**
 * Which media of `items` one request sends and what the model reads in place of the rest
 * (docs/media.md). A part is sent where the wire takes it (`placement`), in a type it takes, with
 * bytes the store still has; of those the newest fit the request's budget (`maxPartsPerRequest`,
 * `maxBytesPerRequest`); and each digest is sent once, at its first place — later places say it is
 * the same file. Deterministic in `items` and the bytes found, so a replay plans the same request.
 */
export function planRequestMedia(
  items: readonly Item[],
  capabilities: MediaCapabilities,
  bytes: MediaBytes,
): ReadonlyMap<number, ItemMedia> {
  const occurrences: Occurrence[] = [];
  items.forEach((item, index) => {
    if (!carriesMedia(item)) return;
    for (const ref of mediaRefsOf(item))
      occurrences.push({ index, ref, inToolResult: item.type === "tool_result" });
  });
  const plan = new Map<number, { sent: SentMedia[]; notes: string[] }>();
  if (occurrences.length === 0) return plan;
  const entry = (index: number) => {
    let found = plan.get(index);
    if (found === undefined) {
      found = { sent: [], notes: [] };
      plan.set(index, found);
    }
    return found;
  };
  const sendable = (occurrence: Occurrence): string | undefined => {
    const label = mediaLabel(occurrence.ref);
    if (capabilities.placement === "none") return NOTES.noMedia(label);
    if (occurrence.inToolResult && capabilities.placement === "user_message") return NOTES.elsewhere(label);
    if (!(capabilities.mediaTypes as readonly string[]).includes(occurrence.ref.media_type))
      return NOTES.unsupported(label, occurrence.ref.media_type);
    if (!(bytes.get(occurrence.ref.digest) instanceof Uint8Array))
      return NOTES.unavailable(label, occurrence.ref.digest);
    return undefined;
  };
  const notes = occurrences.map(sendable);
  // The request's budget goes to the newest digests first (by their last place).
  const chosen = new Set<string>();
  const passed = new Set<string>();
  let budgetBytes = capabilities.maxBytesPerRequest;
  for (let i = occurrences.length - 1; i >= 0; i--) {
    const { ref } = occurrences[i] as Occurrence;
    if (notes[i] !== undefined || chosen.has(ref.digest) || passed.has(ref.digest)) continue;
    const size = (bytes.get(ref.digest) as Uint8Array).length;
    if (chosen.size < capabilities.maxPartsPerRequest && size <= budgetBytes) {
      chosen.add(ref.digest);
      budgetBytes -= size;
    } else {
      passed.add(ref.digest);
    }
  }
  const shown = new Set<string>();
  occurrences.forEach((occurrence, i) => {
    const { ref, index } = occurrence;
    const label = mediaLabel(ref);
    const note = notes[i];
    if (note !== undefined) entry(index).notes.push(note);
    else if (!chosen.has(ref.digest)) entry(index).notes.push(NOTES.overLimit(label));
    else if (shown.has(ref.digest)) entry(index).notes.push(NOTES.repeated(label));
    else {
      shown.add(ref.digest);
      entry(index).sent.push({ ref, data: bytes.get(ref.digest) as Uint8Array });
    }
  });
  return plan;
}

/** Every well-formed digest the media of `items` name, in order, once each. */
export function mediaDigestsOf(items: readonly Item[]): string[] {
  const digests = new Set<string>();
  for (const item of items)
    if (carriesMedia(item)) for (const ref of mediaRefsOf(item)) digests.add(ref.digest);
  return [...digests];
}
