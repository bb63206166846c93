import type { SkillsConfig } from "@podkit/manifest";
import type { SkillSummary } from "../catalog/pod-prompt.js";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { estimateTokens } from "../usage/token-estimator.js";
import { SkillListingOverBudgetError } from "./errors.js";
import type { SkillMode, SkillsKnown } from "./skill-records.js";
import type { SkillScan } from "./skill-scan.js";

/**
 * The system prompt's `skills` variable (docs/prompts.md): `listing`, the catalog's
 * `skills_listing` (or, over budget with `on_over_budget = "search"`, `skills_search_note`), `""`
 * when there is no skill; `entries`, the listed skills in name order (empty in search mode);
 * `mode`, `off` for a pod without `[skills]`.
 */
export interface SkillsVariable {
  readonly listing: string;
  readonly entries: readonly SkillSummary[];
  readonly mode: "off" | SkillMode;
}

/** The `skills` variable of a pod without skills. */
export const NO_SKILLS: SkillsVariable = Object.freeze({
  listing: "",
  entries: Object.freeze([]),
  mode: "off",
});

/**
 * The listing the system prompt renders once, measured there: its tokens (the estimate the pod
 * uses for requests without a measurement, UTF-8 bytes / 4) against `listing_budget_tokens`. Over
 * it, `on_over_budget = "error"` throws `SkillListingOverBudgetError`; `"search"` gives the
 * one-line note instead and the `skill` tool takes a query. Nothing is ever cut to fit.
 */
export function skillListing(
  scan: SkillScan,
  config: SkillsConfig,
  catalog: PromptCatalog,
): { variable: SkillsVariable; known: SkillsKnown } {
  const skills = [...scan.skills.values()];
  const entries = skills.map(({ name, description }) => ({ name, description }));
  const known = (mode: SkillMode): SkillsKnown => ({
    mode,
    skills: skills.map(({ name, digest }) => ({ name, digest })),
  });
  if (entries.length === 0) return { variable: { listing: "", entries, mode: "list" }, known: known("list") };
  const listing = catalog.render("skills_listing", { skills: entries });
  const tokens = listingTokens(listing);
  if (tokens <= config.listing_budget_tokens)
    return { variable: { listing, entries, mode: "list" }, known: known("list") };
  if (config.on_over_budget === "error")
    throw new SkillListingOverBudgetError(tokens, config.listing_budget_tokens, entries.length);
  const note = catalog.render("skills_search_note", { count: entries.length });
  return { variable: { listing: note, entries: [], mode: "search" }, known: known("search") };
}

/** Tokens of a text as the pod estimates them without a measurement. */
export function listingTokens(text: string): number {
  return estimateTokens({ systemPrompt: text, items: [], usage: [] }).tokens;
}
