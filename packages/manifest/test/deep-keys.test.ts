import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseLayerSource } from "../src/cascade/read-layer.js";
import { ManifestError } from "../src/errors.js";
import { KeyLocator, MAX_KEY_DEPTH } from "../src/toml/locate-keys.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

// Issue 10: locating keys spent memory quadratic in the depth of a dotted key (6,000 segments:
// 1 GB and 8 s; 14,000: out of memory). Key location is now linear and key depth is bounded.
// Time is bounded in CPU time, which a busy machine does not stretch the way it stretches wall time.
const CHILD = fileURLToPath(new URL("./deep-key-child.mjs", import.meta.url));

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
});
afterEach(async () => {
  await t.cleanup();
});

const dotted = (segments: number) => `${Array.from({ length: segments }, () => "a").join(".")} = 1\n`;

interface ChildOutcome {
  /** CPU time of the load (user + system), the bound's measure. */
  cpuMs: number;
  /** Wall time of the load, for information. */
  ms: number;
  peakExtraMb: number;
  loaded?: boolean;
  manifestError?: boolean;
  kind?: string;
  line?: number;
  message?: string;
}

/**
 * Loads `source` as a manifest in a child process whose heap is capped at 96 MB: the old
 * quadratic locator ran out of memory there (a crash fails the test rather than the runner).
 */
async function loadInChild(source: string): Promise<ChildOutcome> {
  const file = await t.write("deep/manifest.toml", source);
  const run = spawnSync(process.execPath, ["--max-old-space-size=96", CHILD, file], {
    encoding: "utf8",
    timeout: 20_000,
  });
  expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({
    status: 0,
    signal: null,
    stderr: "",
  });
  return JSON.parse(run.stdout) as ChildOutcome;
}

describe("deeply dotted manifest keys", () => {
  it("a dotted key of 20,000 segments is a clear error naming file and line, well under a second of CPU", async () => {
    const outcome = await loadInChild(dotted(20_000));
    expect(outcome.manifestError).toBe(true);
    expect(outcome.kind).toBe("syntax");
    expect(outcome.line).toBe(1);
    expect(outcome.message).toContain("manifest.toml:1:1");
    expect(outcome.message).toContain(`a key nests more than ${MAX_KEY_DEPTH} levels deep`);
    expect(outcome.cpuMs).toBeLessThan(1000);
    expect(outcome.peakExtraMb).toBeLessThan(64);
  });

  it("a table header of 20,000 segments is the same clear error", async () => {
    const header = `[${Array.from({ length: 20_000 }, () => "a").join(".")}]\nb = 1\n`;
    const outcome = await loadInChild(`[pod]\nname = "x"\n${header}`);
    expect(outcome.kind).toBe("syntax");
    expect(outcome.line).toBe(3);
    expect(outcome.cpuMs).toBeLessThan(1000);
  });

  it("a dotted key of 1,000 segments errors clearly too", async () => {
    const outcome = await loadInChild(dotted(1_000));
    expect(outcome.manifestError).toBe(true);
    expect(outcome.message).toContain(`a key nests more than ${MAX_KEY_DEPTH} levels deep`);
  });

  it("table and dotted key segments count together", () => {
    const deepTable = `[${Array.from({ length: 40 }, () => "t").join(".")}]\n`;
    const error = (() => {
      try {
        parseLayerSource("file", t.path("m.toml"), `${deepTable}${dotted(30)}`, t.root);
      } catch (e) {
        return e;
      }
    })();
    expect(ManifestError.isInstance(error)).toBe(true);
    expect((error as ManifestError).line).toBe(2);
  });

  it(`keys up to ${MAX_KEY_DEPTH} levels load as before: the schema names the unknown key and its line`, () => {
    const error = (() => {
      try {
        parseLayerSource("file", t.path("m.toml"), `${dotted(MAX_KEY_DEPTH)}[pod]\nname = "x"\n`, t.root);
      } catch (e) {
        return e;
      }
    })();
    expect(ManifestError.isInstance(error)).toBe(true);
    expect((error as ManifestError).kind).toBe("schema");
    expect((error as ManifestError).line).toBe(1);
    expect((error as ManifestError).message).toContain("unknown table");
  });

  it("inline tables nested deeper than the limit are a syntax error", () => {
    const inline = `x = ${"{ a = ".repeat(MAX_KEY_DEPTH + 1)}1${" }".repeat(MAX_KEY_DEPTH + 1)}\n`;
    const error = (() => {
      try {
        parseLayerSource("file", t.path("m.toml"), inline, t.root);
      } catch (e) {
        return e;
      }
    })();
    expect((error as ManifestError).kind).toBe("syntax");
  });

  it("the locator finds every level of a key at the depth limit", () => {
    const source = `[${Array.from({ length: 32 }, (_, i) => `k${i}`).join(".")}]\n${Array.from({ length: 32 }, (_, i) => `d${i}`).join(".")} = 1\n`;
    const locator = new KeyLocator(source);
    const table = Array.from({ length: 32 }, (_, i) => `k${i}`);
    const key = Array.from({ length: 32 }, (_, i) => `d${i}`);
    expect(locator.lineOf(table)).toBe(1);
    expect(locator.lineOf([...table, ...key])).toBe(2);
    expect(locator.lineOf([...table, ...key.slice(0, 5)])).toBe(2);
    expect(locator.lineOf([...table, "missing"])).toBe(1);
  });
});
