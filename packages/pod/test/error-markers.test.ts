import { readFile } from "node:fs/promises";
import { ERROR_KINDS } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { PromptCatalogError, PromptRenderError, UnknownPromptKeyError } from "../src/catalog/errors.js";
import {
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "../src/compaction/errors.js";
import { PodkitPodError, PodUsageError } from "../src/errors.js";
import {
  EvalCaseError,
  EvalDatasetError,
  EvalJudgeError,
  EvalPricesError,
  EvalQueryError,
} from "../src/eval/errors.js";
import { OutputValidationError } from "../src/output/errors.js";
import {
  GuardrailTrippedError,
  HooksFrozenError,
  PodBusyError,
  PodClosedError,
  PromptCancelledError,
} from "../src/pod/errors.js";
import {
  MemoryPackageInvalidError,
  MemoryPackageMissingError,
  MemoryWithoutWorkspaceError,
  SessionStorePackageInvalidError,
  SessionStorePackageMissingError,
  SessionStoreUrlUnsetError,
} from "../src/pod/store-selection-errors.js";
import {
  InvalidPromptRefError,
  PromptIoError,
  PromptNotFoundError,
  PromptRefError,
  PromptRootEscapeError,
  UnconfiguredPromptPrefixError,
  UnknownPromptPrefixError,
} from "../src/prompt-ref/errors.js";
import {
  InvalidFileChangeError,
  RewindBlobError,
  RewindJournalError,
  RewindPathBlockedError,
  RewindPendingError,
  RewindRefusedError,
} from "../src/rewind/errors.js";
import { SkillDefinitionError, SkillListingOverBudgetError } from "../src/skills/errors.js";
import { SubpodRoleError, SubpodSessionError } from "../src/subpods/errors.js";
import { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "../src/system-prompt/errors.js";
import {
  TemplateEngineVersionError,
  TemplateLimitError,
  TemplateRenderError,
  TemplateSyntaxError,
  TemplateUnprintableValueError,
} from "../src/template/errors.js";

// Issue 11: every error class has its own `Symbol.for("podkit.pod.error.<kind>")` marker and an
// `isInstance` built on it, so it works across duplicated copies of the package and never
// depends on the mutable `name`.
const at = { template: "t", file: undefined, line: 1, column: 1 };
const breach = { link: "/ws/.podkit", target: "/elsewhere", owner: "/ws" };

const CASES = [
  {
    kind: "template-syntax",
    errorKind: "usage",
    make: () => new TemplateSyntaxError("p", at),
    is: TemplateSyntaxError,
  },
  {
    kind: "template-render",
    errorKind: "usage",
    make: () => new TemplateRenderError("p", at),
    is: TemplateRenderError,
  },
  {
    kind: "template-limit",
    errorKind: "usage",
    make: () => new TemplateLimitError("p", "steps", at),
    is: TemplateLimitError,
  },
  {
    kind: "template-unprintable-value",
    errorKind: "usage",
    make: () => new TemplateUnprintableValueError("p", "mapping", at),
    is: TemplateUnprintableValueError,
  },
  {
    kind: "template-engine-version",
    errorKind: "unsupported",
    make: () => new TemplateEngineVersionError("3.2.4", "9.9.9"),
    is: TemplateEngineVersionError,
  },
  {
    kind: "prompt-ref",
    errorKind: "usage",
    make: () => new PromptRefError("p", "$x/y", undefined),
    is: PromptRefError,
  },
  {
    kind: "invalid-prompt-ref",
    errorKind: "usage",
    make: () => new InvalidPromptRefError("p", "$x/y", undefined),
    is: InvalidPromptRefError,
  },
  {
    kind: "unknown-prompt-prefix",
    errorKind: "usage",
    make: () => new UnknownPromptPrefixError("p", "$x/y", undefined),
    is: UnknownPromptPrefixError,
  },
  {
    kind: "unconfigured-prompt-prefix",
    errorKind: "usage",
    make: () => new UnconfiguredPromptPrefixError("p", "$x/y", undefined),
    is: UnconfiguredPromptPrefixError,
  },
  {
    kind: "prompt-not-found",
    errorKind: "usage",
    make: () => new PromptNotFoundError("$x/y", "/f", undefined),
    is: PromptNotFoundError,
  },
  {
    kind: "prompt-io",
    errorKind: "usage",
    make: () => new PromptIoError("$x/y", "/f", "p", undefined),
    is: PromptIoError,
  },
  {
    kind: "prompt-root-escape",
    errorKind: "usage",
    make: () => new PromptRootEscapeError("$workspace/y", "workspace", breach, undefined),
    is: PromptRootEscapeError,
  },
  { kind: "usage", errorKind: "usage", make: () => new PodUsageError("wrong call"), is: PodUsageError },
  {
    kind: "prompt-catalog",
    errorKind: "usage",
    make: () => new PromptCatalogError("p", { layer: "user", file: "/p.toml" }),
    is: PromptCatalogError,
  },
  {
    kind: "prompt-render",
    errorKind: "usage",
    make: () => new PromptRenderError("notify_wrapper", "user", "/p.toml", new Error("x")),
    is: PromptRenderError,
  },
  {
    kind: "unknown-prompt-key",
    errorKind: "usage",
    make: () => new UnknownPromptKeyError("x", ["a"]),
    is: UnknownPromptKeyError,
  },
  {
    kind: "invalid-system-prompt-template",
    errorKind: "usage",
    make: () => new InvalidSystemPromptTemplateError("m", { template: "t", line: 1, column: 1 }, undefined),
    is: InvalidSystemPromptTemplateError,
  },
  {
    kind: "system-prompt-render",
    errorKind: "usage",
    make: () => new SystemPromptRenderError("t", new Error("x")),
    is: SystemPromptRenderError,
  },
  {
    kind: "subpod-role",
    errorKind: "usage",
    make: () => new SubpodRoleError({ role: "r", file: "m.toml", line: 3 }, "bad"),
    is: SubpodRoleError,
  },
  {
    kind: "subpod-session",
    errorKind: "usage",
    make: () => new SubpodSessionError("s", "is odd"),
    is: SubpodSessionError,
  },
  { kind: "busy", errorKind: "conflict", make: () => new PodBusyError("busy"), is: PodBusyError },
  {
    kind: "hooks-frozen",
    errorKind: "usage",
    make: () => new HooksFrozenError("frozen"),
    is: HooksFrozenError,
  },
  {
    kind: "prompt-cancelled",
    errorKind: "usage",
    make: () => new PromptCancelledError("no"),
    is: PromptCancelledError,
  },
  { kind: "closed", errorKind: "conflict", make: () => new PodClosedError("closed"), is: PodClosedError },
  {
    kind: "guardrail-tripped",
    errorKind: "usage",
    make: () => new GuardrailTrippedError("pkg/g", "input", "reject", "why"),
    is: GuardrailTrippedError,
  },
  {
    kind: "session-store-url-unset",
    errorKind: "usage",
    make: () => new SessionStoreUrlUnsetError("unset", { variable: "V", hint: "h" }),
    is: SessionStoreUrlUnsetError,
  },
  {
    kind: "session-store-package-missing",
    errorKind: "usage",
    make: () =>
      new SessionStorePackageMissingError("missing", { packageName: "p", hint: "h", cause: undefined }),
    is: SessionStorePackageMissingError,
  },
  {
    kind: "session-store-package-invalid",
    errorKind: "usage",
    make: () => new SessionStorePackageInvalidError("invalid", { packageName: "p", hint: "h" }),
    is: SessionStorePackageInvalidError,
  },
  {
    kind: "memory-package-missing",
    errorKind: "usage",
    make: () => new MemoryPackageMissingError("missing", { packageName: "p", hint: "h", cause: undefined }),
    is: MemoryPackageMissingError,
  },
  {
    kind: "memory-package-invalid",
    errorKind: "usage",
    make: () => new MemoryPackageInvalidError("invalid", { packageName: "p", hint: "h" }),
    is: MemoryPackageInvalidError,
  },
  {
    kind: "memory-without-workspace",
    errorKind: "usage",
    make: () => new MemoryWithoutWorkspaceError("no .podkit", { workspace: "/w" }),
    is: MemoryWithoutWorkspaceError,
  },
  {
    kind: "compact-summary-missing",
    errorKind: "transient",
    make: () => new CompactSummaryMissingError(2),
    is: CompactSummaryMissingError,
  },
  {
    kind: "compact-summary-oversize",
    errorKind: "usage",
    make: () => new CompactSummaryOversizeError(5000, 4000),
    is: CompactSummaryOversizeError,
  },
  {
    kind: "compaction-over-threshold",
    errorKind: "usage",
    make: () => new CompactionOverThresholdError(9000, 8000, 6000, "threshold"),
    is: CompactionOverThresholdError,
  },
  {
    kind: "nothing-to-compact",
    errorKind: "conflict",
    make: () => new NothingToCompactError(3, 8000),
    is: NothingToCompactError,
  },
  {
    kind: "output-validation",
    errorKind: "transient",
    make: () => new OutputValidationError({ raw: {}, issues: [{ path: "/a", message: "bad" }], repairs: 2 }),
    is: OutputValidationError,
  },
  {
    kind: "rewind-refused",
    errorKind: "conflict",
    make: () => new RewindRefusedError("s", [{ path: "a.ts", recorded: null, current: "symlink" }]),
    is: RewindRefusedError,
  },
  {
    kind: "invalid-file-change",
    errorKind: "corrupt",
    make: () => new InvalidFileChangeError({ segmentId: "g", index: 3, reason: "bad" }),
    is: InvalidFileChangeError,
  },
  {
    kind: "rewind-path-blocked",
    errorKind: "conflict",
    make: () => new RewindPathBlockedError("lib/a.ts", "lib is a symbolic link"),
    is: RewindPathBlockedError,
  },
  {
    kind: "rewind-pending",
    errorKind: "conflict",
    make: () => new RewindPendingError({ sessionId: "s", journal: "/w/j", running: false }),
    is: RewindPendingError,
  },
  {
    kind: "rewind-journal",
    errorKind: "corrupt",
    make: () => new RewindJournalError("/w/j", "it is not JSON"),
    is: RewindJournalError,
  },
  {
    kind: "rewind-blob",
    errorKind: "not_found",
    make: () => new RewindBlobError({ path: "a.ts", digest: "sha256:x", cause: new Error("gone") }),
    is: RewindBlobError,
  },
  {
    kind: "eval-case",
    errorKind: "usage",
    make: () => new EvalCaseError("s:3-4", "turns 3-4 are not in the session"),
    is: EvalCaseError,
  },
  {
    kind: "eval-dataset",
    errorKind: "usage",
    make: () => new EvalDatasetError({ file: "cases.jsonl", line: 2, key: "session" }, "required"),
    is: EvalDatasetError,
  },
  {
    kind: "eval-query",
    errorKind: "usage",
    make: () => new EvalQueryError("since", '"yesterday" is not a date'),
    is: EvalQueryError,
  },
  {
    kind: "eval-prices",
    errorKind: "usage",
    make: () => new EvalPricesError({ file: "prices.toml", key: "a/b.input" }, "expected number"),
    is: EvalPricesError,
  },
  {
    kind: "eval-judge",
    errorKind: "transient",
    make: () => new EvalJudgeError("judge", "gave no grade"),
    is: EvalJudgeError,
  },
  {
    kind: "skill-definition",
    errorKind: "usage",
    make: () => new SkillDefinitionError({ file: "/s/pdf/SKILL.md", line: 1, key: "description" }, "missing"),
    is: SkillDefinitionError,
  },
  {
    kind: "skill-listing-over-budget",
    errorKind: "usage",
    make: () => new SkillListingOverBudgetError(2300, 2000, 60),
    is: SkillListingOverBudgetError,
  },
] as const;

describe("every pod error class carries its own marker", () => {
  it.each(CASES)("$kind: recognised by its own marker, whatever its name", ({ kind, make, is }) => {
    const error = make();
    expect(is.isInstance(error)).toBe(true);
    expect(PodkitPodError.isInstance(error)).toBe(true);
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for(`podkit.pod.error.${kind}`)]).toBe(true);
    error.name = "SomethingElse";
    expect(is.isInstance(error)).toBe(true);
  });

  it.each(CASES)("$kind: is of kind $errorKind, one of the vocabulary", ({ make, errorKind }) => {
    expect(ERROR_KINDS).toContain(errorKind);
    expect(make().errorKind).toBe(errorKind);
  });

  it.each(CASES)("$kind: a copy from another instance of the package is recognised", ({ kind, is }) => {
    const foreign = Object.assign(new Error("from another copy"), {
      [Symbol.for("podkit.pod.error")]: true,
      [Symbol.for(`podkit.pod.error.${kind}`)]: true,
    });
    expect(is.isInstance(foreign)).toBe(true);
    expect(is.isInstance(Object.assign(new Error("x"), { name: is.name }))).toBe(false);
  });

  it.each(CASES)("$kind: no other class claims it unless it is a subclass", ({ make, is }) => {
    const error = make();
    for (const other of CASES) {
      const expected = error instanceof other.is;
      expect(other.is.isInstance(error), `${other.is.name}.isInstance(${is.name})`).toBe(expected);
    }
  });

  it("a limit error is a render error; every ref error is a PromptRefError", () => {
    expect(TemplateRenderError.isInstance(new TemplateLimitError("p", "output", at))).toBe(true);
    expect(TemplateLimitError.isInstance(new TemplateRenderError("p", at))).toBe(false);
    expect(TemplateRenderError.isInstance(new TemplateUnprintableValueError("p", "list", at))).toBe(true);
    expect(PromptRefError.isInstance(new PromptRootEscapeError("$w/y", "workspace", breach, undefined))).toBe(
      true,
    );
  });

  it("the error modules use markers only, never names", async () => {
    for (const file of [
      "../src/template/errors.ts",
      "../src/prompt-ref/errors.ts",
      "../src/catalog/errors.ts",
      "../src/system-prompt/errors.ts",
      "../src/pod/errors.ts",
      "../src/pod/store-selection-errors.ts",
      "../src/compaction/errors.ts",
      "../src/subpods/errors.ts",
      "../src/output/errors.ts",
      "../src/rewind/errors.ts",
      "../src/eval/errors.ts",
    ]) {
      const source = await readFile(new URL(file, import.meta.url), "utf8");
      expect(source, file).not.toContain("isPodErrorNamed");
      expect(source, file).not.toMatch(/\.name ===/);
      expect(source, file).toContain("hasMarker(");
    }
  });
});
