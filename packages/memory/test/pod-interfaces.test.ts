import type {
  AfterTurnJob,
  AfterTurnJobContext,
  ContextSection,
  JobProgressEvent,
  Pod,
  PodEvent,
  PromptCatalog,
} from "@podkit/pod";
import { describe, expectTypeOf, it } from "vitest";
import type { AfterTurnJobLike, MemoryHost } from "../src/pod/attach-memory.js";
import type { AfterTurnJobContext as MemoryJobContext, MemoryJobEvent } from "../src/pod/memory-job.js";
import type { ContextSectionLike } from "../src/pod/memory-section.js";
import type { MemoryPrompts } from "../src/worker/memory-model.js";

// Memory must not depend on the pod (the pod is only its dev dependency), so it keeps structural
// copies of the pod's interfaces. These checks are compiled by `pnpm typecheck` (tsconfig.tests.json):
// a pod interface that drifts from memory's copy fails the type check, not a user at run time.
describe("memory's copies of the pod's interfaces agree with the pod's types", () => {
  it("a Pod is a MemoryHost, and the pod's catalog serves memory's prompts", () => {
    expectTypeOf<Pod>().toExtend<MemoryHost>();
    expectTypeOf<PromptCatalog>().toExtend<MemoryPrompts>();
  });

  it("memory's job is an after-turn job the pod takes, and the pod's job context is the one memory's job reads", () => {
    expectTypeOf<AfterTurnJobLike>().toExtend<AfterTurnJob>();
    expectTypeOf<AfterTurnJob>().toExtend<AfterTurnJobLike>();
    expectTypeOf<AfterTurnJobContext>().toExtend<MemoryJobContext>();
    expectTypeOf<
      ReturnType<typeof import("../src/pod/memory-job.js").createMemoryJob>
    >().toExtend<AfterTurnJob>();
  });

  it("memory's progress events are the pod's job_progress events (narrowed to memory's job names)", () => {
    expectTypeOf<MemoryJobEvent>().toExtend<JobProgressEvent>();
    expectTypeOf<MemoryJobEvent>().toExtend<PodEvent>();
    expectTypeOf<Omit<JobProgressEvent, "job">>().toEqualTypeOf<Omit<MemoryJobEvent, "job">>();
  });

  it("the memory section is a pod context section", () => {
    expectTypeOf<ContextSectionLike<string>>().toExtend<ContextSection<string>>();
  });
});
