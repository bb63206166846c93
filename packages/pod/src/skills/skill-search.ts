import type { SkillSummary } from "../catalog/pod-prompt.js";

/** Most skills one query returns. */
export const SEARCH_RESULTS_MAX = 10;

/**
 * The skills matching `query`, best first: each word of the query (letters and digits, lower
 * case) found in a skill's name counts 2, in its description 1; ties in name order. `count` is how
 * many matched in all (at most `SEARCH_RESULTS_MAX` are returned).
 */
export function searchSkills(
  query: string,
  skills: Iterable<SkillSummary>,
): { matches: SkillSummary[]; count: number } {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const scored: { skill: SkillSummary; score: number }[] = [];
  for (const skill of skills) {
    const name = skill.name.toLowerCase();
    const description = skill.description.toLowerCase();
    let score = 0;
    for (const word of words) score += (name.includes(word) ? 2 : 0) + (description.includes(word) ? 1 : 0);
    if (score > 0) scored.push({ skill: { name: skill.name, description: skill.description }, score });
  }
  scored.sort((a, b) => b.score - a.score || (a.skill.name < b.skill.name ? -1 : 1));
  return { matches: scored.slice(0, SEARCH_RESULTS_MAX).map(({ skill }) => skill), count: scored.length };
}
