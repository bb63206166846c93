import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level, so equal data always gives equal text (the
 * seed's `json.dumps(sort_keys=True)`); `undefined` members are dropped as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== "object" || Array.isArray(member)) return member;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(member).sort()) sorted[key] = (member as Record<string, unknown>)[key];
    return sorted;
  });
}

/** The deterministic key of assembled context data: sha256 of its canonical JSON. */
export function contextKey(data: unknown): string {
  return createHash("sha256").update(canonicalJson(data)).digest("hex");
}
