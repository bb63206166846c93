// Sub-pods against the provider double (docs/subpods.md).
//
// pod.subpod.cache_read_share: a root spawns a reviewer child, then asks it 10 follow-ups with
// send_pod. The share of the child's input tokens `simulatePromptCache` bills as cache reads under
// Anthropic's rules (explicit breakpoints), over the child's own requests. Aim ≥ 0.85.
// pod.subpod.spawn_ms: the time from the root's spawn_pod call (about to execute) to the child's first request (the
// loan check, building the child from its role, creating its session, the run prelude), and the
// same for a bare `Pod.fromManifest` of the same manifest started by hand, in the same rounds,
// alternating which runs first; median of 15 rounds each. Aim: ratio ≤ 1.3.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { simulatePromptCache, startProviderDouble } from "../packages/testkit/dist/index.js";

const FOLLOW_UPS = 10;
const CACHE_ROUNDS = 5;
const SPAWN_ROUNDS = 15;
const REVIEWER_PROMPT = `REVIEWER. You review changes for correctness, style and tests. ${"Check every changed line against the conventions, name the file and line of each problem, and say what to do instead. ".repeat(60)}`;

async function workspace() {
  const root = await mkdtemp(join(tmpdir(), "podkit-bench-subpod-"));
  const ws = join(root, "project");
  await mkdir(join(ws, ".podkit"), { recursive: true });
  const base = `[pod]\nname = "bench"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[tools]\nbuiltin = ["read_file"]\n`;
  await writeFile(
    join(ws, ".podkit", "reviewer.toml"),
    `${base}[worker]\nsystem_prompt = ${JSON.stringify(REVIEWER_PROMPT)}\n[[scope.allow]]\ntarget = ".."\npermission = "read"\n`,
  );
  await writeFile(
    join(ws, ".podkit", "manifest.toml"),
    `${base}[worker]\nsystem_prompt = "ROOT"\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n[subpods.reviewer]\ndescription = "reviews"\nmanifest = "reviewer.toml"\n`,
  );
  const env = { cwd: ws, home: join(root, "home"), env: {} };
  return {
    root,
    loaded: await loadManifest({ env }),
    reviewer: await loadManifest({ env, file: join(ws, ".podkit", "reviewer.toml") }),
  };
}

const toolCall = (name, args) => ({ parts: [{ type: "tool_call", name, arguments: args }] });
const text = (value) => ({ parts: [{ type: "text", text: value }] });
const isReviewer = (request) => (request.body.system?.[0]?.text ?? "").startsWith("REVIEWER");

/** The root's script: spawn, then `followUps` send_pod calls to the child, then an answer. */
function rootScript(followUps) {
  let childId;
  let step = 0;
  return {
    childId: (id) => {
      childId ??= id;
    },
    next: () => {
      step++;
      if (step === 1) return toolCall("spawn_pod", { role: "reviewer", task: "review the change in src/" });
      if (step <= followUps + 1)
        return toolCall("send_pod", { id: childId, message: `follow-up ${step - 1}: and the tests for it?` });
      return text("done");
    },
  };
}

async function cacheShare() {
  const { root, loaded } = await workspace();
  const script = rootScript(FOLLOW_UPS);
  let answer = 0;
  const double = await startProviderDouble({
    wire: "anthropic",
    measureInputTokens: true,
    respond: (request) =>
      isReviewer(request)
        ? text(
            `Review ${++answer}: ${"the change reads well; one test is missing for the empty case. ".repeat(8)}`,
          )
        : script.next(),
  });
  try {
    const pod = await Pod.fromManifest(loaded, {
      model: double.baseUrl,
      env: { ANTHROPIC_API_KEY: "b" },
      onWarning: () => {},
    });
    pod.subscribe((event) => {
      if (event.type === "subpod") script.childId(event.sessionId);
    });
    const result = await pod.run("get the change reviewed, then ask about the tests ten times").result;
    if (result.text !== "done") throw new Error(`unexpected ${JSON.stringify(result)}`);
    await pod.close();
    const child = double.requests.filter(isReviewer);
    if (child.length !== FOLLOW_UPS + 1)
      throw new Error(`expected ${FOLLOW_UPS + 1} child requests, got ${child.length}`);
    return simulatePromptCache(child, "anthropic").cachedShare;
  } finally {
    await double.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Milliseconds from the root's spawn_pod call to the child's first request. */
async function spawnOnce(loaded, baseUrl) {
  const pod = await Pod.fromManifest(loaded, {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "b" },
    onWarning: () => {},
  });
  let started;
  let firstRequest;
  // From the moment the call is about to execute (its stream and log writes are the root's, not the spawn's).
  pod.addHooks({
    preToolCall: (call) => {
      if (call.name === "spawn_pod") started = performance.now();
      return { action: "continue" };
    },
  });
  pod.subscribe((event) => {
    if (event.type === "subpod" && event.event.type === "request_start") firstRequest ??= performance.now();
  });
  await pod.run("review it").result;
  await pod.close();
  return firstRequest - started;
}

/** Milliseconds from `Pod.fromManifest` of the same manifest to its first request. */
async function bareOnce(reviewer, baseUrl) {
  const started = performance.now();
  const pod = await Pod.fromManifest(reviewer, {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "b" },
    onWarning: () => {},
  });
  let firstRequest;
  pod.subscribe((event) => {
    if (event.type === "request_start") firstRequest ??= performance.now();
  });
  await pod.run("review the change in src/").result;
  await pod.close();
  return firstRequest - started;
}

async function spawnTimes() {
  const { root, loaded, reviewer } = await workspace();
  let step = 0;
  const double = await startProviderDouble({
    wire: "anthropic",
    respond: (request) => {
      if (isReviewer(request)) return text("fine");
      step++;
      return step % 2 === 1
        ? toolCall("spawn_pod", { role: "reviewer", task: "review the change in src/" })
        : text("ok");
    },
  });
  const spawn = [];
  const bare = [];
  try {
    // Warm-up: module loading and the first file reads are not what is measured.
    await spawnOnce(loaded, double.baseUrl);
    await bareOnce(reviewer, double.baseUrl);
    for (let round = 0; round < SPAWN_ROUNDS; round++) {
      if (round % 2 === 0) {
        spawn.push(await spawnOnce(loaded, double.baseUrl));
        bare.push(await bareOnce(reviewer, double.baseUrl));
      } else {
        bare.push(await bareOnce(reviewer, double.baseUrl));
        spawn.push(await spawnOnce(loaded, double.baseUrl));
      }
    }
  } finally {
    await double.close();
    await rm(root, { recursive: true, force: true });
  }
  return { spawn, bare };
}

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => sorted(values)[Math.floor(values.length / 2)];
const spread = (values) => `${sorted(values)[0].toFixed(2)}–${sorted(values).at(-1).toFixed(2)}`;

const shares = [];
for (let round = 0; round < CACHE_ROUNDS; round++) shares.push(await cacheShare());
console.log(`# cache read share over ${CACHE_ROUNDS} rounds: ${spread(shares)}`);
console.log(`BENCH pod.subpod.cache_read_share ${median(shares).toFixed(3)} ratio`);

const { spawn, bare } = await spawnTimes();
console.log(
  `# spawn ${spread(spawn)} ms, bare Pod.fromManifest ${spread(bare)} ms over ${SPAWN_ROUNDS} rounds`,
);
console.log(`BENCH pod.subpod.spawn_ms ${median(spawn).toFixed(2)} ms`);
console.log(`BENCH pod.subpod.spawn_ms.bare ${median(bare).toFixed(2)} ms`);
console.log(`BENCH pod.subpod.spawn_ms.ratio ${(median(spawn) / median(bare)).toFixed(2)} ratio`);
