/** A tool definition as `find_tools` searches and returns it. */
export interface SearchableTool {
  readonly name: string;
  readonly description?: string;
}

/** BM25's usual constants: term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
/** Name words count this many times: a tool's name says more about it than its description. */
const NAME_WEIGHT = 2;
/** A query word that only starts a document word (`weath` → `weather`) scores this share of a match. */
const PREFIX_SHARE = 0.5;
/** Shortest query word matched as a prefix (shorter ones match too much). */
const MIN_PREFIX = 3;

/**
 * The words of a text, lower-cased: split on everything but letters and digits, and at
 * camelCase humps, so `mcp__github__createIssues` is `mcp github create issue` (a plural is
 * folded to its singular: `invoices`, `entries`, `boxes` are `invoice`, `entry`, `box`).
 */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "")
    .map(singular);
}

/** English plural endings folded away; deliberately crude, and the same for queries and tools. */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * The names among `names` closest to `name` by edit distance (a misspelt tool name), at most
 * `limit`, nearest first; names further than a quarter of `name`'s length (at least 2) are left out.
 */
export function closestNames(name: string, names: readonly string[], limit = 3): string[] {
  const within = Math.max(2, Math.floor(name.length / 4));
  return names
    .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
    .filter((entry) => entry.distance <= within)
    .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, limit)
    .map((entry) => entry.candidate);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * Ranks `tools` for `query`, best first: BM25 over each tool's name (counted twice) and
 * description, where a query word that only begins a word of the tool counts half. A query
 * equal to a tool's name puts that tool first. Tools that match no query word are left out;
 * ties keep name order. Deterministic: the same tools and query always rank the same way.
 */
export function rankTools<T extends SearchableTool>(tools: readonly T[], query: string): T[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return [];
  const documents = tools.map((tool) => {
    const nameWords = words(tool.name);
    const tokens = [
      ...Array.from({ length: NAME_WEIGHT }, () => nameWords).flat(),
      ...words(tool.description ?? ""),
    ];
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    return { tool, length: tokens.length, counts };
  });
  const averageLength = documents.reduce((sum, d) => sum + d.length, 0) / Math.max(documents.length, 1) || 1;
  /** How often `term` occurs in a document: exact words, plus a share for words it begins. */
  const frequency = (counts: Map<string, number>, term: string): number => {
    let f = counts.get(term) ?? 0;
    if (term.length >= MIN_PREFIX) {
      for (const [token, n] of counts) if (token !== term && token.startsWith(term)) f += n * PREFIX_SHARE;
    }
    return f;
  };
  const idf = new Map(
    terms.map((term) => {
      const containing = documents.filter((d) => frequency(d.counts, term) > 0).length;
      return [term, Math.log(1 + (documents.length - containing + 0.5) / (containing + 0.5))];
    }),
  );
  const exact = query.trim();
  const scored = documents
    .map(({ tool, length, counts }) => {
      let score = 0;
      for (const term of terms) {
        const f = frequency(counts, term);
        if (f === 0) continue;
        score += ((idf.get(term) ?? 0) * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * length) / averageLength));
      }
      return { tool, score, exact: tool.name === exact };
    })
    .filter((entry) => entry.score > 0 || entry.exact);
  scored.sort((a, b) => {
    if (a.exact !== b.exact) return a.exact ? -1 : 1;
    if (a.score !== b.score) return b.score - a.score;
    return a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0;
  });
  return scored.map((entry) => entry.tool);
}
