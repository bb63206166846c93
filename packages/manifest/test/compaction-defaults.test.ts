import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultCompactionConfig, loadManifest } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
});
afterEach(async () => {
  await t.cleanup();
});

describe("compaction defaults have one source", () => {
  it("an empty [compaction] table resolves to defaultCompactionConfig of the model's context window", async () => {
    await t.write(
      "proj/.podkit/manifest.toml",
      `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\ncontext_window = 100000\n[compaction]\n`,
    );
    const { manifest } = await loadManifest({ env: t.env("proj") });
    expect(manifest.compaction).toEqual(defaultCompactionConfig(100000));
    expect(defaultCompactionConfig(100000)).toMatchObject({ threshold: 60000, request_threshold: 75000 });
  });
});
