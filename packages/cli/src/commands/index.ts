import { approvals, approve } from "./approvals.js";
import type { CommandSpec } from "./command.js";
import { compact } from "./compact.js";
import { demo } from "./demo.js";
import { evalCommand } from "./eval.js";
import { init } from "./init.js";
import { manifestShow } from "./manifest-show.js";
import { memoryConsolidate, memoryExtract, memoryLint, memoryQuery } from "./memory.js";
import { policyCheck } from "./policy.js";
import { promptCatalog } from "./prompt-catalog.js";
import { promptRender } from "./prompt-render.js";
import { resume } from "./resume.js";
import { run } from "./run.js";
import { runsCancel, runsList, runsShow } from "./runs.js";
import { serve } from "./serve.js";
import { sessionDoctor, sessionFork, sessionList, sessionShow } from "./session.js";
import { sessionRewind } from "./session-rewind.js";
import { storeGc } from "./store.js";
import { submit } from "./submit.js";
import { worker } from "./worker.js";

export type { CommandContext, CommandInput, CommandSpec, OptionSpec } from "./command.js";

/**
 * Every `podkit` command. To add one: write `src/commands/<name>.ts` exporting a `CommandSpec`
 * whose `run` is a `lazyRun` of its implementation in `src/actions/`, import it above, and add ONE
 * line to this list (help lists commands in this order). Only the specs load at start-up.
 */
// biome-ignore format: one command per line, so parallel additions never touch the same line.
export const commands: readonly CommandSpec[] = [
  init,
  run,
  resume,
  approve,
  approvals,
  sessionList,
  sessionShow,
  sessionFork,
  sessionDoctor,
  sessionRewind,
  storeGc,
  policyCheck,
  compact,
  evalCommand,
  memoryExtract,
  memoryConsolidate,
  memoryLint,
  memoryQuery,
  promptRender,
  promptCatalog,
  manifestShow,
  demo,
  submit,
  worker,
  runsList,
  runsShow,
  runsCancel,
  serve,
];
