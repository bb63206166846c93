import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { type Entry, FsStore } from "@podkit/session-store";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/context/context-key.js";
import { toOutputSchema } from "../src/output/output-schema.js";
import type { PodEvent } from "../src/pod/events.js";
import { loadSubpodRoles } from "../src/subpods/roles.js";
import { type ChildPod, hostSubpods } from "../src/subpods/subpod-host.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, toolResults } from "./subpods-harness.js";

// Typed answers through sub-pods (docs/subpods.md#typed-answers): a role's [subpods.<role>.output]
// is its child's [output], and the child's checked answer reaches the parent as an object.

const world = usePodWorlds();

const VERDICT_SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: {
      type: "array",
      items: { type: "object", properties: { line: { type: "integer" } }, required: ["line"] },
    },
  },
  required: ["verdict", "findings"],
  additionalProperties: false,
};

const SUMMARY_SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" } },
  required: ["summary"],
};

const FILES = {
  "project/src/a.ts": "export {}\n",
  "project/.podkit/verdict.schema.json": JSON.stringify(VERDICT_SCHEMA),
  "project/.podkit/summary.schema.json": JSON.stringify(SUMMARY_SCHEMA),
};

/** A root that may write the workspace, a reviewer that answers with a verdict and a worker that answers in text. */
const TYPED_TREE = `
[[scope.allow]]
target = ".."
permission = "write"

[subpods.reviewer]
description = "reviews code, read-only; answers with a verdict"
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
[subpods.reviewer.output]
schema = "verdict.schema.json"
max_repairs = 1
[[subpods.reviewer.scope.allow]]
target = "../src"
permission = "read"

[subpods.worker]
description = "writes code in src"
[subpods.worker.worker]
system_prompt = "WORKER"
[[subpods.worker.scope.allow]]
target = "../src"
permission = "write"
`;

const verdict = (args: Record<string, unknown>, id: string) => toolCall("final_answer", args, id);

/** The tools a captured Anthropic request offered. */
const toolsOf = (request: CapturedRequest | undefined): { name: string; input_schema?: unknown }[] =>
  (request?.body as { tools?: { name: string; input_schema?: unknown }[] } | undefined)?.tools ?? [];

const toolNames = (request: CapturedRequest | undefined): string[] =>
  toolsOf(request).map((tool) => tool.name);

function outputEntries(entries: readonly Entry<Item>[]): Record<string, unknown>[] {
  return entries.flatMap((e) =>
    e.kind === "extension" && e.domain === "final_output" ? [e.payload as Record<string, unknown>] : [],
  );
}

describe("sub-pods: a typed child's answer reaches its parent as an object", () => {
  it("a reviewer with [subpods.reviewer.output]: the parent's tool result, list, events and the child's final_output all carry the verdict", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "review src/a.ts" }, "call-review"), text("ok")],
      // Wrapped: the parent gets the checked value, not what the model sent.
      REVIEWER: [verdict({ output: { verdict: "reject", findings: [{ line: 3 }] } }, "call-verdict")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TYPED_TREE,
      files: FILES,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const events: PodEvent[] = [];
    root.subscribe((event) => events.push(event));
    const result = await root.run("get the change reviewed").result;
    expect(result.text).toBe("ok");
    const expected = { verdict: "reject", findings: [{ line: 3 }] };

    const [child] = await root.children();
    const childId = child?.sessionId as string;
    expect(child).toMatchObject({ role: "reviewer", status: "idle", output: expected });
    const sessions = await entriesBySession(w.workspace);
    const [spawned] = toolResults(sessions.get(root.sessionId as string) ?? []);
    expect(spawned?.isError).toBe(false);
    expect(JSON.parse(spawned?.summary ?? "{}")).toEqual({
      id: childId,
      role: "reviewer",
      answer: expected,
      usage: expect.objectContaining({ requests: 1 }),
    });
    // The parent's model read it in its next request.
    expect(route.requests.ROOT?.[1]?.rawBody).toContain('\\"verdict\\":\\"reject\\"');

    // The child ran with the role's schema: its final_answer tool, its final_output entry.
    expect(toolNames(route.requests.REVIEWER?.[0])).toContain("final_answer");
    expect(toolNames(route.requests.ROOT?.[0])).not.toContain("final_answer");
    // The parent's spawn_pod names the role's answer schema, so its model knows what comes back.
    const spawn = toolsOf(route.requests.ROOT?.[0]).find((tool) => tool.name === "spawn_pod") as
      | { description?: string }
      | undefined;
    expect(spawn?.description).toContain(
      `- reviewer: reviews code, read-only; answers with a verdict (answers with JSON matching ${canonicalJson(toOutputSchema(VERDICT_SCHEMA).jsonSchema)})`,
    );
    expect(outputEntries(sessions.get(childId) ?? [])).toEqual([
      expect.objectContaining({
        value: expected,
        schema_digest: toOutputSchema(VERDICT_SCHEMA).digest,
        normalizations: ["unwrapped:output"],
      }),
    ]);
    expect(outputEntries(sessions.get(root.sessionId as string) ?? [])).toEqual([]);

    // The child's run_end reaches the parent's stream with the typed answer.
    const ended = events.find((e) => e.type === "subpod" && e.event.type === "run_end");
    expect(ended?.type === "subpod" && ended.event.type === "run_end" && ended.event.result).toMatchObject({
      output: expected,
    });

    // A restored parent lists the stored child with its answer, read from the child's log.
    await root.close();
    const restored = await w.restore(root.sessionId as string);
    expect(await restored.children()).toEqual([
      expect.objectContaining({ status: "stored", output: expected }),
    ]);
  });

  it("a child whose answer never validates: the parent gets an error result naming the violations, and its run goes on", async () => {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "reviewer", task: "review" }, "call-review"),
        text("I review it myself"),
      ],
      // max_repairs = 1: one error result, then the second invalid answer fails the child's run.
      REVIEWER: [
        verdict({ verdict: "maybe", findings: [] }, "call-bad-1"),
        verdict({ verdict: "perhaps", findings: [] }, "call-bad-2"),
      ],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TYPED_TREE,
      files: FILES,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const result = await root.run("get the change reviewed").result;
    expect(result.status).toBe("finished");
    expect(result.text).toBe("I review it myself");

    const [child] = await root.children();
    expect(child?.status).toBe("failed");
    expect(child?.output).toBeUndefined();
    const sessions = await entriesBySession(w.workspace);
    const [spawned] = toolResults(sessions.get(root.sessionId as string) ?? []);
    expect(spawned?.isError).toBe(true);
    expect(spawned?.summary).toContain(child?.sessionId as string);
    expect(spawned?.summary).toContain(
      'does not match the output schema after 1 repair: /verdict: must be one of "approve", "reject"',
    );
    // Nothing half-written: the child's log has no answer, and its run ended in error.
    const childEntries = sessions.get(child?.sessionId as string) ?? [];
    expect(outputEntries(childEntries)).toEqual([]);
    expect(childEntries.at(-1)?.kind).toBe("run_errored");
  });

  it("send_pod to a typed child returns its new typed answer", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "review" }, "call-review"), text("asked")],
      REVIEWER: [verdict({ verdict: "reject", findings: [{ line: 3 }] }, "call-first")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TYPED_TREE,
      files: FILES,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    await root.run("get it reviewed").result;
    const childId = (await root.children())[0]?.sessionId as string;

    route.scripts.ROOT?.push(
      toolCall("send_pod", { id: childId, message: "line 3 is fixed; review again" }, "call-again"),
      text("approved"),
    );
    route.scripts.REVIEWER?.push(verdict({ verdict: "approve", findings: [] }, "call-second"));
    await root.run("ask again").result;

    const sessions = await entriesBySession(w.workspace);
    const [, again] = toolResults(sessions.get(root.sessionId as string) ?? []);
    expect(again?.isError).toBe(false);
    expect(JSON.parse(again?.summary ?? "{}")).toMatchObject({
      id: childId,
      answer: { verdict: "approve", findings: [] },
    });
    expect((await root.children())[0]?.output).toEqual({ verdict: "approve", findings: [] });
    expect(outputEntries(sessions.get(childId) ?? []).map((p) => p.call_id)).toEqual([
      "call-first",
      "call-second",
    ]);
    // The second run kept the first one's prefix: same tools, final_answer among them.
    const [first, second] = route.requests.REVIEWER ?? [];
    expect(toolNames(second)).toEqual(toolNames(first));
  });

  it("a background child's notification carries its typed answer", async () => {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "reviewer", task: "review", background: true }, "call-bg"),
        text("waiting for the verdict"),
        text("got it"),
      ],
      REVIEWER: [verdict({ verdict: "approve", findings: [] }, "call-verdict")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TYPED_TREE,
      files: FILES,
      double: { respond: route.respond },
    });
    const root = await w.pod({ autoRun: true });
    // The root's own second run is the one the child's notification starts.
    const rootRuns = new Promise<void>((resolve) => {
      let ended = 0;
      root.subscribe((e) => {
        if (e.type === "run_end" && ++ended === 2) resolve();
      });
    });
    await root.run("review in the background").result;
    await rootRuns;

    const entries = (await entriesBySession(w.workspace)).get(root.sessionId as string) ?? [];
    const notes = entries.flatMap((e) =>
      e.kind === "system_item" && e.item.kind === "notification" ? [e.item.body] : [],
    );
    expect(notes).toHaveLength(1);
    // The notification wraps the child's result: the same JSON a foreground spawn_pod returns.
    const summary = notes[0]?.split("\n").find((line) => line.startsWith("{")) ?? "";
    expect(JSON.parse(summary)).toMatchObject({
      role: "reviewer",
      answer: { verdict: "approve", findings: [] },
    });
  });
});

describe("sub-pods: which [output] a child runs with", () => {
  it("a role without output does not inherit the parent's [output]; a role with one runs with its own", async () => {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "worker", task: "write it" }, "call-worker"),
        toolCall("spawn_pod", { role: "reviewer", task: "review it" }, "call-review"),
        toolCall("final_answer", { summary: "written and approved" }, "call-root-answer"),
      ],
      WORKER: [text("written")],
      REVIEWER: [verdict({ verdict: "approve", findings: [] }, "call-verdict")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: `${TYPED_TREE}\n[output]\nschema = "summary.schema.json"\n`,
      files: FILES,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const result = await root.run("write and review").result;
    // Control: the parent itself answers with its own schema.
    expect(result.output).toEqual({ summary: "written and approved" });
    expect(toolNames(route.requests.ROOT?.[0])).toContain("final_answer");

    // The worker (no output) has no final_answer, and answers in text.
    expect(toolNames(route.requests.WORKER?.[0])).not.toContain("final_answer");
    expect(toolNames(route.requests.WORKER?.[0])).toContain("read_file");
    // The reviewer's final_answer is the verdict schema, not the parent's summary.
    const reviewerTool = toolsOf(route.requests.REVIEWER?.[0]).find((tool) => tool.name === "final_answer");
    expect(JSON.stringify(reviewerTool?.input_schema)).toContain('"verdict"');
    expect(JSON.stringify(reviewerTool?.input_schema)).not.toContain('"summary"');

    const sessions = await entriesBySession(w.workspace);
    const [worked, reviewed] = toolResults(sessions.get(root.sessionId as string) ?? []);
    expect(JSON.parse(worked?.summary ?? "{}")).toMatchObject({ role: "worker", answer: "written" });
    expect(JSON.parse(reviewed?.summary ?? "{}")).toMatchObject({
      role: "reviewer",
      answer: { verdict: "approve", findings: [] },
    });
    const children = await root.children();
    expect(children.find((c) => c.role === "worker")).not.toHaveProperty("output");
  });

  it("a role's own manifest file: its [output] counts, the role's table overrides it, and the workspace's never leaks in", async () => {
    const w = await world({
      manifestExtra: `
[[scope.allow]]
target = ".."
permission = "write"

[output]
schema = "summary.schema.json"

[subpods.auditor]
description = "audits; its file declares no [output]"
manifest = "auditor.toml"

[subpods.judge]
description = "judges; its file declares [output]"
manifest = "judge.toml"

[subpods.overridden]
description = "judges, with the role's own schema"
manifest = "judge.toml"
[subpods.overridden.output]
schema = "summary.schema.json"
`,
      files: {
        ...FILES,
        "project/.podkit/auditor.toml": `[worker]\nsystem_prompt = "AUDITOR"\n`,
        "project/.podkit/judge.toml": `[worker]\nsystem_prompt = "JUDGE"\n[output]\nschema = "verdict.schema.json"\nmax_repairs = 3\n`,
      },
    });
    // Control: the cascade layers a role's file over the workspace's manifest, [output] included.
    const auditorAlone = await loadManifest({
      file: `${w.workspace}/.podkit/auditor.toml`,
      env: { cwd: w.workspace, home: w.home, env: {} },
    });
    expect(auditorAlone.manifest.output?.schema).toEqual(SUMMARY_SCHEMA);

    const roles = await loadSubpodRoles(w.loaded);
    const auditor = roles.get("auditor");
    expect(auditor?.loaded.manifest.output).toBeUndefined();
    expect(auditor?.output).toBeUndefined();
    const judge = roles.get("judge");
    expect(judge?.loaded.manifest.output).toMatchObject({ schema: VERDICT_SCHEMA, max_repairs: 3 });
    expect(judge?.output?.digest).toBe(toOutputSchema(VERDICT_SCHEMA).digest);
    const overridden = roles.get("overridden");
    expect(overridden?.loaded.manifest.output).toMatchObject({ schema: SUMMARY_SCHEMA, max_repairs: 2 });
    expect(overridden?.output?.digest).toBe(toOutputSchema(SUMMARY_SCHEMA).digest);
  });
});

describe("sub-pods: the parent checks a child's typed answer against the role's schema again", () => {
  it("an answer that does not match the role's schema is an error result, whatever the child was built with", async () => {
    const w = await world({ manifestExtra: TYPED_TREE, files: FILES });
    const roles = await loadSubpodRoles(w.loaded);
    const store = new FsStore<Item>({ root: `${w.workspace}/.podkit/sessions` });
    // A child whose own run accepted an answer the role's schema refuses (built with another schema).
    const child = (output: unknown): ChildPod => ({
      turn: 1,
      usage: [],
      awaitingApproval: false,
      run: () => ({ result: Promise.resolve({ status: "finished", text: "", output, usage: [] }) }),
      resume: () => ({ result: Promise.reject(new Error("not stopped")) }),
      notify: () => {},
      startSession: async () => "child-session",
      close: async () => {},
    });
    const spawnWith = async (output: unknown) => {
      const host = hostSubpods(
        {
          sessionId: () => "parent-session",
          store,
          scope: w.loaded.scope,
          workspace: w.workspace,
          placement: undefined,
          budget: undefined,
          text: ((key: string, context: unknown) => `${key} ${JSON.stringify(context)}`) as never,
          notify: () => {},
          warn: () => {},
          toolTraceContext: () => undefined,
          open: async () => child(output),
          delegate: () => {},
          delegatedTo: () => undefined,
        },
        roles,
        () => {},
      );
      return host.spawn("reviewer", "review", false, { callId: "c1", signal: new AbortController().signal });
    };
    // Control: a matching answer passes as the object.
    const valid = await spawnWith({ verdict: "approve", findings: [] });
    expect(valid.is_error).toBeUndefined();
    expect(JSON.parse(valid.summary)).toMatchObject({ answer: { verdict: "approve", findings: [] } });

    const invalid = await spawnWith({ verdict: "approve", findings: [{ line: "three" }] });
    expect(invalid.is_error).toBe(true);
    expect(invalid.summary).toContain("subpod_child_no_answer");
    expect(invalid.summary).toContain(
      `does not match role \\"reviewer\\"'s output schema: /findings/0/line: must be integer`,
    );

    const missing = await spawnWith(undefined);
    expect(missing.is_error).toBe(true);
    expect(missing.summary).toContain("finished without the typed answer");
  });
});
