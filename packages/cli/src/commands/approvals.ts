import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

const load = () => import("../actions/approvals.js");

/** `podkit approve <session> [<call>] --allow|--deny` */
export const approve: CommandSpec = {
  path: ["approve"],
  summary: "answer a tool call awaiting approval, from any machine that can open the store",
  usage:
    'approve <session> [<call>] --allow|--deny [--reason "…"] [--by <name>] [--json] [--manifest <file>]',
  details: [
    "Records the answer in the session log (approval_answered: the decision, who, when); the first",
    "answer stands, a second is refused naming who answered. Without <call> the session's only",
    "pending call is answered; when several are pending they are listed. Then `podkit resume",
    "<session>` runs an allowed call exactly once, or tells the model a denied one was denied.",
    "--by defaults to your user and host name.",
  ].join("\n"),
  options: {
    allow: { type: "boolean", help: "let the call run" },
    deny: { type: "boolean", help: "refuse the call; the model gets the reason as its error result" },
    reason: { type: "string", valueName: "text", help: "why (the model sees it on a denial)" },
    by: { type: "string", valueName: "name", help: "who answers (default: user@host)" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  positionals: { min: 1, max: 2, names: "<session> [<call>]" },
  run: lazyRun(async () => ({ run: (await load()).approve })),
};

/** `podkit approvals` */
export const approvals: CommandSpec = {
  path: ["approvals"],
  summary: "list the tool calls awaiting approval across the store's sessions",
  usage: "approvals [--json] [--manifest <file>]",
  details: [
    "Every pending call of every session in the store the manifest selects: the workspace's",
    "sessions on the filesystem, the whole database on PostgreSQL. Each line names the command",
    "that answers it.",
  ].join("\n"),
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  run: lazyRun(async () => ({ run: (await load()).approvals })),
};
