// A realistic memory tree for the memory benchmarks: 5,000 records written through the package's
// own record writer (canonical form), deterministic (a fixed linear congruential generator).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

const WORDS = (
  "build cache layout policy release review token budget workspace package module compaction summary decision " +
  "request prompt catalog session segment provider retry stream tool scope manifest lint query extract staging " +
  "audit schema record slug source range lock worker model adapter anthropic openai gemini ollama changeset turbo " +
  "vitest biome pnpm node typescript esm bundle deploy docker image registry mirror proxy secret env config table " +
  "shell bash grep glob editor format style naming error message hint retryable timeout deadline signal abort"
).split(" ");

export async function writeFileAtomicForBench(workspace, { joinRecord, recordLabel }) {
  let seed = 42;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const sentence = () => Array.from({ length: 8 + rand(10) }, () => WORDS[rand(WORDS.length)]).join(" ");
  const body = (refs) => {
    const lines = [];
    const target = 400 + rand(1200);
    while (lines.join("\n").length < target) lines.push(`${sentence()}.`);
    if (refs.length > 0) lines.push(`Related: ${refs.map((r) => `#${r}`).join(", ")}.`);
    if (rand(100) === 0) lines.push("This mentions the needle-topic once.");
    return lines.join("\n");
  };
  const sources = () =>
    Array.from({ length: 1 + rand(12) }, (_, i) => ({
      segment_id: `0190aaaa-0000-7000-8000-${String(rand(1e6)).padStart(12, "0")}`,
      range: [i * 10, i * 10 + 9],
    }));
  const ts = "2026-04-01T10:00:00Z";
  // Slugs as a model would name things: three distinct words, no two with the same word set.
  const taken = new Set();
  const slug = () => {
    for (;;) {
      const words = [WORDS[rand(WORDS.length)], WORDS[rand(WORDS.length)], WORDS[rand(WORDS.length)]];
      const key = [...words].sort().join("-");
      if (new Set(words).size === 3 && !taken.has(key)) {
        taken.add(key);
        return words.join("-");
      }
    }
  };
  const out = [];
  const put = async (kind, slug, frontmatter, text) => {
    const file = join(workspace, recordLabel(kind, slug));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, joinRecord(kind, frontmatter, text));
    out.push(file);
  };
  const decisions = Array.from({ length: 2000 }, () => slug());
  for (const [i, slug] of decisions.entries()) {
    const replaced = i % 10 === 0 && i + 1 < decisions.length;
    await put(
      "decision",
      slug,
      {
        created_at: ts,
        updated_at: ts,
        status: replaced ? "replaced" : i % 3 === 0 ? "open" : "resolved",
        ...(replaced ? { replaced_by: decisions[i + 1] } : {}),
        sources: sources(),
      },
      body(i > 0 ? [decisions[i - 1]] : []),
    );
  }
  for (let i = 0; i < 1500; i++) {
    await put("request", slug(), { created_at: ts, updated_at: ts, sources: sources() }, body([]));
  }
  for (let i = 0; i < 1499; i++) {
    await put(
      "knowledge",
      slug(),
      {
        created_at: ts,
        updated_at: ts,
        kind: ["term", "policy", "rule", "fact", "howto"][i % 5],
        description: `What ${sentence()} is and when to use it.`,
        model_invocation: false,
        last_sources: sources(),
      },
      body([decisions[i % decisions.length]]),
    );
  }
  await put("summary", "summary", { updated_at: ts }, body([decisions[0]]));
  return out;
}
