import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { routeBySystemPrompt } from "./subpods-harness.js";

const world = usePodWorlds();

const ROLE = (maxDepth: number) => `
[subpods.reviewer]
description = "reviews"
max_depth = ${maxDepth}
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
`;

/** The tool names a captured Anthropic request offered. */
const toolsOf = (request: CapturedRequest | undefined): string[] =>
  ((request?.body.tools ?? []) as { name: string }[]).map((tool) => tool.name);

describe("sub-pods: what a child is built with", () => {
  it("a child of a pod with [memory] spawns with the application's packages and attaches no memory of its own", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "look" }, "call-r"), text("root done")],
      REVIEWER: [text("looked")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: `[memory]\nextract_threshold = 1000000\n${ROLE(2)}`,
      double: { respond: route.respond },
    });
    const attached: unknown[] = [];
    const memoryPackage = async () => ({ attachMemory: (pod: unknown) => attached.push(pod) });
    const root = await w.pod({ packages: { "@podkit/memory": memoryPackage } });
    // Control: the root's [memory] is attached through the package the application passed.
    expect(attached).toEqual([root]);
    expect((await root.run("get a review").result).text).toBe("root done");
    const [child] = await root.children();
    expect(child).toMatchObject({ role: "reviewer", status: "idle", turns: 1 });
    // The child inherits the manifest's [memory], yet nothing attached memory to it.
    expect(attached).toHaveLength(1);
  });

  it("a child none of whose roles may run one level deeper is offered no sub-pod tools; a parent that may spawn is", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "look" }, "call-r"), text("root done")],
      REVIEWER: [text("looked")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: ROLE(1),
      double: { respond: route.respond },
    });
    const root = await w.pod();
    await root.run("get a review").result;
    expect(toolsOf(route.requests.ROOT?.[0])).toEqual(
      expect.arrayContaining(["spawn_pod", "send_pod", "stop_pod", "list_pods"]),
    );
    const reviewerTools = toolsOf(route.requests.REVIEWER?.[0]);
    expect(reviewerTools).toContain("read_file");
    expect(reviewerTools.filter((name) => name.endsWith("_pod") || name.endsWith("_pods"))).toEqual([]);

    // Control: with max_depth 2 the child could delegate once more, so it gets the tools.
    const deeper = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "look" }, "call-r"), text("root done")],
      REVIEWER: [text("looked")],
    });
    const w2 = await world({
      systemPrompt: "ROOT",
      manifestExtra: ROLE(2),
      double: { respond: deeper.respond },
    });
    await (await w2.pod()).run("get a review").result;
    expect(toolsOf(deeper.requests.REVIEWER?.[0])).toContain("spawn_pod");
  });
});
