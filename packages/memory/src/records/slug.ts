/** The slug rule: lowercase letters, digits and single hyphens, 1–64 characters. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** Why `slug` is not a valid slug, or undefined when it is. */
export function slugProblem(slug: string): string | undefined {
  if (!SLUG_PATTERN.test(slug)) {
    return `"${slug}" is not a valid slug: use 1-64 lowercase letters, digits and hyphens, starting and ending with a letter or digit (e.g. "use-pnpm-workspaces")`;
  }
  if (slug.includes("--")) return `"${slug}" is not a valid slug: "--" is not allowed, use single hyphens`;
  return undefined;
}

/** Slugs shorter than this are never reported as similar ("api" and "app" are different things). */
const MIN_SIMILAR_LENGTH = 6;

/**
 * The keys under which a slug is indexed for similarity: its words sorted (same words in another
 * order), itself, and itself with one character deleted. Two slugs sharing a key are one typo
 * apart (a substitution, insertion, deletion or swap of neighbours) or differ only in word order.
 * Indexing by keys keeps the check linear in the number of records instead of pairwise.
 */
function similarityKeys(slug: string): string[] {
  const keys = [`w:${slug.split("-").sort().join("-")}`, `d:${slug}`];
  for (let i = 0; i < slug.length; i++) keys.push(`d:${slug.slice(0, i)}${slug.slice(i + 1)}`);
  return keys;
}

/** True when `a` and `b` are different slugs that probably name the same thing. */
export function similarSlugs(a: string, b: string): boolean {
  if (a === b || Math.min(a.length, b.length) < MIN_SIMILAR_LENGTH) return false;
  const keys = new Set(similarityKeys(a));
  return similarityKeys(b).some((key) => keys.has(key));
}

/** Every pair of similar slugs among `slugs` (each pair once, sorted), found through a key index. */
export function similarSlugPairs(slugs: Iterable<string>): [string, string][] {
  const index = new Map<string, string[]>();
  const pairs = new Map<string, [string, string]>();
  for (const slug of new Set(slugs)) {
    if (slug.length < MIN_SIMILAR_LENGTH) continue;
    const seen = new Set<string>();
    for (const key of similarityKeys(slug)) {
      const bucket = index.get(key);
      for (const other of bucket ?? []) {
        if (other === slug || seen.has(other)) continue;
        seen.add(other);
        const pair: [string, string] = other < slug ? [other, slug] : [slug, other];
        pairs.set(pair.join("\0"), pair);
      }
      if (bucket === undefined) index.set(key, [slug]);
      else if (bucket.at(-1) !== slug) bucket.push(slug);
    }
  }
  return [...pairs.values()].sort((x, y) => (x.join() < y.join() ? -1 : 1));
}
