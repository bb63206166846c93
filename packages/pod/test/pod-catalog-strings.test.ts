import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTES_MAX_BYTES } from "../src/context/notes-section.js";
import type { Pod } from "../src/pod/pod.js";
import type { PodOptions } from "../src/pod/pod-options.js";
import { compactionTable, compactRequests, compactResponder } from "./compaction-harness.js";
import { caught, collectWarnings } from "./helpers.js";
import {
  gate,
  sessionEntries,
  testTools,
  text,
  toolCall,
  usePodWorlds,
  type World,
  type WorldSetup,
} from "./pod-harness.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

/** A workspace prompt pack (`.podkit/prompts.toml`) setting `values`. */
const workspacePack = (values: Record<string, string>) => ({
  "project/.podkit/prompts.toml": `[prompt]\n${Object.entries(values)
    .map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
    .join("\n")}\n`,
});

/** A world and a pod whose first run was interrupted during a tool call (the next turn records it). */
async function interruptedPod(
  setup: WorldSetup = {},
  options: PodOptions = {},
): Promise<{ w: World; pod: Pod }> {
  const slow = gate();
  const w = await world({ ...setup, toolPackages: [testTools({ slow: slow.run })] });
  const pod = await w.pod(options);
  w.double.enqueue(toolCall("slow"));
  const running = pod.run("start the long job");
  await slow.running;
  pod.interrupt();
  await caught(running);
  return { w, pod };
}

/** The body of the interrupt note the log holds. */
async function interruptNote(workspace: string): Promise<string | undefined> {
  const entry = (await sessionEntries(workspace)).find(
    (e) => e.kind === "system_item" && e.item.kind === "interrupt",
  );
  return entry?.kind === "system_item" ? String(entry.item.body) : undefined;
}

describe("the interrupt note says what follows it", () => {
  const userVariant = "The user's next message follows";

  it("resume() after an interrupted turn: the resume variant, not the one announcing a user message", async () => {
    const { w, pod } = await interruptedPod();
    w.double.enqueue(text("carrying on"));
    expect((await pod.resume()).status).toBe("finished");
    const note = await interruptNote(w.workspace);
    expect(note).toBe(pod.catalog.render("interrupt_system_note", { trigger: "resume" }));
    expect(note).not.toContain(userVariant);
    expect(sent(w.double.requests[1])).toContain("You are asked to continue that work now");
  });

  it("an autoRun turn for a notification after an interrupt: the notification variant", async () => {
    const { w, pod } = await interruptedPod({}, { autoRun: true });
    w.double.enqueue(text("seen"));
    pod.notify("deploy finished");
    await pod.whenIdle();
    const note = await interruptNote(w.workspace);
    expect(note).toBe(pod.catalog.render("interrupt_system_note", { trigger: "notify" }));
    expect(note).not.toContain(userVariant);
  });

  it("run() after an interrupt keeps the note announcing the user's message, and a pack can word each variant", async () => {
    const { w, pod } = await interruptedPod({
      files: workspacePack({ interrupt_system_note: "[STOPPED; next: {{ trigger }}]" }),
    });
    w.double.enqueue(text("ok"));
    await pod.run("something else");
    expect(await interruptNote(w.workspace)).toBe("[STOPPED; next: user]");
  });
});

describe("model-facing strings come from the catalog", () => {
  it("the NOTES.md truncation notice is the catalog's notes_truncation_notice", async () => {
    const w = await world({
      files: workspacePack({
        notes_truncation_notice: "[NOTES CUT: {{ file }} after {{ max_bytes }} bytes]",
      }),
    });
    await writeFile(join(w.workspace, ".podkit/NOTES.md"), "n".repeat(NOTES_MAX_BYTES + 10));
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    w.double.enqueue(text("ok"));
    await pod.run("hi");
    expect(sent(w.double.requests[0])).toContain(
      `[NOTES CUT: .podkit/NOTES.md after ${NOTES_MAX_BYTES} bytes]`,
    );
    expect(sent(w.double.requests[0])).not.toContain("continues: only its first");
    // The key is known: no unknown-key warning for the pack, only the size warning.
    expect(warnings.map((warning) => warning.code)).toEqual(["pod.context_section"]);
  });

  it("the compaction instruction is the catalog's compact_system: a workspace pack's value ends the compaction request", async () => {
    const w = await world({
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 10 }),
      files: workspacePack({
        compact_system:
          "[Compaction request from the runtime] OUR RULE: summarise items #0 to #{{ summarised - 1 }} of {{ items }}; kept from {{ kept_from }}",
      }),
      double: { respond: compactResponder({ summary: "the gist" }) },
    });
    const pod = await w.pod();
    for (let turn = 1; turn <= 3; turn++) {
      w.double.enqueue(text(`answer number ${turn}`));
      await pod.run(`question number ${turn}`);
    }
    expect(await pod.compact()).toMatchObject({ status: "compacted" });
    const request = compactRequests(w.double.requests)[0];
    const last = JSON.stringify(request?.body.messages.at(-1));
    expect(last).toMatch(
      /OUR RULE: summarise items #0 to #4 of 6; kept from #5 \[Assistant\] answer number 3/,
    );
    expect(last).not.toContain("What the summary must keep");
  });
});
