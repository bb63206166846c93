import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PromptCatalogError } from "../src/catalog/errors.js";
import {
  EvalCaseError,
  EvalDatasetError,
  EvalJudgeError,
  EvalPricesError,
  EvalQueryError,
} from "../src/eval/errors.js";
import { OutputValidationError } from "../src/output/errors.js";
import {
  InvalidPromptRefError,
  PromptIoError,
  PromptNotFoundError,
  UnconfiguredPromptPrefixError,
  UnknownPromptPrefixError,
} from "../src/prompt-ref/errors.js";
import { loadPodResources } from "../src/resources/load-pod-resources.js";
import {
  InvalidFileChangeError,
  RewindBlobError,
  RewindJournalError,
  RewindPathBlockedError,
  RewindPendingError,
  RewindRefusedError,
} from "../src/rewind/errors.js";
import { SkillDefinitionError, SkillListingOverBudgetError } from "../src/skills/errors.js";
import { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "../src/system-prompt/errors.js";
import {
  TemplateRenderError,
  TemplateSyntaxError,
  TemplateUnprintableValueError,
} from "../src/template/errors.js";
import { caught, useTempDirs, writeFiles } from "./helpers.js";

// Each error class that has something to tell a person sets its own `hint` (the CLI prints it
// under the message); no other package keeps a table of them.
const tempDir = useTempDirs();
const site = { template: "$workspace/main.md", line: 2 };
const at = { template: "system_prompt", file: undefined, line: 1, column: 4 };

describe("the hints pod errors carry", () => {
  it.each([
    ["an invalid prompt ref", new InvalidPromptRefError("bad", "$podkit/../x", site)],
    ["an unknown prefix", new UnknownPromptPrefixError("unknown", "$other/x", site)],
    ["an unconfigured prefix", new UnconfiguredPromptPrefixError("unset", "$user/x", site)],
    ["an unreadable prompt file", new PromptIoError("$user/x", "/u/x.md", "EACCES", site)],
  ])("%s: how prompt references are written", (_what, error) => {
    expect(error.hint).toBe(
      "prompt references are $podkit/…, $user/… or $workspace/… paths without .. (docs/prompts.md)",
    );
  });

  it("a prompt ref error with a hint of its own keeps it", () => {
    expect(new PromptNotFoundError("$user/x", "/u/x.md", site).hint).toMatch(/^Create the file/);
  });

  it("a prompt pack problem: fix the pack, and how to see each layer's values", () => {
    expect(new PromptCatalogError("bad TOML", { layer: "workspace", file: "/w/prompts.toml" }).hint).toBe(
      "fix the prompt pack named above; `podkit prompt catalog --explain` shows each layer's values",
    );
    const own = new PromptCatalogError("x", { layer: "user", file: "/u/prompts.toml" }, { hint: "mine" });
    expect(own.hint).toBe("mine");
  });

  it("a system prompt that cannot render: the cause's hint, else where to check it", () => {
    const render = new TemplateRenderError("undefined variable", at, { variable: "ghost" });
    expect(new SystemPromptRenderError("system_prompt", render).hint).toBe(render.hint);
    expect(new SystemPromptRenderError("system_prompt", new Error("disk")).hint).toBe(
      "fix the template at the place shown; `podkit prompt render` renders it without calling a model",
    );
  });

  it("template errors always carry a hint", () => {
    expect(new TemplateSyntaxError("unexpected end", at).hint).toMatch(/Fix the template source/);
    expect(new TemplateRenderError("bad", at).hint).toMatch(/Fix the template/);
    expect(new TemplateUnprintableValueError("cannot print", "list", at).hint).toMatch(
      /join\(", "\)`.*`tojson`/,
    );
    expect(new InvalidSystemPromptTemplateError("bad", at, undefined).hint).toMatch(
      /\[worker\]\.system_prompt/,
    );
  });

  it("an answer that never matched the output schema: what to change, or that the model declined", () => {
    const invalid = new OutputValidationError({
      raw: { verdict: "maybe" },
      issues: [{ path: "/verdict", message: 'must be one of "approve", "reject"' }],
      repairs: 2,
    });
    expect(invalid.message).toBe(
      `the model's answer does not match the output schema after 2 repairs: /verdict: must be one of "approve", "reject"`,
    );
    expect(invalid.hint).toBe(
      "try again; raise [output] max_repairs (the model got 2 error results), simplify the schema, or use a model that follows tool instructions ([model] ref); docs/output.md",
    );
    const refused = new OutputValidationError({
      raw: undefined,
      issues: [],
      repairs: 0,
      refusal: "I can't help with that.",
    });
    expect(refused.message).toBe("the model refused to give the typed answer: I can't help with that.");
    expect(refused.refusal).toBe("I can't help with that.");
    expect(refused.hint).toMatch(/^the model declined to answer: change the input or the schema/);
    expect(new OutputValidationError({ raw: 1, issues: [], repairs: 1 }, { hint: "mine" }).hint).toBe("mine");
  });

  it("a real prompt pack that is not UTF-8 fails loading with the pack hint", async () => {
    const root = await tempDir("hints");
    await writeFiles(root, {
      "home/.config/podkit/.keep": "",
      "ws/.podkit/prompts.toml": Buffer.from([0x5b, 0xff, 0x5d]),
    });
    const error = await caught(
      loadPodResources({ workspace: join(root, "ws"), userConfigDir: join(root, "home/.config/podkit") }),
    );
    expect(PromptCatalogError.isInstance(error) && error.hint).toMatch(/podkit prompt catalog --explain/);
  });

  it("rewind errors say what to do: --force, move what blocks, wait or rerun, check the store", () => {
    expect(new RewindRefusedError("s", [{ path: "a", recorded: null, current: null }]).hint).toMatch(
      /^rerun with --force/,
    );
    expect(new RewindPathBlockedError("a", "b").hint).toMatch(/never follows a symbolic link/);
    expect(new RewindPendingError({ sessionId: "s", journal: "j", running: true }).hint).toBe(
      "wait for it to finish, then try again",
    );
    expect(new RewindPendingError({ sessionId: "s", journal: "j", running: false }).hint).toMatch(
      /without --dry-run/,
    );
    expect(new RewindJournalError("j", "x").hint).toMatch(/changed by hand/);
    expect(new InvalidFileChangeError({ segmentId: "g", index: 1, reason: "r" }).hint).toMatch(
      /session show/,
    );
    // A blob error passes on its cause's hint and kind, else says where to look.
    const cause = Object.assign(new Error("corrupt blob"), {
      hint: "restore the store",
      errorKind: "corrupt",
    });
    const withCause = new RewindBlobError({ path: "a", digest: "sha256:x", cause });
    expect([withCause.hint, withCause.errorKind]).toEqual(["restore the store", "corrupt"]);
    expect(new RewindBlobError({ path: "a", digest: "d", cause: new Error("x") }).hint).toMatch(
      /store the manifest selects/,
    );
  });

  it("skill errors name the file, line and key, or the budget, and what to change", () => {
    const definition = new SkillDefinitionError({ file: "/s/pdf/SKILL.md", line: 3, key: "name" }, "bad");
    expect(definition.message).toBe("/s/pdf/SKILL.md:3: name: bad");
    expect(definition.hint).toMatch(/^fix the skill named above, or leave it out with \[skills\] enabled/);
    const budget = new SkillListingOverBudgetError(2300, 2000, 60);
    expect(budget.message).toMatch(
      /^the skill listing of 60 skills is about 2300 tokens, over \[skills\] listing_budget_tokens = 2000/,
    );
    expect(budget.hint).toMatch(/on_over_budget = "search"/);
  });

  it("eval errors name the case or the file, line and key, and where to look", () => {
    const range = new EvalCaseError("s:3-4", "turns 3-4 are not in the session");
    expect(range.message).toBe("eval case s:3-4: turns 3-4 are not in the session");
    expect(range.hint).toMatch(/podkit session list/);
    const dataset = new EvalDatasetError({ file: "cases.jsonl", line: 2, key: "session" }, "required");
    expect(dataset.message).toBe("eval dataset cases.jsonl:2 at session: required");
    expect(dataset.hint).toMatch(/docs\/evals\.md/);
    expect(new EvalCaseError("c", "x", { hint: "mine" }).hint).toBe("mine");
    const query = new EvalQueryError("since", '"yesterday" is not a date');
    expect([query.message, query.key]).toEqual(['eval query since: "yesterday" is not a date', "since"]);
    expect(query.hint).toMatch(/since\/until .*7d.*docs\/evals\.md/);
    const prices = new EvalPricesError({ file: "prices.toml", key: "a/b.input" }, "expected number");
    expect(prices.message).toBe("eval prices prices.toml at a/b.input: expected number");
    expect(prices.hint).toMatch(/USD per million tokens/);
  });

  it("a judge that cannot grade passes on its cause's hint and kind, else says what to check", () => {
    const cause = Object.assign(new Error("no API key"), {
      [Symbol.for("podkit.llm-worker.error")]: true,
      hint: "set OPENAI_API_KEY",
      errorKind: "usage",
    });
    const judged = new EvalJudgeError("tone", "could not grade: no API key", { cause });
    expect([judged.message, judged.hint, judged.errorKind]).toEqual([
      "judge tone: could not grade: no API key",
      "set OPENAI_API_KEY",
      "usage",
    ]);
    const bare = new EvalJudgeError("tone", "gave no grade");
    expect([bare.hint, bare.errorKind]).toEqual([
      "check the judge's model (--judge-model) and its API key, then run the eval again",
      "transient",
    ]);
  });
});
