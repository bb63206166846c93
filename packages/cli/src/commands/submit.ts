import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit submit ["prompt"]` */
export const submit: CommandSpec = {
  path: ["submit"],
  summary: "queue a run of the pod for a worker on any machine; prints the run id",
  usage:
    'submit ["prompt"] [--session <id>] [--key <idempotency key>] [--continue] [--max-attempts <n>] [--manifest <file>] [--json]',
  details: [
    "The input is committed to the session log first (a new session, its system prompt rendered here,",
    "or --session), then the run is queued with ids only; `podkit worker` runs it. Without a prompt",
    "the input is read from standard input; --continue resumes the session without new input.",
    "A second submit with the same --key returns the first run and queues nothing.",
  ].join("\n"),
  options: {
    session: { type: "string", valueName: "id", help: "continue this session (default: a new one)" },
    key: { type: "string", valueName: "key", help: "idempotency key: a duplicate submit runs once" },
    continue: { type: "boolean", help: "no new input: the run resumes the session (--session required)" },
    "max-attempts": {
      type: "string",
      valueName: "n",
      help: "attempts before the run is dead-lettered (default 5)",
    },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  positionals: { max: 1, names: '["prompt"]' },
  run: lazyRun(() => import("../actions/submit.js")),
};
