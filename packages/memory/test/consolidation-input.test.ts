import { describe, expect, it } from "vitest";
import { knowledgeCandidates } from "../src/consolidate/candidate-report.js";
import { renderConsolidationInput } from "../src/consolidate/consolidation-input.js";
import { stagedItems } from "../src/consolidate/staged-items.js";
import { tidyHints } from "../src/consolidate/tidy-hints.js";
import type { StagingEntry } from "../src/extract/extract-schema.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { usageReport } from "../src/store/usage-log.js";
import { clock, decision, record, useMemoryWorlds, writeFiles } from "./helpers.js";

const world = useMemoryWorlds();
const TS = "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z";
const sources = (n: number) =>
  `sources:\n${Array.from({ length: n }, (_, i) => `  - segment_id: seg-1\n    range: [${i}, ${i}]`).join("\n")}`;

/** The text of one `# heading` section of the input, up to the next heading. */
function section(input: string, heading: string): string {
  const start = input.indexOf(`# ${heading}\n\n`);
  expect(start, `section "${heading}" is missing`).toBeGreaterThanOrEqual(0);
  const body = input.slice(start + heading.length + 4);
  const next = body.indexOf("\n\n# ");
  return next === -1 ? body : body.slice(0, next);
}

/** The input of a consolidation over a real workspace, built the way `runMemoryConsolidation` builds it. */
async function inputOver(
  files: Record<string, string>,
  usage: (store: MemoryStore) => Promise<void>,
  staging: StagingEntry[] = [],
) {
  const w = await world();
  await writeFiles(w.workspace, files);
  const store = await MemoryStore.open(w.workspace, { clock, by: "pod" });
  await usage(store);
  const lint = await store.lintAtOpen();
  const items = stagedItems(staging);
  // Rendered through the real layered catalog: every word the model reads is a catalog value.
  return renderConsolidationInput(w.catalog, {
    staging,
    items,
    candidates: knowledgeCandidates(items),
    summary: store.get("summary", "summary"),
    decisions: store.list("decision"),
    requests: store.list("request"),
    usage: await usageReport(store.paths),
    hints: tidyHints(store.list(), lint.warnings),
  });
}

const entry = (id: string, session: string, topic: string): StagingEntry => ({
  id,
  created_at: "2026-04-15T09:00:00Z",
  session_id: session,
  source: { segment_id: `seg-${id}`, range: [1, 8] },
  decisions: [{ topic, decision: "Use pnpm workspaces.", reason: "npm hoisting broke builds." }],
  discussions: [{ topic: "release cadence", summary: "Weekly or monthly?", settled: false }],
  attempts: [],
  requests: [{ topic: "answer language", request: "Answer in English." }],
});

describe("the consolidation input", () => {
  it("the usage report counts used and shown per record and marks records used 3 times as protected", async () => {
    const input = await inputOver(
      {
        ".podkit/memory/requests/answer-in-english.md": record(
          `${TS}\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
          "Answer in English.",
        ),
        ".podkit/memory/requests/keep-it-short.md": record(
          `${TS}\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
          "Keep answers short.",
        ),
      },
      async (store) => {
        for (let i = 0; i < 3; i++) await store.noteUsage("used", "request", "answer-in-english");
        await store.noteUsage("shown", "request", "answer-in-english");
        await store.noteUsage("shown", "request", "keep-it-short");
      },
    );
    const usage = section(input, "Usage report");
    expect(usage).toContain(
      "Records read explicitly (memory_read, knowledge_read) at least 3 times are protected",
    );
    expect(usage).toContain("- request answer-in-english: used 3, shown 1 (protected)");
    expect(usage).toContain("- request keep-it-short: used 0, shown 1");
    expect(usage).not.toContain("keep-it-short: used 0, shown 1 (protected)");
  });

  it("without usage events the usage report says so", async () => {
    const input = await inputOver({}, async () => {});
    expect(section(input, "Usage report")).toBe("(no usage recorded yet)");
  });

  it("the tidy hints list replaced chains, source overflow, similar slugs and linter warnings", async () => {
    const input = await inputOver(
      {
        ".podkit/memory/decisions/use-npm.md": decision("status: replaced\nreplaced_by: use-yarn"),
        ".podkit/memory/decisions/use-yarn.md": decision("status: replaced\nreplaced_by: use-pnpm"),
        ".podkit/memory/decisions/use-pnpm.md": decision("status: resolved"),
        ".podkit/memory/requests/cite-many-sources.md": record(`${TS}\n${sources(11)}`, "Many."),
        ".podkit/memory/requests/answer-english.md": record(
          `${TS}\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
          "English.",
        ),
        ".podkit/memory/requests/english-answer.md": record(
          `${TS}\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
          "English too.",
        ),
        ".podkit/knowledge/layout.md": record(
          `${TS}\nkind: howto\ndescription: How the workspace is laid out.\nmodel_invokation: false\nlast_sources: []`,
          "How.",
        ),
      },
      async () => {},
    );
    const hints = section(input, "Tidy hints");
    expect(hints).toContain("Replaced chains (oldest -> newest): \n- use-npm -> use-yarn -> use-pnpm");
    expect(hints).toContain("Records with more than 10 sources: \n- request cite-many-sources: 11 sources");
    // use-npm / use-pnpm are one typo apart: similar too.
    expect(hints).toContain(
      "Similar slugs: \n- decision: use-npm / use-pnpm\n- request: answer-english / english-answer",
    );
    expect(hints).toMatch(/Linter warnings: \n- \.podkit\/knowledge\/layout\.md \(model_invokation\): .+/);
  });

  it("a tidy tree gives hints of none", async () => {
    const input = await inputOver(
      { ".podkit/memory/decisions/use-pnpm.md": decision("status: resolved") },
      async () => {},
    );
    expect(section(input, "Tidy hints")).toBe(
      [
        "Replaced chains (oldest -> newest): none",
        "Records with more than 10 sources: none",
        "Similar slugs: none",
        "Linter warnings: none",
      ].join("\n"),
    );
  });
});

describe("staged items in the consolidation input", () => {
  it("each item is shown with its id and its own fields, never with a source; the candidate report lists item ids", async () => {
    const input = await inputOver({}, async () => {}, [
      entry("a", "session-1", "pnpm workspace layout"),
      entry("b", "session-2", "pnpm workspace layouts"),
    ]);
    const staging = section(input, "Staging entries to integrate");
    expect(staging).toContain("## s1 (session session-1, extracted 2026-04-15T09:00:00Z)");
    expect(staging).toContain(
      '- s1-d1 decision on "pnpm workspace layout": Use pnpm workspaces. Reason: npm hoisting broke builds.',
    );
    expect(staging).toContain('- s2-q1 discussion on "release cadence" (not settled): Weekly or monthly?');
    expect(staging).toContain('- s2-r1 request on "answer language": Answer in English.');
    // Provenance stays with code: no segment id or range reaches the model.
    expect(input).not.toContain("seg-a");
    expect(input).not.toContain("segment_id");
    const candidates = section(input, "Knowledge candidate report");
    expect(candidates).toContain("(sessions: session-1, session-2)");
    expect(candidates).toContain('- s1-d1 (decision, session session-1) on "pnpm workspace layout"');
    expect(candidates).toContain('- s2-d1 (decision, session session-2) on "pnpm workspace layouts"');
  });

  it("with no recurring topic the report says no knowledge may be created", async () => {
    const input = await inputOver({}, async () => {}, [entry("a", "session-1", "pnpm workspace layout")]);
    expect(section(input, "Knowledge candidate report")).toContain("create no new knowledge in this run");
  });
});
