import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createModelAdapter } from "@podkit/llm-worker";
import { expect, it } from "vitest";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { attachMemory } from "../src/pod/attach-memory.js";
import { memoryPaths } from "../src/records/layout.js";
import { readAuditLog } from "../src/store/audit-log.js";
import { lintWorkspaceMemory } from "../src/workspace-api.js";
import { callTool, clock, MODEL_REF, record, say, stagingFiles } from "./helpers.js";
import { usePodWorlds } from "./pod-helpers.js";

const world = usePodWorlds();

const none = { decisions: [], discussions: [], attempts: [], requests: [] };
const SESSIONS = [
  {
    input: "Lay out the repo. npm hoisting broke our builds last time.",
    extracted: {
      ...none,
      decisions: [
        {
          topic: "pnpm workspace layout",
          decision: "Use pnpm workspaces, one package per folder",
          reason: "npm hoisting broke builds",
        },
      ],
    },
  },
  {
    input: "From now on answer in English, even when I write German.",
    extracted: { ...none, requests: [{ topic: "answer language", request: "Answer in English" }] },
  },
  {
    input: "Try npm workspaces once more for the new package.",
    extracted: {
      ...none,
      attempts: [
        {
          topic: "pnpm workspace layout again",
          tried: "npm workspaces for packages/new",
          observed: "hoisting broke the build again",
        },
      ],
    },
  },
];

it("three sessions → staging with sources → one consolidation → linted records, one knowledge entry from the candidate report", async () => {
  const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100");

  // Three sessions in one workspace, each extracted after its turn by the pod's after-turn job.
  const sessions: { sessionId: string; segmentId: string; next: number }[] = [];
  for (const session of SESSIONS) {
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("Noted."), callTool("write_extracted", session.extracted), say("ok"));
    await pod.run(session.input).result;
    await pod.whenJobsIdle();
    const pointer = pod.extensions.get("memory.extract") as { next_entry: number };
    sessions.push({
      sessionId: pod.sessionId ?? "",
      segmentId: pod.segmentId ?? "",
      next: pointer.next_entry,
    });
    await pod.close();
  }
  const staged = await stagingFiles(w.workspace);
  expect(staged.map((s) => [s.session_id, s.source])).toEqual(
    sessions.map((s) => [s.sessionId, { segment_id: s.segmentId, range: [1, s.next - 1] }]),
  );
  const [s1, s2, s3] = staged.map((s) => s.source) as unknown[];

  // The consolidation worker, scripted as a model following memory_consolidation_system: it
  // names staged items by id (s1-d1: the first decision of the first staging entry) and never
  // writes a source; the tools write them from the staging data.
  const decision = record(
    "status: resolved",
    "Use pnpm workspaces with one package per folder: npm hoisting broke builds.",
  );
  const request = record("", "Answer in English, also when the user writes another language.");
  const knowledge = record(
    "kind: howto\ndescription: How packages are laid out in this repository; use when adding or moving a package.\nmodel_invocation: false",
    "One package per folder under a pnpm workspace; npm workspaces break on hoisting (see #use-pnpm-workspaces).",
  );
  const summary = record(
    "",
    "The repository is a pnpm workspace (#use-pnpm-workspaces). Answers are in English.\nTrend: npm workspaces keep breaking on hoisting.",
  );
  w.double.enqueue(
    callTool("knowledge_query", { query: "pnpm workspace" }),
    callTool("memory_write", {
      kind: "decision",
      slug: "use-pnpm-workspaces",
      content: decision,
      reason: "settled layout decision from staging",
      staged: ["s1-d1"],
    }),
    callTool("memory_write", {
      kind: "request",
      slug: "answer-in-english",
      content: request,
      reason: "standing user request",
      staged: ["s2-r1"],
    }),
    // Not in the candidate report: refused, the model then names the report's items.
    callTool("memory_write", {
      kind: "knowledge",
      slug: "pnpm-workspace-layout",
      content: knowledge,
      reason: "recurring topic",
      staged: ["s2-r1"],
    }),
    callTool("memory_write", {
      kind: "knowledge",
      slug: "pnpm-workspace-layout",
      content: knowledge,
      reason: "topic recurs in two sessions",
      staged: ["s1-d1", "s3-a1"],
    }),
    callTool("memory_write", { kind: "summary", slug: "summary", content: summary, reason: "first summary" }),
    say("Integrated three staging entries."),
    say("Nothing to tidy."),
  );
  const requestsBefore = w.double.requests.length;
  const result = await runMemoryConsolidation({
    workspace: w.workspace,
    model: createModelAdapter(MODEL_REF, { baseUrl: w.double.baseUrl, apiKey: "test-key" }),
    prompts: (await w.pod()).catalog,
    language: "English",
    clock,
    force: true,
  });
  if (result.status !== "consolidated") throw new Error(`expected a consolidation, got ${result.status}`);

  // The candidate report: the workspace-layout topic recurs in sessions 1 and 3, not the language request.
  expect(result.candidates).toEqual([
    expect.objectContaining({
      topic: "pnpm workspace layout",
      sessions: [sessions[0]?.sessionId, sessions[2]?.sessionId],
      sources: [s1, s3],
    }),
  ]);
  const input = w.double.requests[requestsBefore]?.body.messages[0].content[0].text as string;
  expect(input).toContain("# Knowledge candidate report");
  expect(input.slice(input.indexOf("# Knowledge candidate report"))).toContain(
    '## "pnpm workspace layout" (sessions: ',
  );
  const refused = JSON.stringify(w.double.requests[requestsBefore + 4]?.body.messages.at(-1));
  expect(refused).toContain("candidate report");

  // Records pass the linter; exactly one knowledge entry, not auto-invoked.
  expect(await lintWorkspaceMemory(w.workspace)).toEqual({ errors: [], warnings: [] });
  const paths = memoryPaths(w.workspace);
  const knowledgeText = await readFile(join(paths.knowledgeDir, "pnpm-workspace-layout.md"), "utf8");
  expect(knowledgeText).toContain("model_invocation: false");
  expect(knowledgeText).toContain(`last_sources:\n${yamlSources([s1, s3])}\n`);
  // Provenance by code: each record cites exactly the sources of the items it named.
  const decisionText = await readFile(join(paths.memoryDir, "decisions/use-pnpm-workspaces.md"), "utf8");
  expect(decisionText).toContain(`sources:\n${yamlSources([s1])}\n---`);
  const requestText = await readFile(join(paths.memoryDir, "requests/answer-in-english.md"), "utf8");
  expect(requestText).toContain(`sources:\n${yamlSources([s2])}\n---`);
  expect(await readFile(paths.summaryFile, "utf8")).toContain("pnpm workspace");

  // Consumed staging and the lock are gone; one audit record per change, with hashes of what is on disk.
  expect(result.consumed.sort()).toEqual(staged.map((s) => s.id).sort());
  expect(await stagingFiles(w.workspace)).toEqual([]);
  expect(existsSync(paths.lockFile)).toBe(false);
  const audit = await readAuditLog(paths);
  const applied = audit.filter((a) => a.status === "applied");
  expect(applied.map((a) => [a.op, a.kind, a.slug])).toEqual([
    ["create", "decision", "use-pnpm-workspaces"],
    ["create", "request", "answer-in-english"],
    ["create", "knowledge", "pnpm-workspace-layout"],
    ["create", "summary", "summary"],
  ]);
  for (const a of applied) {
    const file =
      a.kind === "summary"
        ? paths.summaryFile
        : a.kind === "knowledge"
          ? join(paths.knowledgeDir, `${a.slug}.md`)
          : join(paths.memoryDir, `${a.kind}s/${a.slug}.md`);
    expect(a.after_hash).toBe(
      createHash("sha256")
        .update(await readFile(file, "utf8"))
        .digest("hex"),
    );
    expect(a).toMatchObject({ before_hash: null, run_id: result.runId });
  }
  expect(audit.filter((a) => a.status === "rejected").map((a) => a.slug)).toEqual(["pnpm-workspace-layout"]);
});

function yamlSources(sources: unknown[]): string {
  return sources
    .map((s) => {
      const { segment_id, range } = s as { segment_id: string; range: [number, number] };
      return `  - segment_id: ${segment_id}\n    range: [${range[0]}, ${range[1]}]`;
    })
    .join("\n");
}
