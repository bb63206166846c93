import { isAbsolute } from "node:path";
import { PodUsageError } from "../errors.js";
import { NO_SKILLS, type SkillsVariable } from "../skills/skill-listing.js";

/** What the template sees of the pod's scope; `@podkit/manifest`'s `Scope` satisfies it. */
export interface ScopeView {
  readonly readable: readonly string[];
  readonly writable: readonly string[];
  readonly summary: string;
}

/** The builtin variables of a system prompt template. */
export interface SystemPromptContext {
  /** `YYYY-MM-DD` (UTC). */
  readonly date: string;
  /** `HH:MM:SS` (UTC). */
  readonly time: string;
  /** `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds, literal `Z`). */
  readonly datetime: string;
  /** Absolute working directory of the pod. */
  readonly cwd: string;
  readonly scope: ScopeView;
  /** Registered tool names, sorted by UTF-16 code unit. */
  readonly tools: readonly string[];
  /** Always present; `agents_md` only when `<workspace>/AGENTS.md` was read. */
  readonly files: { readonly agents_md?: string };
  readonly language: string;
  /** The skill listing, measured at render (docs/skills.md); `mode` is `off` without `[skills]`. */
  readonly skills: SkillsVariable;
}

export interface SystemPromptContextInput {
  /** Read once for date, time and datetime; default `() => new Date()`. */
  readonly clock?: () => Date;
  readonly cwd: string;
  readonly scope: ScopeView;
  readonly tools: Iterable<string>;
  /** Content of AGENTS.md, or undefined when there is none (see `readAgentsMd`). */
  readonly agentsMd?: string;
  readonly language: string;
  /** The skill listing (`PodSkills.render()`); default: no skills. */
  readonly skills?: SkillsVariable;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Builds the builtin variables from one clock reading and the pod's state at materialization. */
export function buildSystemPromptContext(input: SystemPromptContextInput): SystemPromptContext {
  if (!isAbsolute(input.cwd))
    throw new PodUsageError(`cwd must be absolute, got ${JSON.stringify(input.cwd)}`);
  const iso = (input.clock ?? (() => new Date()))().toISOString(); // 2026-04-15T09:30:00.000Z
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  return Object.freeze({
    date,
    time,
    datetime: `${date}T${time}Z`,
    cwd: input.cwd,
    scope: Object.freeze({
      readable: Object.freeze([...input.scope.readable]),
      writable: Object.freeze([...input.scope.writable]),
      summary: input.scope.summary,
    }),
    tools: Object.freeze([...input.tools].sort(byCodeUnit)),
    files: Object.freeze(input.agentsMd === undefined ? {} : { agents_md: input.agentsMd }),
    language: input.language,
    skills: Object.freeze({
      ...(input.skills ?? NO_SKILLS),
      entries: Object.freeze((input.skills ?? NO_SKILLS).entries.map((entry) => Object.freeze({ ...entry }))),
    }),
  });
}
