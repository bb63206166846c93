export { canonicalJson, contextKey } from "./context-key.js";
export type { ContextSection, ContextSectionState } from "./context-section.js";
export { ContextSections, type ContextUpdate, EMPTY_CONTEXT_KEY } from "./context-sections.js";
export { NOTES_FILE } from "./notes-section.js";
