import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { describeStoreConformance } from "../src/conformance/index.js";
import type { MinimalItem } from "../src/entry/entry-schema.js";
import { frameLine } from "../src/entry/line-frame.js";
import { FsStore } from "../src/fs/fs-store.js";
import type { Store } from "../src/store/store.js";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

describeStoreConformance(
  "FsStore",
  async () => {
    const root = await mkdtemp(join(tmpdir(), "podkit-conformance-"));
    const stores = [new FsStore({ root })];
    return {
      store: stores[0] as FsStore,
      openSecond() {
        const second = new FsStore({ root });
        stores.push(second);
        return second;
      },
      async writeRaw(ref, texts) {
        // As FsStore writes format v2: each entry framed with its sequence number and checksum,
        // so what is tested is the entry itself, not the frame.
        await mkdir(join(root, ref.sessionId), { recursive: true });
        const lines = texts.map((text, seq) => `${frameLine(text, seq)}\n`).join("");
        await writeFile(join(root, ref.sessionId, `${ref.segmentId}.jsonl`), lines);
      },
      async dispose() {
        await Promise.all(stores.map((store) => store.close()));
        await rm(root, { recursive: true, force: true });
      },
    };
  },
  { describe, it },
);

describe("@podkit/session-store/conformance", () => {
  it("is importable by its package subpath from plain Node, without vitest", () => {
    const probe = `
      const m = await import("@podkit/session-store/conformance");
      console.log(JSON.stringify({ kind: typeof m.describeStoreConformance }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", probe], {
      cwd: packageDir,
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({ kind: "function" });
  });

  it("registers its cases through the describe/it it is given", () => {
    const names: string[] = [];
    describeStoreConformance(
      "Probe",
      async () => {
        throw new Error("not called while registering");
      },
      {
        describe: (name, body) => {
          names.push(`describe ${name}`);
          body();
        },
        it: (name) => names.push(name),
      },
    );
    expect(names[0]).toBe("describe Probe conforms to the session store contract");
    expect(names.filter((name) => !name.startsWith("describe ")).length).toBeGreaterThanOrEqual(18);
  });
});

/** Runs the suite's cases against `makeStore` outside vitest's registry; returns the failed case names. */
async function failingCases(makeStore: (root: string) => Store<MinimalItem>): Promise<string[]> {
  const cases: [string, () => Promise<void>][] = [];
  describeStoreConformance(
    "Broken",
    async () => {
      const root = await mkdtemp(join(tmpdir(), "podkit-conformance-broken-"));
      return {
        store: makeStore(root),
        openSecond: () => makeStore(root),
        writeRaw: async () => {
          throw new Error("not needed");
        },
        dispose: () => rm(root, { recursive: true, force: true }),
      };
    },
    { describe: (_name, body) => body(), it: (name, body) => cases.push([name, body]) },
  );
  const failed: string[] = [];
  for (const [name, body] of cases) await body().catch(() => failed.push(name));
  return failed;
}

describe("the conformance suite catches broken stores (positive controls)", () => {
  it("fails a store that ignores the expected count (two writers interleave)", async () => {
    const failed = await failingCases((root) => {
      const store = new FsStore({ root });
      const append = store.append.bind(store);
      store.append = (ref, entries, options) =>
        append(ref, entries, { ...options, expectedCount: undefined });
      return store;
    });
    expect(failed).toContain("a writer whose segment changed forks with lineage instead of interleaving");
    expect(failed).toContain(
      "two writers racing on one segment: one keeps it, the other forks, nothing interleaves or is lost",
    );
  });

  it("fails a store that stores entries as re-serialized JSON with sorted keys (as jsonb would)", async () => {
    const sortKeys = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sortKeys)
        : value !== null && typeof value === "object"
          ? Object.fromEntries(
              Object.entries(value)
                .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
                .map(([k, v]) => [k, sortKeys(v)]),
            )
          : value;
    const failed = await failingCases((root) => {
      const store = new FsStore({ root });
      const readAll = store.readAll.bind(store);
      store.readAll = async function* (ref) {
        for await (const entry of readAll(ref)) yield sortKeys(entry) as typeof entry;
      };
      return store;
    });
    expect(failed).toContain("returns every item and entry byte-identical to what was appended");
  });
});
