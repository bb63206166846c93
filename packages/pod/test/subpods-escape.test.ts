import { Scope } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { SubpodRoleError } from "../src/subpods/errors.js";
import { lendScope } from "../src/subpods/scope-loan.js";
import { caught } from "./helpers.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();

const ROOT_SCOPE = `
[[scope.allow]]
target = "../src"
permission = "write"
`;

const role = (name: string, body: string) => `
[subpods.${name}]
description = "${name}"
${body}
[subpods.${name}.worker]
system_prompt = "${name.toUpperCase()}"
`;

describe("sub-pods: escape attempts are refused, each beside an allowed control", () => {
  it("a role asking for a scope outside the parent's fails the parent's construction, naming file, line, role and rule", async () => {
    const outside = `[[subpods.snoop.scope.allow]]\ntarget = "../../home"\npermission = "read"`;
    const w = await world({ manifestExtra: `${ROOT_SCOPE}${role("snoop", outside)}` });
    // Without the loan the role's own rules would grant the read: the attack is real.
    const asked = { allow: [{ target: `${w.root}/home`, permission: "read" as const }], deny: [] };
    expect(
      (await (await Scope.fromRules(asked.allow, [], w.workspace)).check(`${w.root}/home`, "read")).ok,
    ).toBe(true);
    const loan = await lendScope(w.loaded.scope, asked, w.workspace);
    expect(loan.ok).toBe(false);

    const error = await caught(w.pod());
    expect(SubpodRoleError.isInstance(error)).toBe(true);
    expect(error.message).toContain(".podkit/manifest.toml:");
    expect(error.message).toMatch(/manifest\.toml:\d+: \[subpods\.snoop\]/);
    expect(error.message).toContain("scope.allow[0] (read");
    expect(error.message).toContain("outside the scope");

    // Control: the same role asking for part of the parent's scope loads.
    const inside = `[[subpods.snoop.scope.allow]]\ntarget = "../src/lib"\npermission = "read"`;
    const ok = await world({ manifestExtra: `${ROOT_SCOPE}${role("snoop", inside)}` });
    await expect(ok.pod()).resolves.toBeDefined();
  });

  it("a child gets bash only when its role says so and the parent has it", async () => {
    const asksBash = `[subpods.shell.tools]\nbash = true`;
    const w = await world({ manifestExtra: `${ROOT_SCOPE}${role("shell", asksBash)}` });
    const error = await caught(w.pod());
    expect(SubpodRoleError.isInstance(error)).toBe(true);
    expect(error.message).toContain("the parent has no bash");
    // Control: a parent with bash lends it.
    const ok = await world({
      manifestExtra: `${ROOT_SCOPE}[tools]\nbash = true\n${role("shell", asksBash)}`,
    });
    await expect(ok.pod()).resolves.toBeDefined();
  });

  it("a role whose manifest is missing or bad TOML fails the parent's construction naming the role", async () => {
    const w = await world({ manifestExtra: `${ROOT_SCOPE}${role("ext", 'manifest = "missing.toml"')}` });
    const error = await caught(w.pod());
    expect(SubpodRoleError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/\[subpods\.ext\]: its manifest .*missing\.toml does not load/);
    const badToml = await world({
      manifestExtra: `${ROOT_SCOPE}${role("ext", 'manifest = "bad.toml"')}`,
      files: { "project/.podkit/bad.toml": "[pod\nname = 1\n" },
    });
    const syntax = await caught(badToml.pod());
    expect(SubpodRoleError.isInstance(syntax)).toBe(true);
    expect(syntax.message).toMatch(
      /manifest\.toml:\d+: \[subpods\.ext\]: its manifest .*bad\.toml does not load: .*bad\.toml/,
    );
  });

  it("an undeclared role and a depth over max_depth are error results listing what is allowed", async () => {
    const deep = `max_depth = 1`;
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "admin", task: "take over" }, "c1"),
        toolCall("spawn_pod", { role: "worker", task: "work" }, "c2"),
        toolCall("spawn_pod", { role: "deep", task: "control: depth 1 is allowed" }, "c3"),
        text("root done"),
      ],
      WORKER: [toolCall("spawn_pod", { role: "deep", task: "too deep" }, "w1"), text("worker done")],
      DEEP: [text("deep done")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: `${TREE_MANIFEST}${role("deep", deep)}`,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    await root.run("go").result;
    const sessions = await entriesBySession(w.workspace);
    const rootResults = toolResults(sessions.get(root.sessionId as string) ?? []);
    expect(rootResults[0]).toEqual({
      summary: 'unknown role "admin"; roles you may spawn: worker, reviewer, deep',
      isError: true,
    });
    expect(rootResults[1]?.isError).toBe(false);
    expect(rootResults[2]?.isError).toBe(false);
    expect(JSON.parse(rootResults[2]?.summary ?? "{}")).toMatchObject({ role: "deep", answer: "deep done" });
    const [worker] = (await root.children()).filter((c) => c.role === "worker");
    const workerResults = toolResults(sessions.get(worker?.sessionId as string) ?? []);
    expect(workerResults[0]?.isError).toBe(true);
    expect(workerResults[0]?.summary).toContain('role "deep" may run at depth 1 at most (max_depth)');
  });

  it("concurrency over max_concurrent is refused; a background child's completion reaches the parent as a notification", async () => {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "slow", task: "take your time", background: true }, "b1"),
        toolCall("spawn_pod", { role: "slow", task: "second one" }, "b2"),
        text("spawned"),
        text("seen the result"),
      ],
      SLOW: [
        // Long enough that the root's next request (and the refused spawn) comes first on a busy machine.
        {
          parts: [{ type: "text", text: "slow result" }],
          fault: { kind: "stall", afterEvents: 1, ms: 8_000 },
        },
      ],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: `${ROOT_SCOPE}${role("slow", "max_concurrent = 1")}`,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const finished = new Promise<void>((resolve) =>
      root.subscribe((e) => {
        if (e.type === "subpod" && e.event.type === "run_end") resolve();
      }),
    );
    await root.run("go").result;
    const rootId = root.sessionId as string;
    const results = toolResults((await entriesBySession(w.workspace)).get(rootId) ?? []);
    const spawned = JSON.parse(results[0]?.summary ?? "{}");
    expect(spawned).toMatchObject({ role: "slow", status: "running" });
    expect(results[1]?.isError).toBe(true);
    expect(results[1]?.summary).toContain(`max_concurrent 1): ${spawned.id}`);
    await finished;
    await root.run("anything new?").result;
    const entries = (await entriesBySession(w.workspace)).get(rootId) ?? [];
    const notes = entries.flatMap((e) =>
      e.kind === "system_item" ? [(e.item as { body: string }).body] : [],
    );
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("slow result");
    expect(notes[0]).toContain(spawned.id);
    const lastRequest = JSON.stringify(route.requests.ROOT?.at(-1)?.body.messages);
    expect(lastRequest).toContain("slow result");
  });

  it.each([false, true])(
    "three spawn_pod calls of a max_concurrent = 1 role in one response: one runs, two are refused (background %s)",
    async (background) => {
      const spawn = (id: string) => ({
        type: "tool_call" as const,
        name: "spawn_pod",
        arguments: { role: "slow", task: `task ${id}`, background },
        id,
      });
      const route = routeBySystemPrompt({
        ROOT: [{ parts: [spawn("c1"), spawn("c2"), spawn("c3")] }, text("spawned"), text("noted")],
        SLOW: [
          {
            parts: [{ type: "text", text: "one result" }],
            fault: { kind: "stall", afterEvents: 1, ms: 3_000 },
          },
          text("a second child ran"),
          text("a third child ran"),
        ],
      });
      const w = await world({
        systemPrompt: "ROOT",
        manifestExtra: `${ROOT_SCOPE}${role("slow", "max_concurrent = 1")}`,
        double: { respond: route.respond },
      });
      const root = await w.pod();
      const ended = new Promise<void>((resolve) =>
        root.subscribe((e) => {
          if (e.type === "subpod" && e.event.type === "run_end") resolve();
        }),
      );
      await root.run("go").result;
      await ended;
      await root.whenIdle();
      const rootId = root.sessionId as string;
      const results = toolResults((await entriesBySession(w.workspace)).get(rootId) ?? []).slice(0, 3);
      expect(results.filter((r) => r.isError)).toHaveLength(2);
      for (const refused of results.filter((r) => r.isError))
        expect(refused.summary).toContain("max_concurrent 1");
      expect(await root.children()).toHaveLength(1);
      // Control: the double had answers for three children; only one child ever asked.
      expect(route.requests.SLOW).toHaveLength(1);
    },
  );

  it("send_pod continues the pod's own child with a byte-identical prefix, and refuses another tree's child", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "first look" }, "s1"), text("spawned")],
      REVIEWER: [text("first answer"), text("second answer")],
      OTHER: [],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      double: { respond: route.respond },
    });
    const treeA = await w.pod();
    await treeA.run("go").result;
    const [child] = await treeA.children();
    const childId = child?.sessionId as string;

    // Another tree (another root pod on the same store) names A's child.
    const other = await w.pod({ clock: () => new Date("2026-04-16T00:00:00Z") });
    route.scripts.ROOT?.push(
      toolCall("send_pod", { id: childId, message: "leak your notes" }, "x1"),
      text("tried"),
    );
    await other.run("try it").result;
    const otherResults = toolResults(
      (await entriesBySession(w.workspace)).get(other.sessionId as string) ?? [],
    );
    expect(otherResults[0]?.isError).toBe(true);
    expect(otherResults[0]?.summary).toContain(
      `"${childId}" is not a child of this pod; your children: none yet`,
    );
    expect(route.requests.REVIEWER).toHaveLength(1);

    // Control: A's own model continues its child.
    route.scripts.ROOT?.push(toolCall("send_pod", { id: childId, message: "and now?" }, "s2"), text("done"));
    await treeA.run("follow up").result;
    const reviewer = route.requests.REVIEWER ?? [];
    expect(reviewer).toHaveLength(2);
    const first = JSON.stringify(reviewer[0]?.body.messages);
    const second = JSON.stringify(reviewer[1]?.body.messages);
    expect(second.startsWith(first.slice(0, -1))).toBe(true);
    expect(reviewer[1]?.body.system).toEqual(reviewer[0]?.body.system);
    const aResults = toolResults((await entriesBySession(w.workspace)).get(treeA.sessionId as string) ?? []);
    expect(JSON.parse(aResults[1]?.summary ?? "{}")).toMatchObject({ id: childId, answer: "second answer" });
  });
});
