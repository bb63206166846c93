import { existsSync } from "node:fs";
import { join } from "node:path";
import { AbortedError, createModelAdapter } from "@podkit/llm-worker";
import { FsStore, restoreSession, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { caught } from "./helpers.js";
import {
  assertLogsSound,
  kinds,
  MODEL_REF,
  readAllSegments,
  sessionEntries,
  systemOf,
  text,
  usePodWorlds,
} from "./pod-harness.js";

const world = usePodWorlds();

describe("Pod options", () => {
  it("model: a LanguageModelV3 instance is used as it is (no key variable needed)", async () => {
    const w = await world();
    const model = await createModelAdapter(MODEL_REF, {
      apiKey: "instance-key",
      baseUrl: w.double.baseUrl,
    }).load();
    const pod = await w.pod({ model, env: {} });
    w.double.enqueue(text("from the instance"));
    expect((await pod.run("hi")).text).toBe("from the instance");
    expect(w.double.requests[0]?.headers["x-api-key"]).toBe("instance-key");
    expect(systemOf(w.double.requests[0] as never)).toBe(pod.systemPrompt);
  });

  it("store: any Store is written instead of the workspace default, and restore reads it", async () => {
    const w = await world();
    const root = join(w.root, "elsewhere");
    const store = new FsStore({ root });
    try {
      const pod = await w.pod({ store });
      w.double.enqueue(text("stored elsewhere"), text("again"));
      await pod.run("hi");
      await pod.close(); // a given store is not closed by the pod
      expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
      const state = await restoreSession(store, pod.sessionId as string);
      expect(state.turn).toBe(1);
      const restored = await w.restore(pod.sessionId as string, { store });
      await restored.run("second");
      expect((await restoreSession(store, pod.sessionId as string)).turn).toBe(2);
      expect((await readAllSegments(w.workspace, root)).size).toBe(1);
      await assertLogsSound(w.workspace, root);
    } finally {
      await store.close();
    }
  });

  it("signal: the pod's own signal aborts its runs like a run's signal", async () => {
    const w = await world();
    const controller = new AbortController();
    const pod = await w.pod({ signal: controller.signal });
    w.double.enqueue({
      parts: [{ type: "text", text: "late" }],
      fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
    });
    const outcome = caught(pod.run("hi"));
    // Aborted while the request is held: once the double has it (bounded at 20 s), not after a
    // fixed delay that a busy machine could overrun.
    for (let i = 0; i < 2_000 && w.double.requests.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(w.double.requests).toHaveLength(1);
    controller.abort();
    expect(AbortedError.isInstance(await outcome)).toBe(true);
    // The person's message stays; only the answer that never committed is gone.
    expect(kinds(await sessionEntries(w.workspace))).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "run_errored",
    ]);
  });
});
