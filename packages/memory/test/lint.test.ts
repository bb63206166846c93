import { describe, expect, it } from "vitest";
import { LINT_CODES, type LintCode, type LintDiagnostic } from "../src/lint/diagnostics.js";
import {
  lintChange as lintChangeOf,
  lintMemory as lintMemoryOf,
  recordKey,
} from "../src/lint/lint-memory.js";
import { lintRecord as lintRecordOf, type MemoryFile, type ParsedRecord } from "../src/lint/lint-record.js";
import { type RecordKind, recordLabel } from "../src/records/layout.js";
import { MEMORY_FILE_MAX_BYTES } from "../src/store/contained-read.js";
import { protectionProblem } from "../src/store/protection.js";
import { attachProvenance } from "../src/store/provenance.js";
import { PROTECTION_THRESHOLD } from "../src/store/usage-log.js";
import { decision, record } from "./helpers.js";

const file = (kind: RecordKind | undefined, slug: string, text: string, path?: string): MemoryFile => ({
  kind,
  slug,
  text,
  path: path ?? (kind === undefined ? slug : recordLabel(kind, slug)),
});

const TS = "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-02T10:00:00Z";
const knowledge = (extra: string, body = "How to do it.") =>
  record(
    `${TS}\nkind: howto\ndescription: How the workspace is laid out; use when adding a package.\n${extra}\nlast_sources: []`,
    body,
  );

const codes = (ds: readonly LintDiagnostic[]) => ds.map((d) => d.code);

// Every code any test of this file made the linter report; the last test checks it against the
// exported LINT_CODES, so a new check cannot ship without a test here.
const seen = new Set<LintCode>();
const note = (ds: readonly LintDiagnostic[]) => {
  for (const d of ds) seen.add(d.code);
};
const lintMemory: typeof lintMemoryOf = (files) => {
  const report = lintMemoryOf(files);
  note([...report.errors, ...report.warnings]);
  return report;
};
const lintChange: typeof lintChangeOf = (...args) => {
  const result = lintChangeOf(...args);
  note([...result.report.errors, ...result.report.warnings]);
  return result;
};
const lintRecord: typeof lintRecordOf = (f) => {
  const result = lintRecordOf(f);
  note(result.diagnostics);
  return result;
};

function errorsOf(...files: MemoryFile[]) {
  return lintMemory(files).errors;
}

describe("the linter, one test per check", () => {
  it("accepts a well-formed tree of every kind", () => {
    const report = lintMemory([
      file("decision", "use-pnpm", decision("status: resolved", "See #layout-of-packages.")),
      file(
        "request",
        "answer-in-english",
        record(`${TS}\nsources:\n  - segment_id: seg-1\n    range: [3, 9]`),
      ),
      file("knowledge", "layout-of-packages", knowledge("model_invocation: false")),
      file(
        "summary",
        "summary",
        record("updated_at: 2026-04-02T10:00:00Z", "The summary, citing #use-pnpm."),
      ),
    ]);
    expect(report).toEqual({ errors: [], warnings: [] });
  });

  it("path: a file where no record kind lives", () => {
    const [error] = errorsOf(file(undefined, "notes.md", "x", ".podkit/memory/notes.md"));
    expect(error).toMatchObject({ code: "path", record: ".podkit/memory/notes.md" });
    expect(error?.message).toContain(".podkit/memory/decisions/");
  });

  it("slug: upper case, underscores, a double hyphen, 65 characters", () => {
    for (const slug of ["Use-Pnpm", "use_pnpm", "use--pnpm", "a".repeat(65), "-lead"]) {
      expect(codes(errorsOf(file("decision", slug, decision()))), slug).toEqual(["slug"]);
    }
    expect(errorsOf(file("decision", "a".repeat(64), decision()))).toEqual([]);
  });

  it("frontmatter: missing, unclosed, invalid YAML (with its line), not a mapping", () => {
    const cases = [
      "Just a body.\n",
      "---\nstatus: open\nno closing line\n",
      "---\ncreated_at: [unclosed\n---\nbody\n",
      "---\n- a list\n---\n",
    ];
    for (const text of cases)
      expect(codes(errorsOf(file("request", "r-one", text))), text).toEqual(["frontmatter"]);
    const [yamlError] = errorsOf(
      file("request", "r-one", "---\ncreated_at: 2026-04-01T10:00:00Z\nsources: [unclosed\n---\n"),
    );
    expect(yamlError?.line).toBeGreaterThanOrEqual(3);
  });

  it("field: a missing required field and an unknown field", () => {
    const missing = errorsOf(
      file(
        "request",
        "r-one",
        record("updated_at: 2026-04-01T10:00:00Z\nsources: [{segment_id: seg-0, range: [1, 2]}]"),
      ),
    );
    expect(missing).toMatchObject([
      { code: "field", field: "created_at", message: "required field is missing" },
    ]);
    const unknown = errorsOf(
      file(
        "request",
        "r-one",
        record(`${TS}\nsources: [{segment_id: seg-0, range: [1, 2]}]\npriority: high`),
      ),
    );
    expect(unknown).toMatchObject([{ code: "field" }]);
    expect(unknown[0]?.message).toContain('"priority"');
  });

  it("enum: decision status and knowledge kind", () => {
    expect(errorsOf(file("decision", "d-one", decision("status: done")))).toMatchObject([
      { code: "enum", field: "status" },
    ]);
    const kindError = errorsOf(
      file("knowledge", "k-one", knowledge("").replace("kind: howto", "kind: recipe")),
    );
    expect(kindError).toMatchObject([{ code: "enum", field: "kind" }]);
  });

  it("timestamp: not RFC 3339 UTC, or not a real date", () => {
    for (const bad of [
      "2026-04-01",
      "2026-04-01T10:00:00+02:00",
      "2026-02-30T10:00:00Z",
      "yesterday",
      "2026-04-01 10:00:00Z",
    ]) {
      const text = record(
        `created_at: ${JSON.stringify(bad)}\nupdated_at: 2026-04-01T10:00:00Z\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
      );
      expect(errorsOf(file("request", "r-one", text)), bad).toMatchObject([
        { code: "timestamp", field: "created_at" },
      ]);
    }
    const fractional = record(
      `created_at: 2026-04-01T10:00:00.250Z\nupdated_at: 2026-04-01T10:00:00Z\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
    );
    expect(errorsOf(file("request", "r-one", fractional))).toEqual([]);
  });

  it("sources: wrong shapes", () => {
    const shapes = [
      "sources: seg-1",
      "sources:\n  - seg-1",
      "sources:\n  - segment_id: seg-1",
      "sources:\n  - segment_id: seg-1\n    range: [9, 3]",
      "sources:\n  - segment_id: seg-1\n    range: [1.5, 3]",
      "sources:\n  - segment_id: seg-1\n    range: [1, 2, 3]",
      "sources:\n  - segment_id: seg-1\n    range: [1, 2]\n    session_id: s",
    ];
    for (const shape of shapes) {
      const found = errorsOf(file("request", "r-one", record(`${TS}\n${shape}`)));
      expect([shape, ...new Set(codes(found))]).toEqual([shape, "sources"]);
    }
  });

  it("status: replaced without replaced_by, and replaced_by without replaced", () => {
    expect(errorsOf(file("decision", "d-old", decision("status: replaced")))).toMatchObject([
      { code: "status", field: "replaced_by" },
    ]);
    const inconsistent = errorsOf(
      file("decision", "d-old", decision("status: open\nreplaced_by: d-new")),
      file("decision", "d-new", decision()),
    );
    expect(inconsistent).toMatchObject([{ code: "status", field: "status", slug: "d-old" }]);
  });

  it("replaced_by: a decision that does not exist, itself, a cycle", () => {
    expect(
      errorsOf(file("decision", "d-old", decision("status: replaced\nreplaced_by: d-ghost"))),
    ).toMatchObject([{ code: "replaced_by", message: expect.stringContaining('"d-ghost"') }]);
    expect(
      errorsOf(file("decision", "d-self", decision("status: replaced\nreplaced_by: d-self"))),
    ).toMatchObject([{ code: "replaced_by", message: "a decision cannot be replaced by itself" }]);
    const cycle = errorsOf(
      file("decision", "d-a", decision("status: replaced\nreplaced_by: d-b")),
      file("decision", "d-b", decision("status: replaced\nreplaced_by: d-c")),
      file("decision", "d-c", decision("status: replaced\nreplaced_by: d-a")),
    );
    expect(cycle).toHaveLength(1);
    expect(cycle[0]).toMatchObject({ code: "replaced_by" });
    expect(cycle[0]?.message).toContain("d-a -> d-b -> d-c -> d-a");
    // A chain that ends is fine.
    const chain = errorsOf(
      file("decision", "d-a", decision("status: replaced\nreplaced_by: d-b")),
      file("decision", "d-b", decision("status: resolved")),
    );
    expect(chain).toEqual([]);
  });

  it("body_too_long: 8001 characters (the summary may hold 20000)", () => {
    expect(errorsOf(file("decision", "d-one", decision("status: open", "x".repeat(8000))))).toEqual([]);
    expect(errorsOf(file("decision", "d-one", decision("status: open", "x".repeat(8001))))).toMatchObject([
      { code: "body_too_long", field: "body" },
    ]);
    const summary = (n: number) =>
      file("summary", "summary", record("updated_at: 2026-04-01T10:00:00Z", "y".repeat(n)));
    expect(errorsOf(summary(20000))).toEqual([]);
    expect(codes(errorsOf(summary(20001)))).toEqual(["body_too_long"]);
  });

  it("description_too_long: 1025 characters", () => {
    const desc = (n: number) => knowledge("").replace(/description: .*/, `description: ${"d".repeat(n)}`);
    expect(errorsOf(file("knowledge", "k-one", desc(1024)))).toEqual([]);
    expect(errorsOf(file("knowledge", "k-one", desc(1025)))).toMatchObject([
      { code: "description_too_long", field: "description" },
    ]);
  });

  it("reference: a dangling #slug (code spans and #42 are not references)", () => {
    const found = errorsOf(
      file("decision", "d-one", decision("status: open", "See #d-ghost, `#not-a-ref`, issue #42.")),
    );
    expect(found).toMatchObject([{ code: "reference", field: "body" }]);
    expect(found[0]?.message).toContain("#d-ghost");
  });

  it("alias: model_invokation is read as model_invocation (a warning), both spellings are an error", () => {
    const aliased = lintRecord(file("knowledge", "k-one", knowledge("model_invokation: true")));
    expect(codes(aliased.diagnostics)).toEqual(["alias"]);
    expect(aliased.diagnostics[0]?.severity).toBe("warning");
    expect(aliased.record?.frontmatter).toMatchObject({ model_invocation: true });
    expect(aliased.record?.frontmatter).not.toHaveProperty("model_invokation");
    const both = errorsOf(
      file("knowledge", "k-one", knowledge("model_invocation: false\nmodel_invokation: true")),
    );
    expect(both).toMatchObject([{ code: "field", field: "model_invokation" }]);
  });

  it("similar_slug: a warning, never an error", () => {
    const report = lintMemory([
      file("decision", "use-pnpm-workspaces", decision()),
      file("decision", "use-pnpm-workspace", decision()),
      file("decision", "workspaces-use-pnpm", decision()),
      file("decision", "unrelated-topic", decision()),
    ]);
    expect(report.errors).toEqual([]);
    // Pairs, not groups: one typo apart, and the same words in another order.
    expect(report.warnings.map((w) => [w.code, w.slug, w.message.match(/"([a-z-]+)";/)?.[1]])).toEqual([
      ["similar_slug", "use-pnpm-workspace", "use-pnpm-workspaces"],
      ["similar_slug", "use-pnpm-workspaces", "workspaces-use-pnpm"],
    ]);
  });
});

describe("lintChange: one proposed write against the current records", () => {
  const index = (...files: MemoryFile[]) => {
    const map = new Map<string, ParsedRecord>();
    for (const f of files) {
      const parsed = lintRecord(f).record;
      if (parsed !== undefined && f.kind !== undefined) map.set(recordKey(f.kind, f.slug), parsed);
    }
    return map;
  };

  it("exists: creating over an existing slug steers to memory_edit; overwriting is allowed", () => {
    const current = index(file("decision", "d-one", decision()));
    const created = lintChange(current, { op: "create", kind: "decision", slug: "d-one", text: decision() });
    expect(created.report.errors).toMatchObject([
      { code: "exists", message: expect.stringContaining("memory_edit") },
    ]);
    expect(
      lintChange(current, { op: "write", kind: "decision", slug: "d-one", text: decision() }).report.errors,
    ).toEqual([]);
  });

  it("a write closing a replaced_by cycle is refused", () => {
    const current = index(
      file("decision", "d-a", decision("status: replaced\nreplaced_by: d-b")),
      file("decision", "d-b", decision()),
    );
    const { report } = lintChange(current, {
      op: "write",
      kind: "decision",
      slug: "d-b",
      text: decision("status: replaced\nreplaced_by: d-a"),
    });
    expect(report.errors).toMatchObject([{ code: "replaced_by", message: expect.stringContaining("cycle") }]);
  });

  it("dangling_replaced_by: a delete that would leave a replaced_by pointing nowhere", () => {
    const current = index(
      file("decision", "d-a", decision("status: replaced\nreplaced_by: d-b")),
      file("decision", "d-b", decision()),
    );
    expect(lintChange(current, { op: "delete", kind: "decision", slug: "d-b" }).report.errors).toMatchObject([
      { code: "dangling_replaced_by", message: expect.stringContaining('"d-a"') },
    ]);
    expect(lintChange(current, { op: "delete", kind: "decision", slug: "d-a" }).report.errors).toEqual([]);
  });
});

describe("provenance and protection, as the store applies them", () => {
  const items = new Map([
    ["s1-d1", { source: { segment_id: "seg-1", range: [1, 5] as [number, number] } }],
    ["s2-d1", { source: { segment_id: "seg-2", range: [3, 9] as [number, number] } }],
  ]);
  const attach = (
    candidates: string[],
    change: { kind: RecordKind; slug: string; before?: ParsedRecord },
    staged: string[],
    frontmatter: Record<string, unknown> = {},
  ) => {
    const diagnostics = attachProvenance(
      { items, candidates: new Set(candidates) },
      { ...change, before: change.before },
      frontmatter,
      { staged },
      () => undefined,
    );
    note(diagnostics);
    return { diagnostics, frontmatter };
  };

  it("source_not_given: sources come from the staged items named; an unknown id is refused", () => {
    const ok = attach([], { kind: "request", slug: "r-one" }, ["s1-d1", "s2-d1"]);
    expect(ok.diagnostics).toEqual([]);
    expect(ok.frontmatter.sources).toEqual([items.get("s1-d1")?.source, items.get("s2-d1")?.source]);
    // Positive control: the model wrote sources itself; they are replaced, with a warning.
    const composed = attach([], { kind: "decision", slug: "d-one" }, ["s1-d1"], {
      sources: [{ segment_id: "made-up", range: [0, 99] }],
    });
    expect(composed.frontmatter.sources).toEqual([items.get("s1-d1")?.source]);
    expect(composed.diagnostics).toMatchObject([{ severity: "warning", code: "sources" }]);
    expect(attach([], { kind: "request", slug: "r-one" }, ["s9-d1"]).diagnostics).toMatchObject([
      { severity: "error", code: "source_not_given", message: expect.stringContaining('"s9-d1"') },
    ]);
  });

  it("source_not_given: new knowledge only from the candidate report, refused with why when it is empty", () => {
    const created = attach(["s1-d1"], { kind: "knowledge", slug: "k-one" }, ["s1-d1"]);
    expect(created.diagnostics).toEqual([]);
    expect(created.frontmatter.last_sources).toEqual([items.get("s1-d1")?.source]);
    expect(attach(["s1-d1"], { kind: "knowledge", slug: "k-one" }, ["s2-d1"]).diagnostics).toMatchObject([
      { code: "source_not_given", message: expect.stringContaining("not in the knowledge candidate report") },
    ]);
    expect(attach([], { kind: "knowledge", slug: "k-one" }, ["s1-d1"]).diagnostics).toMatchObject([
      {
        code: "source_not_given",
        message: expect.stringContaining("the knowledge candidate report is empty"),
      },
    ]);
    // Updating existing knowledge needs no candidate.
    const existing = lintRecord(file("knowledge", "k-one", knowledge(""))).record;
    expect(
      attach([], { kind: "knowledge", slug: "k-one", ...(existing ? { before: existing } : {}) }, ["s2-d1"])
        .diagnostics,
    ).toEqual([]);
  });

  it("protected: a record used at the threshold is not deleted, nor cut below half in the tidy step", () => {
    const before = lintRecord(file("decision", "d-one", decision("status: open", "x".repeat(100)))).record;
    const after = lintRecord(file("decision", "d-one", decision("status: open", "x".repeat(30)))).record;
    if (before === undefined || after === undefined) throw new Error("fixture records must lint");
    const used = new Map([["decision/d-one", PROTECTION_THRESHOLD]]);
    const deleted = protectionProblem(used, { op: "delete", kind: "decision", slug: "d-one" });
    note(deleted === undefined ? [] : [deleted]);
    expect(deleted).toMatchObject({
      code: "protected",
      message: expect.stringContaining(`${PROTECTION_THRESHOLD} times`),
    });
    const write = { op: "write" as const, kind: "decision" as const, slug: "d-one", before, after };
    expect(protectionProblem(used, { ...write, tidy: true })).toMatchObject({
      code: "protected",
      field: "body",
    });
    // Positive controls: below the threshold, or outside the tidy step, the same changes pass.
    const once = new Map([["decision/d-one", PROTECTION_THRESHOLD - 1]]);
    expect(protectionProblem(once, { op: "delete", kind: "decision", slug: "d-one" })).toBeUndefined();
    expect(protectionProblem(used, { ...write, tidy: false })).toBeUndefined();
  });
});

describe("what keeps text from being a record", () => {
  it("sources: empty sources are an error for decisions and requests, not for knowledge", () => {
    const empty = record(`${TS}\nsources: []`);
    expect(errorsOf(file("request", "r-one", empty))).toMatchObject([
      { code: "sources", field: "sources", message: expect.stringContaining("at least one source") },
    ]);
    expect(errorsOf(file("decision", "d-one", record(`${TS}\nstatus: open\nsources: []`)))).toMatchObject([
      { code: "sources" },
    ]);
    expect(errorsOf(file("knowledge", "k-one", knowledge("")))).toEqual([]);
  });

  it("encoding: bytes that are not UTF-8 and unpaired surrogates are errors naming the line; a BOM and CRLF are read, with a warning", () => {
    const bad = {
      ...file("request", "r-one", record(`${TS}\nsources: [{segment_id: s, range: [1, 2]}]`)),
      invalidUtf8Line: 5,
    };
    expect(errorsOf(bad)).toMatchObject([{ code: "encoding", line: 5 }]);
    const lone = record(`${TS}\nsources: [{segment_id: s, range: [1, 2]}]`, "fine\nbroken \uD800 here");
    expect(errorsOf(file("request", "r-one", lone))).toMatchObject([
      { code: "encoding", line: 8, message: expect.stringContaining("U+D800") },
    ]);
    const windows = `\uFEFF${record(`${TS}\nsources: [{segment_id: s, range: [1, 2]}]`).replaceAll("\n", "\r\n")}`;
    const report = lintMemory([file("request", "r-one", windows)]);
    expect(report.errors).toEqual([]);
    expect(report.warnings.map((w) => [w.code, w.line])).toEqual([
      ["encoding", 1],
      ["encoding", 1],
    ]);
  });

  it("too_large: a text beyond what a memory file may hold is refused before it is parsed", () => {
    const huge = record(
      `${TS}\nsources: [{segment_id: s, range: [1, 2]}]`,
      "x".repeat(MEMORY_FILE_MAX_BYTES),
    );
    expect(errorsOf(file("request", "r-one", huge))).toMatchObject([{ code: "too_large" }]);
  });
});

describe("files memory did not read", () => {
  it("a file with a problem (linked out of .podkit, too large) is a refused warning, never parsed", () => {
    const refused: MemoryFile = {
      ...file("decision", "leak", ""),
      problem: ".podkit/memory/decisions/leak.md resolves to /elsewhere/secret.md, outside /ws/.podkit",
    };
    const report = lintMemory([refused]);
    expect(report.errors).toEqual([]);
    expect(report.warnings).toMatchObject([
      {
        code: "refused",
        record: ".podkit/memory/decisions/leak.md",
        message: expect.stringContaining("outside"),
      },
    ]);
  });
});

// Runs last: the tests above, in file order, have recorded the codes they saw.
it("every exported LINT_CODES code is produced by some test above", () => {
  expect(LINT_CODES.filter((code) => !seen.has(code))).toEqual([]);
  expect([...seen].filter((code) => !LINT_CODES.includes(code))).toEqual([]);
});
