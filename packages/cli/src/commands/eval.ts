import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit eval <session>... | --dataset <file>` */
export const evalCommand: CommandSpec = {
  path: ["eval"],
  summary: "replay recorded sessions through a changed manifest, model or prompt pack and score them",
  usage:
    "eval [<session>[:<from>-<to>]...] [--dataset <file>] [--manifest <file>] [--set key=value]... [--model <ref>] [--pack <file>] [--tools replay|live|stub] [--tool name=mode]... [--eval-id <id>] [--concurrency <n>] [--tolerance <x>] [--ci] [--json]",
  details: [
    "Each case — a recorded session, a turn range of one (<session>:<from>-<to>), or a line of a",
    "dataset file (JSON or JSON Lines) — is replayed input by input through a pod built from the",
    "variant (the manifest with --set overlays, --model, --pack) and written as a new session that",
    "records its origin (eval.origin) and its scores (eval.score). Tools answer from the recording",
    "by default (replay: a call never recorded is a divergence), or run for real in a scratch copy",
    "of the workspace (live), or return a fixed result (stub). Each case is scored with the",
    "deterministic scorers (answer, schema, trajectory, cache share) against the recording itself,",
    "the baseline. Finished items are kept in .podkit/evals/<eval id>/: rerun with the same",
    "--eval-id to resume. --ci prints `N passed, N failed` last and exits 1 when a case fell more",
    "than --tolerance below its baseline. docs/evals.md",
  ].join("\n"),
  options: {
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
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
    "eval-id": { type: "string", valueName: "id", help: "names the eval; an existing one is resumed" },
    concurrency: { type: "string", valueName: "n", help: "items run at once (default 2)" },
    tolerance: {
      type: "string",
      valueName: "x",
      help: "how far (0..1) a case's score may fall below its baseline's and still pass (default 0)",
    },
    ci: { type: "boolean", help: "print `N passed, N failed` last; exit 1 when a case regressed" },
  },
  positionals: { max: 1000, names: "[<session>[:<from>-<to>]...]" },
  run: lazyRun(() => import("../actions/eval.js")),
};
