import type { AfterTurnJob, Pod, AfterTurnJobContext as PodJobContext, PromptCatalog } from "@podkit/pod";
import type { AfterTurnJobContext, AfterTurnJobLike, MemoryHost, MemoryPrompts } from "../src/index.js";

/**
 * Type-level test (compiled by `pnpm typecheck`, never run): memory's structural copies of the
 * pod's interfaces agree with the pod's own, so memory needs no dependency on the pod. A change
 * on either side that breaks the seam fails the typecheck here.
 */
export const podHostsMemory = (pod: Pod): MemoryHost => pod;
export const catalogRendersMemoryPrompts = (catalog: PromptCatalog): MemoryPrompts => catalog;
export const podContextServesMemoryJob = (context: PodJobContext): AfterTurnJobContext => context;
export const memoryJobIsAPodJob = (job: AfterTurnJobLike): AfterTurnJob => job;
