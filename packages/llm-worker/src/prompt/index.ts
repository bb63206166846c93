export { MAX_CACHE_BREAKPOINTS, planCacheBreakpoints } from "./cache-breakpoints.js";
export { type CacheBreakpoints, toolResultText, toV3Prompt } from "./to-v3-prompt.js";
