import { type Item, type MediaRef, MediaRefSchema } from "@podkit/llm-worker";

/**
 * The well-formed media references of an item (a tool result, or the message carrying a batch's
 * media): a replayed attachment is not checked by the item schema, so each is parsed here.
 */
export function mediaRefsOf(item: Item): MediaRef[] {
  if (item.type !== "tool_result" && item.type !== "message") return [];
  const media: unknown = item.media;
  if (!Array.isArray(media)) return [];
  return media.flatMap((ref) => {
    const parsed = MediaRefSchema.safeParse(ref);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * Estimated input tokens of a media part: an image's pixels over 750 (Anthropic's published rule,
 * close to OpenAI's and Gemini's tiling for the sizes stored), a document's bytes over 30 (a PDF
 * page of 50–100 KB reads as 2–3 thousand tokens of text and page image).
 */
export function mediaTokens(ref: MediaRef): number {
  if (ref.width !== undefined && ref.height !== undefined) return Math.ceil((ref.width * ref.height) / 750);
  return Math.ceil(ref.bytes / 30);
}

/** Estimated tokens of all the media an item carries. */
export function mediaTokensOf(item: Item): number {
  let tokens = 0;
  for (const ref of mediaRefsOf(item)) tokens += mediaTokens(ref);
  return tokens;
}

/**
 * The item as a request sends it once its media are left out (a prune): no `media`, and the
 * catalog's marker for each part after its text, so the model knows what was there.
 */
export function withoutMedia(item: Item, marker: (ref: MediaRef) => string): Item {
  const refs = mediaRefsOf(item);
  if (item.type === "tool_result") {
    const { media: _left, ...rest } = item;
    return refs.length === 0 ? rest : { ...rest, summary: `${item.summary}\n${refs.map(marker).join("\n")}` };
  }
  if (item.type === "message") {
    const { media: _left, ...rest } = item;
    if (refs.length === 0) return rest;
    return {
      ...rest,
      content: [...item.content, { type: "text", text: `\n${refs.map(marker).join("\n")}` }],
    };
  }
  return item;
}
