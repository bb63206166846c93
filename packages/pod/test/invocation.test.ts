import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Item, ItemSchema, RequestConfigSchema } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { FsStore, SessionLog, type Store } from "@podkit/session-store";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { INVOCATION_DOMAIN, invocationOf, Pod, parseInvocation, recordedInvocation } from "../src/index.js";

// A session records how its manifest was given (`-m`, `--set`) once, right after its
// `segment_start`, so every door continues it with the same pod; nothing when there is nothing
// beyond the workspace's own manifest.

let double: ProviderDouble;
let root: string;
let store: Store<Item>;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-invocation-")));
  await mkdir(join(root, "ws", ".podkit"), { recursive: true });
  await mkdir(join(root, "home"));
  await writeFile(
    join(root, "ws", "pod.toml"),
    '[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
  );
  await writeFile(
    join(root, "ws", ".podkit", "manifest.toml"),
    '[pod]\nname = "w"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
  );
  store = new FsStore<Item>({
    root: join(root, "sessions"),
    itemSchema: ItemSchema,
    configSchema: RequestConfigSchema.loose(),
  });
});
afterEach(async () => {
  await store.close();
  await double.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ cwd: join(root, "ws"), home: join(root, "home"), env: {} });

async function runOnce(file: string | undefined, overlays: string[]): Promise<string> {
  const loaded = await loadManifest({ ...(file === undefined ? {} : { file }), overlays, env: env() });
  double.enqueue({ parts: [{ type: "text", text: "ok" }] });
  const pod = await Pod.fromManifest(loaded, {
    store,
    model: double.baseUrl,
    env: { ANTHROPIC_API_KEY: "k" },
  });
  await pod.run("hi");
  const id = pod.sessionId as string;
  await pod.close();
  return id;
}

describe("the recorded invocation", () => {
  it("records -m (relative to the workspace) and --set in order, and reads them back", async () => {
    const id = await runOnce("pod.toml", ["worker.max_turns=3", "model.base_url=http://127.0.0.1:1/v1"]);
    expect(await recordedInvocation(store, id)).toEqual({
      manifest: "pod.toml",
      set: ["worker.max_turns=3", "model.base_url=http://127.0.0.1:1/v1"],
    });
    const kinds: string[] = [];
    const segment = (await store.listSegments(id))[0] as string;
    for await (const entry of store.readAll({ sessionId: id, segmentId: segment })) kinds.push(entry.kind);
    expect(kinds.slice(0, 3)).toEqual(["segment_start", "extension", "invoke"]);
  });

  it("is found after compactions (a compacted segment starts with empty extension state)", async () => {
    const id = await runOnce("pod.toml", ["worker.max_turns=3"]);
    for (let i = 0; i < 2; i++) {
      const log = await SessionLog.open(store, id);
      const next = await log.createCompactedSegment({ history: [], atTurn: 1 });
      await next.append({ kind: "invoke", trigger: "user" });
      await next.append({ kind: "run_completed", result: "finished", interrupted: false });
    }
    expect((await store.listSegments(id)).length).toBe(3);
    expect(await recordedInvocation(store, id)).toEqual({
      manifest: "pod.toml",
      set: ["worker.max_turns=3"],
    });
  });

  it("records nothing for the workspace's own manifest", async () => {
    const id = await runOnce(undefined, []);
    expect(await recordedInvocation(store, id)).toBeUndefined();
    const segment = (await store.listSegments(id))[0] as string;
    for await (const entry of store.readAll({ sessionId: id, segmentId: segment }))
      expect(entry.kind === "extension" && entry.domain === INVOCATION_DOMAIN).toBe(false);
  });

  it("keeps a manifest outside the workspace absolute", async () => {
    await writeFile(
      join(root, "outside.toml"),
      '[pod]\nname = "o"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
    );
    const loaded = await loadManifest({ file: join(root, "outside.toml"), env: env() });
    expect(invocationOf(loaded)).toEqual({ manifest: join(root, "outside.toml") });
  });

  it("treats a payload of the wrong shape as no record (a log read back is untrusted)", () => {
    for (const bad of [
      null,
      1,
      "x",
      [],
      { manifest: 3 },
      { manifest: "" },
      { set: "a=b" },
      { set: [1] },
      {},
    ]) {
      expect(parseInvocation(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(parseInvocation({ manifest: "m.toml", set: ["a=1"], extra: true })).toEqual({
      manifest: "m.toml",
      set: ["a=1"],
    });
  });
});
