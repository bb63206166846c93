import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, SessionLog } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { RUN_DOMAIN, RunInputError, type RunJob, readRunProgress } from "../src/index.js";
import { readSubmitted } from "../src/worker/run-progress.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function sessionWithRun(runId = "run-1") {
  const root = await mkdtemp(join(tmpdir(), "podkit-progress-"));
  dirs.push(root);
  const store = new FsStore<Item>({ root });
  const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
  const { index } = await log.append({
    kind: "extension",
    domain: RUN_DOMAIN,
    payload: { run_id: runId, event: "submitted", input: "hi" },
  });
  const job: RunJob = {
    runId,
    pod: "p",
    sessionId: log.sessionId,
    input: { segmentId: log.segmentId, index },
  };
  const started = (resumes = false) =>
    log.append({
      kind: "extension",
      domain: RUN_DOMAIN,
      payload: { run_id: runId, event: "started", attempt: 1, worker: "w:1", resumes },
    });
  return { store, log, job, started };
}

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "text", text }] }) as Item;

describe("readRunProgress: what earlier attempts left decides the next one", () => {
  it("is fresh before any attempt, and after an attempt that died before its input was committed", async () => {
    const { store, log, job, started } = await sessionWithRun();
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({ phase: "fresh" });
    await started();
    await log.append({ kind: "invoke", trigger: "user" });
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({ phase: "fresh" });
  });

  it("is committed once the input is in the log and the turn is open or failed", async () => {
    const { store, log, job, started } = await sessionWithRun();
    await started();
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "hi" },
    ]);
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({ phase: "committed" });
    await log.append({ kind: "run_errored", message: "boom", interrupted: true });
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({ phase: "committed" });
  });

  it("is turn_ended when the turn completed but the end was not recorded, ended once it was", async () => {
    const { store, log, job, started } = await sessionWithRun();
    await started();
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "hi" },
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "limit_reached", interrupted: false },
    ]);
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({
      phase: "turn_ended",
      result: "limit_reached",
    });
    await log.append({
      kind: "extension",
      domain: RUN_DOMAIN,
      payload: { run_id: job.runId, event: "ended", state: "completed", result: "limit_reached" },
    });
    expect(await readRunProgress(store, job, log.segmentId)).toMatchObject({ phase: "ended" });
  });

  it("a turn_ended run carries its turn's typed answer (its final_output entry), not an earlier turn's", async () => {
    const { store, log, job, started } = await sessionWithRun();
    const finalOutput = (value: unknown) => ({
      kind: "extension" as const,
      domain: "final_output",
      payload: { value, schema_digest: "sha256:00", normalizations: [], repairs: [] },
    });
    await started();
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "hi" },
      finalOutput({ verdict: "approve" }),
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({
      phase: "turn_ended",
      result: "finished",
      output: { verdict: "approve" },
    });
    // A later turn of the same run (a resume after approvals) without an answer drops the earlier one.
    await log.appendMany([
      { kind: "invoke", trigger: "resume" },
      { kind: "run_completed", result: "limit_reached", interrupted: false },
    ]);
    expect(await readRunProgress(store, job, log.segmentId)).toEqual({
      phase: "turn_ended",
      result: "limit_reached",
    });
  });

  it("follows a compaction that moved the run to a new segment", async () => {
    const { store, log, job, started } = await sessionWithRun();
    await started();
    const compacted = await log.createCompactedSegment({ history: [user("summary")] });
    expect(await readRunProgress(store, job, compacted.segmentId)).toEqual({ phase: "fresh" });
    await compacted.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "hi" },
    ]);
    expect(await readRunProgress(store, job, compacted.segmentId)).toEqual({ phase: "committed" });
  });

  it("refuses a job whose offset does not hold its submitted entry", async () => {
    const { store, job } = await sessionWithRun();
    expect((await readSubmitted(store, job)).input).toBe("hi");
    for (const wrong of [
      { ...job, input: { ...job.input, index: 0 } },
      { ...job, input: { ...job.input, index: 9 } },
      { ...job, runId: "another-run" },
    ]) {
      const error = await readSubmitted(store, wrong).catch((e: unknown) => e);
      expect(RunInputError.isInstance(error)).toBe(true);
    }
  });
});
