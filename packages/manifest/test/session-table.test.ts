import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;
const SECRET = "s3cr3t-pa55word";

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

describe("[session]", () => {
  it("defaults to the filesystem store when no layer sets it", async () => {
    const { manifest, provenance } = await load(await t.write("proj/a.toml", MINIMAL));
    expect(manifest.session).toEqual({ store: "fs" });
    expect(provenance.get("session.store")).toMatchObject({ layer: { kind: "builtin" } });
  });

  it("selects PostgreSQL with the variable holding the URL, defaulting it to PODKIT_DATABASE_URL", async () => {
    const named = await load(
      await t.write("proj/a.toml", `${MINIMAL}[session]\nstore = "postgres"\nurl_env = "TEAM_PG_URL"\n`),
    );
    expect(named.manifest.session).toEqual({ store: "postgres", url_env: "TEAM_PG_URL" });
    expect(named.provenance.get("session.url_env")).toMatchObject({ layer: { kind: "file" }, line: 7 });

    const defaulted = await load(await t.write("proj/b.toml", `${MINIMAL}[session]\nstore = "postgres"\n`));
    expect(defaulted.manifest.session).toEqual({ store: "postgres", url_env: "PODKIT_DATABASE_URL" });
    expect(defaulted.provenance.get("session.url_env")).toMatchObject({ layer: { kind: "builtin" } });
  });

  it("layers like every table: the workspace picks the store, a --set overlay another variable", async () => {
    await t.write("proj/.podkit/manifest.toml", `[session]\nstore = "postgres"\n`);
    const { manifest } = await load(await t.write("proj/a.toml", MINIMAL), ["session.url_env=CI_PG_URL"]);
    expect(manifest.session).toEqual({ store: "postgres", url_env: "CI_PG_URL" });
  });

  it("refuses a connection URL in url_env, naming file, line and key, without echoing the password", async () => {
    const file = await t.write(
      "proj/a.toml",
      `${MINIMAL}[session]\nstore = "postgres"\nurl_env = "postgres://podkit:${SECRET}@db.internal/podkit"\n`,
    );
    const error = await failure(load(file));
    expect(error.keyPath).toBe("session.url_env");
    expect(error.file).toBe(file);
    expect(error.line).toBe(7);
    expect(error.message).toContain("holds a connection URL");
    expect(error.message).toContain('url_env = "PODKIT_DATABASE_URL"');
    expect(error.message).not.toContain(SECRET);
  });

  it("refuses a url key, pointing at url_env, without echoing the password", async () => {
    const error = await failure(
      load(
        await t.write(
          "proj/a.toml",
          `${MINIMAL}[session]\nstore = "postgres"\nurl = "postgres://podkit:${SECRET}@db.internal/podkit"\n`,
        ),
      ),
    );
    expect(error.keyPath).toBe("session.url");
    expect(error.message).toContain('use "session.url_env" instead');
    expect(error.message).not.toContain(SECRET);
  });

  it("refuses an unknown store and a malformed variable name", async () => {
    const store = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[session]\nstore = "sqlite"\n`)),
    );
    expect(store.keyPath).toBe("session.store");
    expect(store.message).toContain('expected "fs" | "postgres", got "sqlite"');

    const name = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[session]\nstore = "postgres"\nurl_env = "PG URL"\n`)),
    );
    expect(name.keyPath).toBe("session.url_env");
    expect(name.message).toContain("expected an environment variable name");
  });
});
