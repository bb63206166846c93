import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
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

describe("[sandbox]", () => {
  it("defaults to the OS backend, no network, and failing without it exactly when bash is on", async () => {
    const plain = await load(await t.write("proj/a.toml", MINIMAL));
    expect(plain.manifest.sandbox).toEqual({
      backend: "os",
      fail_if_unavailable: false,
      network: { allow: [] },
    });
    expect(plain.provenance.get("sandbox.fail_if_unavailable")).toMatchObject({
      layer: { kind: "builtin" },
      note: "[tools] bash is off",
    });
    const bash = await load(await t.write("proj/b.toml", `${MINIMAL}[tools]\nbash = true\n`));
    expect(bash.manifest.sandbox.fail_if_unavailable).toBe(true);
    expect(bash.provenance.get("sandbox.fail_if_unavailable")).toMatchObject({ note: "[tools] bash is on" });
  });

  it("takes a backend, the flag and network hosts; the topmost layer's host list wins", async () => {
    await t.write(
      "proj/.podkit/manifest.toml",
      `[sandbox.network]\nallow = ["registry.npmjs.org", "api.github.com"]\n`,
    );
    const file = await t.write(
      "proj/pod.toml",
      `${MINIMAL}[tools]\nbash = true\n[sandbox]\nbackend = "none"\nfail_if_unavailable = false\n[sandbox.network]\nallow = ["API.github.com", "*.example.com:8443", "127.0.0.1:4010", "[::1]:80"]\n`,
    );
    const loaded = await load(file);
    expect(loaded.manifest.sandbox).toEqual({
      backend: "none",
      fail_if_unavailable: false,
      network: { allow: ["api.github.com", "*.example.com:8443", "127.0.0.1:4010", "[::1]:80"] },
    });
    const overlaid = await load(file, ['sandbox.network.allow=["localhost"]']);
    expect(overlaid.manifest.sandbox.network.allow).toEqual(["localhost"]);
  });

  it("names the key and the line of a bad backend, a bad host and an unknown key", async () => {
    const backend = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[sandbox]\nbackend = "docker"\n`)),
    );
    expect(backend.keyPath).toBe("sandbox.backend");
    expect(backend.message).toContain('expected "os" | "none"');
    expect(backend.issues[0]?.line).toBe(6);

    const host = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[sandbox.network]\nallow = ["https://x.org/"]\n`)),
    );
    expect(host.keyPath).toBe("sandbox.network.allow[0]");
    expect(host.message).toContain("expected a host");

    const unknown = await failure(
      load(await t.write("proj/c.toml", `${MINIMAL}[sandbox]\nexcluded_commands = ["git"]\n`)),
    );
    expect(unknown.keyPath).toBe("sandbox.excluded_commands");
    expect(unknown.message).toContain("keys allowed in [sandbox]: backend, fail_if_unavailable, network");
  });
});
