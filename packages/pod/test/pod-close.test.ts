import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CorruptEntryError, NotFoundError, sessionsRoot } from "@podkit/session-store";
import { definePodkitToolPackage } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import type { AfterTurnJobContext } from "../src/pod/after-turn-jobs.js";
import { Pod } from "../src/pod/pod.js";
import { caught } from "./helpers.js";
import { kinds, sessionEntries, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

describe("pod.close(): a final, bounded pass of the after-turn jobs that ask for it", () => {
  it("a runOnClose job runs once more at close and sees the session's last turn; others do not", async () => {
    const w = await world();
    const pod = await w.pod();
    const runs: { job: string; entries: number }[] = [];
    const job = (name: string, runOnClose: boolean) => ({
      name,
      runOnClose,
      async run(ctx: AfterTurnJobContext) {
        let entries = 0;
        for await (const _ of ctx.readEntries()) entries += 1;
        runs.push({ job: name, entries });
      },
    });
    pod.addAfterTurnJob(job("tail-reader", true));
    pod.addAfterTurnJob(job("every-turn", false));
    w.double.enqueue(text("one"));
    await pod.run("first");
    await pod.whenJobsIdle();
    expect(runs.map((run) => run.job)).toEqual(["tail-reader", "every-turn"]);
    await pod.close();
    expect(runs.map((run) => run.job)).toEqual(["tail-reader", "every-turn", "tail-reader"]);
  });

  it("the final pass can still write through the pod's writer before the store closes", async () => {
    const w = await world();
    const pod = await w.pod();
    let passes = 0;
    pod.addAfterTurnJob({
      name: "closer",
      runOnClose: true,
      async run(ctx) {
        passes += 1;
        await ctx.appendExtension("closer", { pass: passes });
      },
    });
    w.double.enqueue(text("one"));
    await pod.run("first");
    await pod.whenJobsIdle();
    await pod.close();
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries).slice(-2)).toEqual(["extension", "extension"]);
    expect(entries.at(-1)).toMatchObject({ kind: "extension", domain: "closer", payload: { pass: 2 } });
  });

  it("the final pass is bounded: a job waiting on its signal is aborted at the timeout, one ignoring it is left behind", async () => {
    const w = await world();
    const pod = await w.pod();
    let aborted = false;
    let closing = false;
    pod.addAfterTurnJob({
      name: "waits-for-signal",
      runOnClose: true,
      run: (ctx) =>
        closing
          ? new Promise<void>((resolve) =>
              ctx.signal.addEventListener("abort", () => {
                aborted = true;
                resolve();
              }),
            )
          : Promise.resolve(),
    });
    pod.addAfterTurnJob({
      name: "never-ends",
      runOnClose: true,
      run: () => (closing ? new Promise<void>(() => {}) : Promise.resolve()),
    });
    w.double.enqueue(text("one"));
    await pod.run("first");
    await pod.whenJobsIdle();
    closing = true;
    await pod.close({ timeoutMs: 50 });
    expect(aborted).toBe(true);
  });

  it("close({signal}) ends the final pass when the caller aborts", async () => {
    const w = await world();
    const pod = await w.pod();
    let closing = false;
    let started!: () => void;
    const inFinalPass = new Promise<void>((resolve) => {
      started = resolve;
    });
    let sawAbort = false;
    pod.addAfterTurnJob({
      name: "slow-tail",
      runOnClose: true,
      run: (ctx) => {
        if (!closing) return Promise.resolve();
        started();
        return new Promise<void>((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve();
          }),
        );
      },
    });
    w.double.enqueue(text("one"));
    await pod.run("first");
    await pod.whenJobsIdle();
    closing = true;
    const controller = new AbortController();
    const closed = pod.close({ signal: controller.signal });
    await inFinalPass;
    controller.abort();
    await closed;
    expect(sawAbort).toBe(true);
  });
});

describe("Pod.restore closes what it opened when the session cannot be opened", () => {
  it("a missing session: the tool packages' clean-ups run before the error is thrown", async () => {
    let opened = 0;
    let closed = 0;
    const tracked = definePodkitToolPackage({
      name: "tracked",
      tools: (ctx) => {
        opened += 1;
        ctx.onClose(() => {
          closed += 1;
        });
        return [];
      },
    });
    const w = await world({ toolPackages: [tracked] });
    // Positive control: a pod that is closed runs the clean-up once.
    const pod = await w.pod();
    await pod.close();
    expect([opened, closed]).toEqual([1, 1]);

    // A missing session fails before any tool package is loaded (its place in a tree is read first).
    const error = await caught(Pod.restore(w.loaded, "no-such-session", w.options()));
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect([opened, closed]).toEqual([1, 1]);

    // A session whose log breaks after its first and last lines: the tools were loaded, and closed.
    w.double.enqueue(text("one"), text("two"));
    const writer = await w.pod();
    await writer.run("first").result;
    await writer.run("second").result;
    const sessionId = writer.sessionId as string;
    await writer.close();
    const [file] = (await readdir(join(sessionsRoot(w.workspace), sessionId))).filter((n) =>
      n.endsWith(".jsonl"),
    );
    const path = join(sessionsRoot(w.workspace), sessionId, file as string);
    const intact = await readFile(path, "utf8");
    const lines = intact.split("\n");
    lines[3] = "{ not json";
    await writeFile(path, lines.join("\n"));
    const [before] = [opened];
    const corrupt = await caught(Pod.restore(w.loaded, sessionId, w.options()));
    expect(CorruptEntryError.isInstance(corrupt)).toBe(true);
    expect(opened).toBe(before + 1);
    expect(closed).toBe(opened);
    await writeFile(path, intact); // the harness checks every log it leaves
  });
});
