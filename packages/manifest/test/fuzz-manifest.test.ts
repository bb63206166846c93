import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

// A valid manifest touching every table, mutated 1,000 times by a seeded PRNG. Every outcome must
// be either a valid manifest or a ManifestError naming the file and the line or key at fault —
// never any other exception.
const VALID = `# fuzz base
[pod]
name = "reviewer"

[model]
ref = "anthropic/claude-sonnet-4-5"
context_window = 200000

[worker]
system_prompt = """
Today is {{ date }}.
{{ scope.summary }}
"""
language = "English"
max_tokens = 4096
max_turns = 12
temperature = 0.2
top_p = 0.9
top_k = 40
stop_sequences = ["END"]
reasoning = "medium"

[worker.tool_output]
default_max_bytes = 65536
per_tool = { grep = 32768 }

[[scope.allow]]
target = "."
permission = "write"

[[scope.allow]]
target = "docs"
permission = "read"
recursive = false

[[scope.deny]]
target = "secrets"
permission = "read"

[compaction]
threshold = 120000
request_threshold = 150000
retained_tokens = 8000

[memory]
extract_threshold = 20000
consolidation_threshold_files = 8
tools = true

[[mcp.server]]
name = "github"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
`;

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const VALUES = [
  '"text"',
  "42",
  "0",
  "-7",
  "1.5",
  "true",
  "[1, 2]",
  '["a"]',
  "{ a = 1 }",
  "1979-05-27",
  '""',
  "inf",
  '"../x"',
];
const KEYS = [
  "name",
  "ref",
  "target",
  "permission",
  "recursive",
  "max_turns",
  "system",
  "path",
  "bogus",
  "__proto__",
  "a.b",
];

type Mutation = (bytes: Buffer, rand: () => number) => Buffer;
const pick = <T>(list: readonly T[], rand: () => number): T => list[Math.floor(rand() * list.length)] as T;
const lines = (b: Buffer) => b.toString("latin1").split("\n");
const join = (l: string[]) => Buffer.from(l.join("\n"), "latin1");

const mutations: Record<string, Mutation> = {
  byteFlip: (b, rand) => {
    const out = Buffer.from(b);
    if (out.length > 0) out[Math.floor(rand() * out.length)] = Math.floor(rand() * 256);
    return out;
  },
  deleteLine: (b, rand) => {
    const l = lines(b);
    l.splice(Math.floor(rand() * l.length), 1);
    return join(l);
  },
  duplicateLine: (b, rand) => {
    const l = lines(b);
    const i = Math.floor(rand() * l.length);
    l.splice(i, 0, l[i] ?? "");
    return join(l);
  },
  swapValue: (b, rand) => {
    const l = lines(b);
    const candidates = l.map((text, i) => [text, i] as const).filter(([text]) => text.includes(" = "));
    if (candidates.length === 0) return b;
    const [text, i] = pick(candidates, rand);
    l[i] = `${text.slice(0, text.indexOf(" = "))} = ${pick(VALUES, rand)}`;
    return join(l);
  },
  renameKey: (b, rand) => {
    const l = lines(b);
    const candidates = l.map((text, i) => [text, i] as const).filter(([text]) => /^\w+ = /.test(text));
    if (candidates.length === 0) return b;
    const [text, i] = pick(candidates, rand);
    l[i] = text.replace(/^\w+/, pick(KEYS, rand));
    return join(l);
  },
  truncate: (b, rand) => b.subarray(0, Math.floor(rand() * b.length)),
};

let t: TempRoot;
beforeAll(async () => {
  t = await makeTempRoot();
  await t.mkdir("pod/docs");
});
afterAll(async () => {
  await t.cleanup();
});

describe("manifest fuzzing", () => {
  it("turns 1,000 seeded mutations into either a valid manifest or a ManifestError naming file and line or key", async () => {
    const rand = prng(0x9e3779b9);
    const names = Object.keys(mutations);
    const file = t.path("pod/manifest.toml");
    const env = t.env("pod");
    const outcomes = { valid: 0, rejected: 0 };
    const byKind = new Map<string, number>();
    for (let n = 0; n < 1000; n++) {
      let bytes: Buffer = Buffer.from(VALID, "utf8");
      const applied: string[] = [];
      const count = 1 + Math.floor(rand() * 3);
      for (let m = 0; m < count; m++) {
        const name = pick(names, rand);
        applied.push(name);
        bytes = (mutations[name] as Mutation)(bytes, rand);
      }
      await writeFile(file, bytes);
      try {
        const loaded = await loadManifest({ file, env });
        expect(loaded.manifest.pod.name.trim()).not.toBe("");
        expect(loaded.manifest.worker.max_turns).toBeGreaterThanOrEqual(1);
        outcomes.valid++;
      } catch (error) {
        if (!ManifestError.isInstance(error)) {
          throw new Error(
            `mutation #${n} (${applied.join(", ")}) threw a non-manifest error: ${String(error)}`,
            {
              cause: error,
            },
          );
        }
        expect(error.message.trim(), `mutation #${n}`).not.toBe("");
        // Each rejection says where: the file it read, and the line or the key at fault.
        expect(error.file, `mutation #${n} (${applied.join(", ")}): ${error.message}`).toBe(file);
        expect(
          error.line !== undefined || error.keyPath !== undefined,
          `mutation #${n} (${applied.join(", ")}) names neither line nor key: ${error.message}`,
        ).toBe(true);
        byKind.set(error.kind, (byKind.get(error.kind) ?? 0) + 1);
        outcomes.rejected++;
      }
    }
    // The mutations must exercise both outcomes and every error stage a file can fail at to mean
    // anything (io: a flipped byte that is not UTF-8).
    expect(outcomes.valid).toBeGreaterThan(50);
    expect(outcomes.rejected).toBeGreaterThan(200);
    expect(byKind.get("io")).toBeGreaterThan(50);
    expect(byKind.get("syntax")).toBeGreaterThan(50);
    expect(byKind.get("schema")).toBeGreaterThan(50);
  });
});
