import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit eval <session>... | --dataset <file>` */
export const evalCommand: CommandSpec = {
  path: ["eval"],
  summary: "replay recorded sessions through a changed manifest, model or prompt pack and score them",
  usage:
    "eval [<session>[:<from>-<to>]...] [--where key=value]... [--dataset <file>] [--manifest <file>] [--set key=value]... [--model <ref>] [--pack <file>] [--tools replay|live|stub] [--tool name=mode]... [--scorer <file>]... [--judge [name=]<rubric>]... [--judge-model <ref>] [--prices <file>] [--eval-id <id>] [--concurrency <n>] [--tolerance <x>] [--ci] [--json] [--internal compaction|memory_extract [--must-keep <text>]...]",
  details: [
    "Each case — a recorded session, a turn range of one (<session>:<from>-<to>), the sessions a",
    "query over the store selects (--where), or a line of a dataset file (JSON or JSON Lines) — is",
    "replayed input by input through a pod built from the variant (the manifest with --set",
    "overlays, --model, --pack) and written as a new session that records its origin (eval.origin)",
    "and its scores (eval.score). Tools answer from the recording by default (replay: a call never",
    "recorded is a divergence), or run for real in a scratch copy of the workspace (live), or",
    "return a fixed result (stub). Each case is scored with the",
    "deterministic scorers (answer, schema, trajectory, cache share), custom scorer modules",
    "(--scorer) and judges (--judge: a model grading by a rubric) against the recording itself, the",
    "baseline. Finished items are kept in .podkit/evals/<eval id>/: rerun with the same --eval-id to",
    "resume. --ci prints `N passed, N failed` last and exits 5 when a case fell more than",
    "--tolerance below its baseline. With --internal compaction, each case's recorded compaction",
    "(or its history at its end) is compacted again with the variant's catalog (--pack: a changed",
    "compact_system) and what survived is scored with the checklist (--must-keep); with --internal",
    "memory_extract, memory's extract runs on a copy of the segment (memory_extract_system) and what",
    "it extracted is scored. docs/evals.md",
  ].join("\n"),
  options: {
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
    where: {
      type: "string",
      multiple: true,
      valueName: "key=value",
      help: "cases by query over the store: since, until, status, tool, input, limit; repeatable (all hold)",
    },
    dataset: {
      type: "string",
      valueName: "file",
      help: "cases from a JSON or JSON Lines file (docs/evals.md)",
    },
    model: {
      type: "string",
      valueName: "ref",
      help: "the variant's model ref ([model] ref), e.g. openai/gpt-5",
    },
    pack: { type: "string", valueName: "file", help: "the variant's prompt pack ([pod] prompt_pack)" },
    tools: { type: "string", valueName: "mode", help: "every tool's mode: replay (default), live or stub" },
    tool: { type: "string", multiple: true, valueName: "name=mode", help: "one tool's mode; repeatable" },
    scorer: {
      type: "string",
      multiple: true,
      valueName: "file",
      help: "a custom scorer: an ES module default-exporting (item) => ({name, score, pass, detail}); repeatable",
    },
    judge: {
      type: "string",
      multiple: true,
      valueName: "[name=]rubric",
      help: "a judge scorer: default (the catalog's eval_judge_rubric) or a prompt file ($workspace/…); repeatable",
    },
    "judge-model": {
      type: "string",
      valueName: "ref",
      help: "the judges' model ref (default: the variant's model)",
    },
    prices: {
      type: "string",
      valueName: "file",
      help: "USD per million tokens by model ref (TOML or JSON): the report's cost",
    },
    "eval-id": { type: "string", valueName: "id", help: "names the eval; an existing one is resumed" },
    concurrency: { type: "string", valueName: "n", help: "items run at once (default 2)" },
    tolerance: {
      type: "string",
      valueName: "x",
      help: "how far (0..1) a case's score may fall below its baseline's and still pass (default 0)",
    },
    ci: { type: "boolean", help: "print `N passed, N failed` last; exit 5 when a case regressed" },
    // An internal prompt instead of the sessions' turns (actions/eval-internal.ts).
    internal: {
      type: "string",
      valueName: "kind",
      help: "replay an internal prompt instead: compaction or memory_extract (cases <session>[@<segment>]; --pack holds the changed prompt)",
    },
    "must-keep": {
      type: "string",
      multiple: true,
      valueName: "text",
      help: "with --internal: a text that must survive (the checklist scorer); repeatable",
    },
  },
  positionals: { max: 1000, names: "[<session>[:<from>-<to>]...]" },
  run: lazyRun(() => import("../actions/eval.js")),
};
