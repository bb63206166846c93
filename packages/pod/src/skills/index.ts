export { SkillDefinitionError, SkillListingOverBudgetError } from "./errors.js";
export { PodSkills, type PodSkillsContext } from "./pod-skills.js";
export { NO_SKILLS, type SkillsVariable } from "./skill-listing.js";
export {
  type ActiveSkill,
  SKILLS_KNOWN_DOMAIN,
  SKILLS_LOADED_DOMAIN,
  type SkillMode,
  type SkillsKnown,
  type SkillsLoaded,
} from "./skill-records.js";
export { SKILL_TOOL_NAME } from "./skill-tool.js";
