import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type LoadedManifest, loadManifest, type PodkitEnv } from "@podkit/manifest";
import { runMemoryConsolidation } from "@podkit/memory";
import {
  COMPACT_TOOL_NAMES,
  loadPodResources,
  Pod,
  type PodOptions,
  type PodWarning,
  podModelAdapter,
} from "@podkit/pod";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import type { CommandContext } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { type EventPrinter, textEventPrinter } from "../session/event-printer.js";
import { CLI_PACKAGES } from "../session/open-store.js";
import { startProgress } from "../session/progress.js";
import { runTurn } from "../session/run-turn.js";
import * as script from "./demo-script.js";
import { scratchCopy } from "./demo-workspace.js";
import { Narrator } from "./narrator.js";
import { toolsOffered, treeText, withChildLines } from "./review-step.js";

const STEPS = 10;
/** The key the demo hands its pod: the double accepts anything, and no real key is ever read. */
const SCRIPTED_KEY = "scripted-demo-no-real-key";

/** Everything one demo run holds. */
interface Demo {
  ctx: CommandContext;
  double: ProviderDouble;
  loaded: LoadedManifest;
  podOptions: PodOptions;
  printer: EventPrinter;
  say: Narrator;
}

/**
 * `podkit demo`: a scripted session on the Anthropic wire through the provider double, run by the
 * real pod on a scratch copy of examples/demo/workspace, narrated step by step.
 */
export async function runDemo(ctx: CommandContext, dir: string | undefined): Promise<number> {
  const { io } = ctx;
  const say = new Narrator(io.stdout, STEPS);
  io.stdout.write(
    [
      "podkit demo — the whole system on one session, offline, in a few seconds.",
      "The MODEL IS SCRIPTED: its answers were written in advance (packages/cli/src/demo/demo-script.ts)",
      "and are served by podkit's provider double, a local HTTP server speaking Anthropic's wire format.",
      "Everything else is podkit's real code: manifest cascade, prompt rendering, tools, session log,",
      "compaction, restore and memory.",
      "",
      "Plan: 1 scratch workspace · 2 system prompt · 3 tool turns · 4 a read-only reviewer child ·",
      "5 notification · 6 interrupt and recovery · 7 compaction · 8 restore · 9 memory consolidation ·",
      "10 where the files are",
      "",
    ].join("\n"),
  );
  const workspace = await scratchCopy(dir, ctx.env.cwd);
  const home = await mkdtemp(join(tmpdir(), "podkit-demo-home-"));
  const double = await startProviderDouble({ wire: "anthropic" });
  try {
    say.heading(
      "A scratch copy of examples/demo/workspace",
      "The pod works on a copy, so the example stays as it is. Its manifest is found through the",
      "workspace's .podkit/ like any podkit workspace; your own user config is not read.",
    );
    say.show(`workspace: ${workspace}`);
    const env: PodkitEnv = { cwd: workspace, home, env: {} };
    const loaded = await loadManifest({ env });
    say.show(
      `pod "${loaded.manifest.pod.name}", model ${loaded.manifest.model.ref} → provider double at ${double.baseUrl}`,
    );
    const printer = textEventPrinter(io.stdout);
    const demo: Demo = {
      ctx,
      double,
      loaded,
      podOptions: {
        model: double.baseUrl,
        env: { ANTHROPIC_API_KEY: SCRIPTED_KEY },
        onWarning: (warning: PodWarning) => say.say(`warning: ${warning.message}`),
        // The memory section (the resident summary) and the after-turn job, attached by the pod;
        // the demo's extract threshold is high, so extraction runs only in the job's final pass
        // when a pod closes, and consolidation where step 8 runs it.
        packages: CLI_PACKAGES,
        // The pod's builtin policy asks about every bash call; the answer is logged like any other.
        approver: () => {
          printer.endLine();
          say.say("bash call → approval prompt; the demo answers y (like `podkit run --yes`)");
          return { decision: "allow", by: "podkit demo" };
        },
      },
      printer,
      say,
    };
    const sessionId = await firstSession(demo);
    await restoreAndContinue(demo, sessionId);
    await memory(demo);
    await closing(demo, workspace, sessionId);
    return 0;
  } finally {
    await double.close();
    await rm(home, { recursive: true, force: true });
  }
}

/** Runs one scripted turn and checks that the pod made exactly the requests the script answers. */
async function turn(
  demo: Demo,
  text: string,
  responses: readonly ScriptedResponse[],
  onEvent?: (pod: Pod) => EventPrinter,
  pod?: Pod,
) {
  if (pod === undefined) throw new Error("no pod");
  demo.double.enqueue(...responses);
  demo.say.user(text);
  const outcome = await runTurn(pod, text, onEvent?.(pod) ?? demo.printer);
  expectScriptUsed(demo);
  return outcome;
}

/** Every scripted answer was asked for: the script and the real code agree on every request. */
function expectScriptUsed(demo: Demo): void {
  if (demo.double.pending() !== 0) {
    throw new PodkitCliError(
      `the demo's script and the pod disagree: ${demo.double.pending()} scripted answer(s) unused`,
      {
        hint: "this is a bug in the demo script; please report it",
      },
    );
  }
}

async function firstSession(demo: Demo): Promise<string> {
  const { say } = demo;
  const pod = await Pod.fromManifest(demo.loaded, demo.podOptions);
  say.heading(
    "Render the system prompt, once",
    "The manifest's template includes the builtin default prompt and $workspace/house-style (a prompt",
    "file of this workspace); the pod appends the scope and AGENTS.md. It is rendered once and stored",
    "verbatim in the session log, so every later request and any restore sends the same bytes.",
  );
  const prompt = await pod.renderSystemPrompt();
  say.show(`${prompt.length} characters; excerpts:`);
  for (const line of prompt.split("\n")) {
    if (/^## House style|^- Tools:|^# Tickets|TCK-<number>/.test(line)) say.show(`  │ ${line}`);
  }

  say.heading(
    "Tool-using turns with the real builtin tools",
    "grep, read_file and edit_file run on the scratch workspace (inside the manifest's scope); bash",
    "runs the project's real tests. Each call prints one line with its outcome.",
  );
  await turn(demo, "What does this project do? Anything left to fix?", script.EXPLORE, undefined, pod);
  await turn(demo, "Fix that TODO, add a test, and run the tests.", script.FIX, undefined, pod);
  await review(demo, pod);

  say.heading(
    "A notification",
    "pod.notify() queues a message from outside (here: CI). It is wrapped by the workspace's own",
    "notify_wrapper prompt (.podkit/prompts.toml overrides the builtin one), committed to the log,",
    "and only then seen by the model, at the next step of the next turn.",
  );
  pod.notify("build 381 on main: 3 tests passed, 0 failed");
  await turn(demo, "Anything else I should know?", script.AFTER_NOTIFICATION, undefined, pod);

  say.heading(
    "An interrupted turn and its recovery",
    "The model starts a 20-second benchmark; the demo presses Ctrl-C (pod.interrupt()) once it runs.",
    "The turn ends interrupted and the session goes on: the next turn first closes the open call",
    "with a synthetic result and commits the interrupt note, so the model knows what happened.",
  );
  const interrupted = await turn(
    demo,
    "Run the benchmark too.",
    script.SLOW,
    (p) => interruptOnToolStart(demo, p),
    pod,
  );
  say.show(
    interrupted.kind === "interrupted"
      ? "turn interrupted; the session goes on"
      : "(the turn was not interrupted)",
  );
  await turn(demo, "Never mind the benchmark. Are we done?", script.RECOVER, undefined, pod);
  const closing = pod.history.filter((item) => item.type === "tool_result").at(-1);
  if (closing?.type === "tool_result")
    say.show(`synthetic result of the interrupted call: "${closing.summary.split(".")[0]}."`);

  say.heading(
    "Compaction into a new segment",
    "pod.compact() (what `podkit compact` and the [compaction] thresholds run): the conversation as",
    "the pod last sent it, the compaction instruction appended (so it reads the prompt cache), writes",
    "a summary; the session continues in a new segment holding the summary and the retained tail.",
    "The old segment is left as it was.",
  );
  demo.double.enqueue(...script.COMPACT);
  const before = pod.segmentId;
  const outcome = await pod.compact({ onEvent: (event) => demo.printer.print(event) });
  expectScriptUsed(demo);
  if (outcome.status === "compacted")
    say.show(`segment ${before} → ${outcome.toSegmentId}; the old one is kept as it was`);
  else say.show(`compaction skipped: ${outcome.reason}`);

  const sessionId = pod.sessionId;
  if (sessionId === undefined) throw new Error("the demo pod has no session");
  await closeWithMemory(demo, pod, script.EXTRACT_AT_CLOSE);
  return sessionId;
}

/** The pod hands a review of its change to a read-only child pod, then the tree is shown. */
async function review(demo: Demo, pod: Pod): Promise<void> {
  const { say } = demo;
  say.heading(
    "A review by a read-only child pod",
    "The manifest declares a `reviewer` role ([subpods.reviewer] → .podkit/reviewer.toml): its own system",
    "prompt and prompt pack, read tools only, and a read loan of the project's scope. The model calls",
    "spawn_pod; the child is a session of its own, linked to this one, and its answer is the tool result.",
  );
  await turn(
    demo,
    "Have a reviewer check the change.",
    script.REVIEW,
    () => withChildLines(demo.printer, say),
    pod,
  );
  const offered = toolsOffered(demo.double.requests, script.REVIEWER_PROMPT);
  // Compaction's own tools ride on every list of a pod with [compaction], refused outside one.
  const compaction: readonly string[] = COMPACT_TOOL_NAMES;
  const tools = offered.filter((tool) => !compaction.includes(tool));
  const writers = tools.filter((tool) => ["write_file", "edit_file", "bash"].includes(tool));
  say.show(
    `the reviewer's model was offered: ${tools.join(", ")} — ${writers.length === 0 ? "no write tool, no bash" : `and ${writers.join(", ")}`}${tools.length < offered.length ? " (besides compaction's own tools, refused outside a compaction)" : ""}`,
  );
  const sessionId = pod.sessionId;
  if (sessionId !== undefined) say.show((await treeText(demo.loaded, sessionId)).trimEnd());
}

/** A printer that interrupts the turn once a tool call has run for a moment (the demo's Ctrl-C). */
function interruptOnToolStart(demo: Demo, pod: Pod): EventPrinter {
  const { printer } = demo;
  return {
    ...printer,
    print(event) {
      printer.print(event);
      if (event.type !== "tool_call_start") return;
      setTimeout(() => {
        printer.endLine();
        demo.say.show("^C  (the demo presses Ctrl-C: pod.interrupt())");
        pod.interrupt("Ctrl-C");
      }, 300);
    },
  };
}

async function restoreAndContinue(demo: Demo, sessionId: string): Promise<void> {
  const { say } = demo;
  say.heading(
    "Restore",
    "The pod is closed and a new one restored from the session log, as `podkit resume` does in a new",
    "process: the stored system prompt (AGENTS.md is not re-read), history, turn count and usage.",
  );
  const restored = await Pod.restore(demo.loaded, sessionId, demo.podOptions);
  say.show(
    `restored session ${sessionId} from its head segment ${restored.segmentId}: ${restored.turn} turns, ${restored.history.length} history items (the summary and the retained tail)`,
  );
  await turn(demo, "Remind me what we did today.", script.AFTER_RESTORE, undefined, restored);
  const request = demo.double.requests.at(-1)?.body as { system?: { text: string }[] } | undefined;
  const first = demo.double.requests[0]?.body as { system?: { text: string }[] } | undefined;
  const same =
    JSON.stringify(request?.system?.map((s) => s.text)) === JSON.stringify(first?.system?.map((s) => s.text));
  say.show(
    `system prompt sent after the restore is byte-identical to the first request's: ${same ? "yes" : "NO"}`,
  );
  await closeWithMemory(demo, restored, script.EXTRACT_AFTER_RESTORE);
}

/**
 * Closes a pod: memory's after-turn job takes its final pass and extracts the session's tail into
 * staging, below the extract threshold too (nothing a session said is left unextracted).
 */
async function closeWithMemory(demo: Demo, pod: Pod, extract: readonly ScriptedResponse[]): Promise<void> {
  demo.say.say("Closing the pod: memory's final pass extracts the session's tail into staging.");
  demo.double.enqueue(...extract);
  const unsubscribe = pod.subscribe((event) => {
    if (event.type === "job_progress") demo.printer.print(event);
  });
  try {
    await pod.close();
  } finally {
    unsubscribe();
  }
  expectScriptUsed(demo);
}

async function memory(demo: Demo): Promise<void> {
  const { say, loaded, podOptions } = demo;
  say.heading(
    "Memory: consolidation",
    "The pods' final passes staged what the session is worth remembering (the source is attached by",
    "code, not the model). Consolidation, which a pod's after-turn job runs past the [memory] thresholds,",
    "runs explicitly here (`podkit memory consolidate`): it writes durable records, each linted and audited.",
  );
  const model = podModelAdapter(loaded.manifest.model, podOptions.model, podOptions.env ?? {});
  const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
  const job = {
    workspace: loaded.workspace,
    model,
    prompts: catalog,
    language: loaded.manifest.worker.language,
  };
  demo.double.enqueue(...script.CONSOLIDATE);
  const progress = startProgress(demo.ctx.io.stdout, "consolidating memory");
  const consolidated = await runMemoryConsolidation({ ...job, force: true });
  expectScriptUsed(demo);
  if (consolidated.status === "consolidated") {
    progress.done(`${consolidated.changes.length} record(s) written`);
    for (const change of consolidated.changes)
      say.show(`  ${change.op} ${change.kind}/${change.slug} — ${change.reason}`);
  } else progress.failed(consolidated.status);
  say.say("The next session of this pod gets memory/summary.md as its `memory` context section.");
}

async function closing(demo: Demo, workspace: string, sessionId: string): Promise<void> {
  const { say } = demo;
  say.heading("Where everything is");
  const sessionDir = join(workspace, ".podkit", "sessions", sessionId);
  for (const file of (await readdir(sessionDir)).sort())
    say.show(`session log segment: ${join(sessionDir, file)}`);
  const memoryDir = join(workspace, ".podkit", "memory");
  say.show(
    `memory: ${join(memoryDir, "summary.md")}, ${join(memoryDir, "decisions")}/, ${join(memoryDir, "requests")}/`,
  );
  say.show(`memory audit log: ${join(memoryDir, "_logs", "audit.jsonl")}`);
  say.show(
    `changed by the pod: ${relative(workspace, join(workspace, "src", "tickets.js"))}, ${join("test", "tickets.test.js")}`,
  );
  say.show("");
  const bin = fileURLToPath(new URL("../bin.js", import.meta.url));
  say.show(`(\`podkit\` below is \`node ${bin}\` until @podkit/cli is installed)`);
  say.show("Look at the session:");
  say.show(`  cd ${workspace}`);
  say.show(`  podkit session show ${sessionId}`);
  say.show("Continue it with a real model:");
  say.show(`  ANTHROPIC_API_KEY=… podkit resume ${sessionId}`);
  say.show("");
  say.show(
    `${demo.double.requests.length} model requests were answered by the script; no network beyond 127.0.0.1 was used.`,
  );
}
