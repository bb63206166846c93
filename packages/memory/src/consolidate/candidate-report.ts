import type { Source } from "../records/record-schema.js";
import type { StagedItem } from "./staged-items.js";

/** A topic that recurs across at least two sessions: knowledge may be created from these items only. */
export interface KnowledgeCandidate {
  /** The topic phrase used most often in the group (the first on a tie). */
  readonly topic: string;
  readonly sessions: readonly string[];
  readonly sources: readonly Source[];
  /** The staged items of the group, by their ids in the consolidation input. */
  readonly items: readonly StagedItem[];
}

const STOPWORDS = new Set(
  "a an and are as at be by for from how in into is it of on or the to use used using with we our this that when what which why".split(
    " ",
  ),
);

/**
 * The words of a topic for comparison: lowercase letters/digits, stop words dropped, a plural
 * "s" cut; scripts written without spaces (CJK) contribute character pairs instead.
 */
export function topicTerms(topic: string): Set<string> {
  const terms = new Set<string>();
  for (const word of topic.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(word)) {
      const chars = [...word];
      if (chars.length === 1) terms.add(word);
      for (let i = 0; i + 1 < chars.length; i++) terms.add(`${chars[i]}${chars[i + 1]}`);
      continue;
    }
    if (STOPWORDS.has(word) || word.length < 2) continue;
    terms.add(word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word);
  }
  return terms;
}

/** Jaccard similarity of two term sets. */
function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const term of a) if (b.has(term)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** Topics at least this similar (Jaccard over their terms) are the same topic. */
export const TOPIC_SIMILARITY = 0.5;

/**
 * The knowledge candidate report: staging topics grouped by a deterministic similarity
 * (Jaccard ≥ 0.5 over their terms, grouped transitively), keeping the groups that span at least
 * two distinct sessions. Same input, same report.
 */
export function knowledgeCandidates(staged: readonly StagedItem[]): KnowledgeCandidate[] {
  const items = staged.map((item) => ({ item, terms: topicTerms(item.topic) }));
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i] ?? i] ?? i;
      i = parent[i] ?? i;
    }
    return i;
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i];
      const b = items[j];
      if (a !== undefined && b !== undefined && similarity(a.terms, b.terms) >= TOPIC_SIMILARITY)
        parent[find(j)] = find(i);
    }
  }
  const groups = new Map<number, StagedItem[]>();
  items.forEach(({ item }, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), item]);
  });
  const candidates: KnowledgeCandidate[] = [];
  for (const group of groups.values()) {
    const sessions = [...new Set(group.map((item) => item.sessionId))];
    if (sessions.length < 2) continue;
    const counts = new Map<string, number>();
    for (const item of group) counts.set(item.topic, (counts.get(item.topic) ?? 0) + 1);
    const topic = [...counts.entries()].reduce((best, next) => (next[1] > best[1] ? next : best))[0];
    const sources = new Map<string, Source>();
    for (const item of group)
      sources.set(`${item.source.segment_id}:${item.source.range.join("-")}`, item.source);
    candidates.push({ topic, sessions, sources: [...sources.values()], items: group });
  }
  return candidates;
}
