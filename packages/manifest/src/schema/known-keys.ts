import { z } from "zod";

/**
 * The keys a strict table accepts at `path`, read from the schema itself so "did you mean"
 * suggestions never drift from what is accepted.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const node = schemaAt(schema, path);
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

/** The (unwrapped) schema node that validates the value at `path`, if the path is valid. */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let node: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (typeof segment === "number") {
      node = node instanceof z.ZodArray ? (node.element as z.ZodType) : undefined;
    } else if (node instanceof z.ZodRecord) {
      node = node.valueType as z.ZodType;
    } else {
      node =
        node instanceof z.ZodObject ? (node.shape as Record<string, z.ZodType>)[String(segment)] : undefined;
    }
    node = node && unwrap(node);
    if (!node) return undefined;
  }
  return node;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let node = schema;
  while (node instanceof z.ZodOptional || node instanceof z.ZodDefault) node = node.unwrap() as z.ZodType;
  return node;
}

/** The known key closest to `key` by edit distance, when it is close enough to be a typo. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(1, Math.floor(key.length / 4)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
