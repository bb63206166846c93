import { join } from "node:path";
import { loadManifest } from "@podkit/manifest";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { loadSubpodRoles } from "../src/subpods/roles.js";
import { useTempDirs, writeFiles } from "./helpers.js";
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

describe("sub-pods: a role with its own manifest gets the root's overlays", () => {
  const tempDir = useTempDirs();

  async function rolesWith(roleFile: string, roleTable: string, overlays: string[]) {
    const root = await tempDir("overlays");
    await writeFiles(root, {
      "project/.podkit/manifest.toml": [
        '[pod]\nname = "root"',
        '[model]\nref = "anthropic/claude-sonnet-4-5"',
        '[[scope.allow]]\ntarget = ".."\npermission = "read"',
        `[subpods.ext]\ndescription = "external"\nmanifest = "ext.toml"\n${roleTable}`,
      ].join("\n"),
      "project/.podkit/ext.toml": roleFile,
    });
    const loaded = await loadManifest({
      overlays,
      env: { cwd: join(root, "project"), home: join(root, "home"), env: {} },
    });
    return (await loadSubpodRoles(loaded)).get("ext")?.loaded.manifest.model;
  }

  it("--set on the model reaches a role whose file does not set it; a role's file and its [subpods.<role>.model] still decide", async () => {
    const set = ['model.ref="openai-chat/gpt-local"', 'model.base_url="http://127.0.0.1:9/v1"'];
    // The role's file names no model: it goes where the root goes, with --set.
    expect(await rolesWith('[worker]\nsystem_prompt = "EXT"\n', "", set)).toMatchObject({
      ref: "openai-chat/gpt-local",
      base_url: "http://127.0.0.1:9/v1",
    });
    // Control (the bug): without --set the role keeps the workspace's model, as before.
    expect(await rolesWith('[worker]\nsystem_prompt = "EXT"\n', "", [])).toMatchObject({
      ref: "anthropic/claude-sonnet-4-5",
    });
    // The role's own file picks its model; --set of the base URL still applies on top.
    expect(
      await rolesWith('[model]\nref = "google/gemini-2.5-flash"\n', "", [
        'model.base_url="http://127.0.0.1:9/v1"',
      ]),
    ).toMatchObject({ ref: "google/gemini-2.5-flash", base_url: "http://127.0.0.1:9/v1" });
    // The role's table overrides the root's --set.
    expect(
      await rolesWith(
        '[worker]\nsystem_prompt = "EXT"\n',
        '[subpods.ext.model]\nref = "anthropic/claude-haiku-4-5"',
        set,
      ),
    ).toMatchObject({ ref: "anthropic/claude-haiku-4-5" });
  });
});
