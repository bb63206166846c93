import { hasMarker, PodkitPodError } from "../errors.js";

const DEFINITION_MARKER = Symbol.for("podkit.pod.error.skill-definition");

/**
 * A skill that cannot be used as written (docs/skills.md): a SKILL.md without front matter, with
 * YAML that does not parse, a missing or bad `name`/`description`/`allowed-tools`, a name that is
 * not its directory's; a skill directory that leaves its skills directory through a symbolic
 * link; two skills of one name. Reported when the system prompt is rendered, naming the file and,
 * where it can tell, the line and key.
 */
export class SkillDefinitionError extends PodkitPodError {
  readonly [DEFINITION_MARKER] = true;
  override name = "SkillDefinitionError";
  /** The SKILL.md (or skill directory) at fault, absolute. */
  readonly file: string;
  /** 1-based line in `file`, when the problem sits on one. */
  readonly line: number | undefined;
  /** The front matter key at fault (`name`, `description`, `allowed-tools`), when one is. */
  readonly key: string | undefined;
  readonly problem: string;

  constructor(
    where: { file: string; line?: number | undefined; key?: string | undefined },
    problem: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    const at = `${where.file}${where.line === undefined ? "" : `:${where.line}`}`;
    super(`${at}: ${where.key === undefined ? "" : `${where.key}: `}${problem}`, {
      hint:
        options?.hint ??
        'fix the skill named above, or leave it out with [skills] enabled = [...] (docs/skills.md, "SKILL.md")',
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.file = where.file;
    this.line = where.line;
    this.key = where.key;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is SkillDefinitionError {
    return hasMarker(error, DEFINITION_MARKER);
  }
}

const OVER_BUDGET_MARKER = Symbol.for("podkit.pod.error.skill-listing-over-budget");

/**
 * The skill listing, measured when the system prompt is rendered, is larger than
 * `[skills] listing_budget_tokens` and `on_over_budget` is `error`: the prompt is not rendered
 * (a listing is never cut to fit).
 */
export class SkillListingOverBudgetError extends PodkitPodError {
  readonly [OVER_BUDGET_MARKER] = true;
  override name = "SkillListingOverBudgetError";
  readonly tokens: number;
  readonly budget: number;
  readonly skills: number;

  constructor(tokens: number, budget: number, skills: number) {
    super(
      `the skill listing of ${skills} skill${skills === 1 ? "" : "s"} is about ${tokens} tokens, over [skills] listing_budget_tokens = ${budget}; it is never cut to fit`,
      {
        hint: 'raise [skills] listing_budget_tokens, list fewer skills with [skills] enabled = [...], shorten their descriptions, or set on_over_budget = "search" (docs/skills.md)',
      },
    );
    this.tokens = tokens;
    this.budget = budget;
    this.skills = skills;
  }

  static override isInstance(error: unknown): error is SkillListingOverBudgetError {
    return hasMarker(error, OVER_BUDGET_MARKER);
  }
}
