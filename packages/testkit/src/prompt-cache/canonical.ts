/**
 * Serializes a JSON value with object keys sorted and `cache_control` markers removed, so two requests
 * that send the same prompt with keys in another order, or with breakpoints moved, serialize identically.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (key === "cache_control") continue;
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}

/** Estimated tokens of a serialized span: UTF-8 bytes / 4, rounded up. */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 4);
}

/** UTF-8 byte length of a string. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
