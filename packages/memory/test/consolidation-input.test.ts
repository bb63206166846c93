import { describe, expect, it } from "vitest";
import { renderConsolidationInput } from "../src/consolidate/consolidation-input.js";
import { tidyHints } from "../src/consolidate/tidy-hints.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { usageReport } from "../src/store/usage-log.js";
import { clock, decision, record, useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();
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
async function inputOver(files: Record<string, string>, usage: (store: MemoryStore) => Promise<void>) {
  const workspace = await tempDir("input");
  await writeFiles(workspace, files);
  const store = await MemoryStore.open(workspace, { clock, by: "pod" });
  await usage(store);
  const lint = await store.lintAtOpen();
  return renderConsolidationInput({
    staging: [],
    summary: store.get("summary", "summary"),
    decisions: store.list("decision"),
    requests: store.list("request"),
    usage: await usageReport(store.paths.usageLog),
    hints: tidyHints(store.list(), lint.warnings),
    candidates: [],
  });
}

describe("the consolidation input", () => {
  it("the usage report counts used and shown per record and marks records used 3 times as protected", async () => {
    const input = await inputOver(
      {
        ".podkit/memory/requests/answer-in-english.md": record(`${TS}\nsources: []`, "Answer in English."),
        ".podkit/memory/requests/keep-it-short.md": record(`${TS}\nsources: []`, "Keep answers short."),
      },
      async (store) => {
        for (let i = 0; i < 3; i++) await store.noteUsage("used", "request", "answer-in-english");
        await store.noteUsage("shown", "request", "answer-in-english");
        await store.noteUsage("shown", "request", "keep-it-short");
      },
    );
    const usage = section(input, "Usage report");
    expect(usage).toContain("Records used (memory_read) at least 3 times are protected");
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
        ".podkit/memory/requests/answer-english.md": record(`${TS}\nsources: []`, "English."),
        ".podkit/memory/requests/english-answer.md": record(`${TS}\nsources: []`, "English too."),
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
