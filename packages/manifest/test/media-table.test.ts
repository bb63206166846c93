import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError, MEDIA_DEFAULTS } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
  await t.mkdir("proj/.podkit");
});
afterEach(async () => {
  await t.cleanup();
});

async function load(file: string, overlays: string[] = []) {
  return loadManifest({ file, overlays, env: t.env("proj") });
}

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

describe("[media]", () => {
  it("is on with its per-turn caps when no layer sets it, each key from the builtin layer", async () => {
    const { manifest, provenance } = await load(await t.write("proj/a.toml", MINIMAL));
    expect(manifest.media).toEqual({
      enabled: true,
      max_images_per_turn: 20,
      max_bytes_per_turn: 20 * 1024 * 1024,
    });
    expect(manifest.media).toEqual(MEDIA_DEFAULTS);
    expect(provenance.get("media.max_images_per_turn")).toMatchObject({ layer: { kind: "builtin" } });
  });

  it("takes a layer's keys and a --set overlay's, the rest from the defaults", async () => {
    const file = await t.write("proj/a.toml", `${MINIMAL}[media]\nmax_images_per_turn = 4\n`);
    const { manifest, provenance } = await load(file, ["media.enabled=false"]);
    expect(manifest.media).toEqual({
      enabled: false,
      max_images_per_turn: 4,
      max_bytes_per_turn: MEDIA_DEFAULTS.max_bytes_per_turn,
    });
    expect(provenance.get("media.max_images_per_turn")).toMatchObject({ layer: { kind: "file" }, line: 6 });
  });

  it("refuses an unknown key and a cap below 1, naming the file, the key and the line", async () => {
    const unknown = await failure(load(await t.write("proj/a.toml", `${MINIMAL}[media]\nmax_images = 3\n`)));
    expect(unknown.message).toMatch(/media\.max_images/);
    expect(unknown.issues[0]).toMatchObject({ file: t.path("proj/a.toml"), line: 6 });
    const zero = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[media]\nmax_bytes_per_turn = 0\n`)),
    );
    expect(zero.issues[0]).toMatchObject({ keyPath: "media.max_bytes_per_turn", line: 6 });
  });
});
