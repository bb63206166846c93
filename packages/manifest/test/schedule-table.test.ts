import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;
const NIGHTLY = `[[schedule]]\nname = "nightly"\ncron = "0 3 * * *"\ninput = "Summarise yesterday's commits."\n`;

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

describe("[[schedule]]", () => {
  it("is empty by default and lists each entry with its line", async () => {
    expect((await load(await t.write("proj/a.toml", MINIMAL))).manifest.schedule).toEqual([]);
    const { manifest, provenance } = await load(
      await t.write(
        "proj/b.toml",
        `${MINIMAL}${NIGHTLY}[[schedule]]\nname = "weekly"\ncron = "0 0 7 * * 1"\ninput = "Plan the week."\ntz = "Europe/Berlin"\n`,
      ),
    );
    expect(manifest.schedule).toEqual([
      { name: "nightly", cron: "0 3 * * *", input: "Summarise yesterday's commits." },
      { name: "weekly", cron: "0 0 7 * * 1", input: "Plan the week.", tz: "Europe/Berlin" },
    ]);
    expect(provenance.get("schedule[1].cron")).toMatchObject({ line: 11 });
  });

  it("accumulates across layers like the other lists of tables", async () => {
    await t.write("proj/.podkit/manifest.toml", NIGHTLY);
    const { manifest } = await load(
      await t.write(
        "proj/a.toml",
        `${MINIMAL}[[schedule]]\nname = "hourly"\ncron = "0 * * * *"\ninput = "Check the queue."\n`,
      ),
    );
    expect(manifest.schedule.map((s) => s.name)).toEqual(["nightly", "hourly"]);
  });

  it("refuses a malformed cron expression, naming the key and line", async () => {
    const file = await t.write(
      "proj/a.toml",
      `${MINIMAL}[[schedule]]\nname = "x"\ncron = "every day"\ninput = "hi"\n`,
    );
    const error = await failure(load(file));
    expect(error.keyPath).toBe("schedule[0].cron");
    expect(error.file).toBe(file);
    expect(error.line).toBe(7);
    expect(error.message).toContain("expected a cron expression of 5 fields");
  });

  it("refuses an unknown key, a missing input and a duplicate name", async () => {
    const unknown = await failure(
      load(
        await t.write(
          "proj/a.toml",
          `${MINIMAL}[[schedule]]\nname = "x"\ncron = "* * * * *"\ninput = "hi"\nprompt = "hi"\n`,
        ),
      ),
    );
    expect(unknown.keyPath).toBe("schedule[0].prompt");
    const missing = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[[schedule]]\nname = "x"\ncron = "* * * * *"\n`)),
    );
    expect(missing.keyPath).toBe("schedule[0].input");
    await t.write("proj/.podkit/manifest.toml", NIGHTLY);
    const file = await t.write("proj/c.toml", `${MINIMAL}${NIGHTLY}`);
    const duplicate = await failure(load(file));
    // The second definition is the file's first entry (the workspace layer's came first).
    expect(duplicate.keyPath).toBe("schedule[0].name");
    expect(duplicate.file).toBe(file);
    expect(duplicate.message).toContain('duplicate schedule name "nightly"');
    expect(duplicate.line).toBe(6);
  });
});
