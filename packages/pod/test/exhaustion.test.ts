import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import nunjucks from "nunjucks";
import { describe, expect, it } from "vitest";
import { CORPUS, PLACEMENTS } from "./exhaustion/corpus.mjs";

// Issue 10: hostile templates end in a typed error in bounded time and memory, never a dead
// process. Each placement runs the whole corpus in one child process (so a crash fails the test,
// not the runner); the child measures time and peak memory itself and reports them. The time
// bound is on CPU time: the limits count work, and a busy machine stretches the wall time of the
// same work several-fold (2.2 s of wall time for 0.6 s of CPU under load), which says nothing about
// the budget. A hang still fails: the child is killed after `timeoutMs`.
const RUNNER = fileURLToPath(new URL("./exhaustion/run-corpus.mjs", import.meta.url));
const MAX_CPU_MS = 2000;
const MAX_EXTRA_MB = 256;
// Heap headroom above the memory limit: an unbounded case runs out of heap and crashes the child.
const HEAP_MB = 512;

interface CaseResult {
  readonly name: string;
  readonly expected: string;
  readonly kind: string;
  readonly pod?: boolean;
  readonly template?: string;
  readonly line?: number;
  readonly message?: string;
  /** CPU time of the case (user + system), the bound's measure. */
  readonly cpuMs: number;
  /** Wall time of the case, reported for information only. */
  readonly ms: number;
  readonly peakExtraMb: number;
}

interface ChildRun {
  readonly code: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly results: CaseResult[];
  readonly stderr: string;
}

function runCorpus(args: string[], options: { heapMb: number; timeoutMs: number }): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", `--max-old-space-size=${options.heapMb}`, RUNNER, ...args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const results = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as CaseResult);
      resolve({ code, signal, timedOut, results, stderr });
    });
  });
}

describe("resource-exhaustion templates fail with a typed error in bounded time and memory", () => {
  it(`the corpus covers every class of issue 10 (${CORPUS.length} templates × ${PLACEMENTS.length} placements)`, () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(25);
    expect(new Set(CORPUS.map((c) => c.name)).size).toBe(CORPUS.length);
  });

  it.each(PLACEMENTS)(
    "in a %s: every template fails with a typed template error naming template and line, under 2 s of CPU and 256 MB",
    async (placement) => {
      const run = await runCorpus([placement], { heapMb: HEAP_MB, timeoutMs: 100_000 });
      expect(run.stderr).toBe("");
      expect({ code: run.code, signal: run.signal, timedOut: run.timedOut }).toEqual({
        code: 0,
        signal: null,
        timedOut: false,
      });
      expect(run.results.map((r) => r.name)).toEqual(CORPUS.map((c) => c.name));
      for (const result of run.results) {
        const summary = `${result.name}: ${result.message ?? result.kind}`;
        expect(result.kind, summary).toBe(result.expected);
        expect(result.pod, summary).toBe(true);
        expect(result.template, summary).toBeTruthy();
        expect(result.line, summary).toBeGreaterThanOrEqual(1);
        // Errors of the pack layer name the pack key (and file) besides the template line.
        const where = placement === "pack value" ? "context_update_section" : String(result.template);
        expect(result.message, summary).toContain(where);
        expect(result.message, summary).toMatch(/line \d+/);
        expect(result.cpuMs, summary).toBeLessThan(MAX_CPU_MS);
        expect(result.peakExtraMb, summary).toBeLessThan(MAX_EXTRA_MB);
      }
    },
    120_000,
  );
});

describe("positive controls: without the budget the attacks do blow up", () => {
  // With every render limit lifted, each of these runs past 2 s of CPU, or past the heap and
  // crashes the child: the budget, not the shape of the test, is what stops them.
  const attacks = [
    "exponential macro recursion",
    "nested empty loops",
    "a million iterations of 500-byte strings",
    "centering into a million characters a thousand times",
  ];

  it.each(attacks)(
    "%s",
    async (name) => {
      const run = await runCorpus(["system prompt", name, "--unbounded"], { heapMb: 256, timeoutMs: 4000 });
      const result = run.results[0];
      const contained =
        run.code === 0 &&
        result !== undefined &&
        result.kind !== "rendered" &&
        result.cpuMs < MAX_CPU_MS &&
        result.peakExtraMb < MAX_EXTRA_MB;
      expect(
        contained,
        `unbounded run: code ${run.code}, timed out ${run.timedOut}, ${JSON.stringify(result)}`,
      ).toBe(false);
    },
    30_000,
  );

  const chains = CORPUS.filter((c) => c.name.startsWith("a chain of"));

  it.each(chains)("$name overflows the stack of a recursive compiler (stock nunjucks)", ({ source }) => {
    let error: unknown;
    try {
      new nunjucks.Template(source, new nunjucks.Environment(), "chain", true);
    } catch (e) {
      error = e;
    }
    expect(String(error)).toContain("Maximum call stack size exceeded");
  });
});
