import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigurationError } from "@podkit/llm-worker";
import { sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { Pod } from "../src/pod/pod.js";
import { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "../src/system-prompt/errors.js";
import {
  compactionTable,
  compactRequests,
  compactResponder,
  eventsOf,
  lookupTools,
  mainRequests,
  ofType,
} from "./compaction-harness.js";
import { caught, writeFiles } from "./helpers.js";
import {
  readAllSegments,
  sessionEntries,
  systemOf,
  testTools,
  text,
  toolCall,
  usePodWorlds,
} from "./pod-harness.js";

const world = usePodWorlds();

describe("Pod: render once, deferred session (prompt-acceptance 1–13)", () => {
  it("[1] a template syntax error fails Pod.fromManifest naming line and column; no session directory", async () => {
    const w = await world({ systemPrompt: "line one\n{{ unclosed" });
    const error = await caught(Pod.fromManifest(w.loaded, w.options()));
    expect(InvalidSystemPromptTemplateError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ line: 2 });
    expect(error.message).toMatch(/line 2, column \d+/);
    expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
  });

  it("[2] after construction the worker has no system prompt and the store holds no segment", async () => {
    const w = await world();
    const pod = await w.pod();
    expect(pod.systemPrompt).toBeUndefined();
    expect(pod.sessionId).toBeUndefined();
    expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
  });

  it("[3] after the first run the system prompt is the rendered template, then the Working boundaries section", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    const boundaries = pod.catalog.render("working_boundaries_section", {
      scope_summary: w.loaded.scope.summary,
    });
    expect(boundaries.length).toBeGreaterThan(0);
    expect(pod.systemPrompt).toBe(`date=2026-04-15 cwd=${w.workspace}\n\n${boundaries}`);
  });

  it("[4] segment_start holds exactly the string the provider received", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    const [start] = await sessionEntries(w.workspace);
    expect(start?.kind).toBe("segment_start");
    expect(start).toMatchObject({ system_prompt: systemOf(w.double.requests[0] as never) });
    expect(typeof systemOf(w.double.requests[0] as never)).toBe("string");
  });

  it("[5] {{ ghost }} fails every run with SystemPromptRenderError naming ghost; no segment, no request", async () => {
    const w = await world({ systemPrompt: "hello {{ ghost }}" });
    const pod = await w.pod();
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await caught(pod.run("hello"));
      expect(SystemPromptRenderError.isInstance(error)).toBe(true);
      expect(error.message).toContain("ghost");
    }
    expect(pod.systemPrompt).toBeUndefined();
    expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
    expect(w.double.requests).toHaveLength(0);
  });

  it("[6] the system prompt is byte-identical on every request across three runs", async () => {
    const w = await world({ toolPackages: [testTools({ ping: () => "pong" })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("ping"), text("one"), text("two"), toolCall("ping"), text("three"));
    for (const input of ["a", "b", "c"]) await pod.run(input);
    expect(w.double.requests).toHaveLength(5);
    const prompts = new Set(w.double.requests.map((request) => systemOf(request as never)));
    expect([...prompts]).toEqual([pod.systemPrompt]);
  });

  it("[7] AGENTS.md written after construction is read at the first run; absent renders NONE", async () => {
    const template =
      "{% if files.agents_md is defined %}AGENTS:{{ files.agents_md }}{% else %}NONE{% endif %}";
    const w = await world({ systemPrompt: template });
    const pod = await w.pod();
    await writeFile(join(w.workspace, "AGENTS.md"), "be brief");
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    expect(pod.systemPrompt?.startsWith("AGENTS:be brief\n\n")).toBe(true);

    const bare = await world({ systemPrompt: template });
    const other = await bare.pod();
    bare.double.enqueue(text("hi"));
    await other.run("hello");
    expect(other.systemPrompt?.startsWith("NONE\n\n")).toBe(true);
  });

  it("[8] agents_md_section is appended only when the template does not read files.agents_md", async () => {
    const files = { "project/AGENTS.md": "house rules" };
    const reads = await world({ systemPrompt: "rules: {{ files.agents_md }}", files });
    const ignores = await world({ systemPrompt: "no rules here", files });
    const prompts: string[] = [];
    for (const w of [reads, ignores]) {
      const pod = await w.pod();
      w.double.enqueue(text("hi"));
      await pod.run("hello");
      prompts.push(pod.systemPrompt ?? "");
    }
    const section = (await reads.pod()).catalog.render("agents_md_section", { agents_md: "house rules" });
    expect(prompts[0]?.split("house rules")).toHaveLength(2);
    expect(prompts[0]).not.toContain(section);
    expect(prompts[1]?.endsWith(section)).toBe(true);
  });

  it("[9] AGENTS.md changed after the first run, then compaction, then another run: the prompt keeps the original, byte-identical", async () => {
    const w = await world({
      systemPrompt: "{{ files.agents_md }}",
      files: { "project/AGENTS.md": "v1" },
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 30 }),
      double: {
        measureInputTokens: true,
        respond: compactResponder({ summary: "earlier: two questions answered" }),
      },
    });
    const pod = await w.pod();
    w.double.enqueue(text("a"), text("b"), text("c"), text("d"));
    await pod.run("one");
    const first = pod.systemPrompt as string;
    await writeFile(join(w.workspace, "AGENTS.md"), "v2");
    await pod.run("two");
    const outcome = await pod.compact();
    expect(outcome.status).toBe("compacted");
    await pod.run("three");
    const restored = await w.restore(pod.sessionId as string);
    await restored.run("four");
    expect(first.startsWith("v1")).toBe(true);
    const main = mainRequests(w.double.requests);
    expect(main).toHaveLength(4);
    for (const request of main)
      expect(Buffer.from(systemOf(request as never)).equals(Buffer.from(first))).toBe(true);
    expect(compactRequests(w.double.requests).length).toBeGreaterThan(0);
    expect(restored.systemPrompt).toBe(first);
  });

  it("[10] compaction preserves the system prompt byte-for-byte: worker, new segment_start, next captured request", async () => {
    const w = await world({
      systemPrompt: "prompt ✓ 日本語 {{ date }} {{ cwd }}",
      manifestExtra: compactionTable({ threshold: 700, request_threshold: 700, retained_tokens: 100 }),
      toolPackages: [lookupTools(400)],
      double: { measureInputTokens: true, respond: compactResponder({ summary: "looked up a" }) },
    });
    const pod = await w.pod();
    let compactions = 0;
    for (let turn = 1; turn <= 10 && compactions === 0; turn++) {
      w.double.enqueue(toolCall("lookup", { q: `item ${turn}` }), text(`answer ${turn}`));
      compactions += ofType(await eventsOf(pod.run(`look up item ${turn}`)), "compaction_done").length;
    }
    expect(compactions).toBe(1);
    const before = Buffer.from(systemOf(w.double.requests[0] as never));
    const segments = [...(await readAllSegments(w.workspace)).values()];
    expect(segments).toHaveLength(2);
    const newStart = segments.map(
      (entries) => entries[0] as { system_prompt: string; compacted_from?: unknown },
    );
    const compacted = newStart.find((start) => start.compacted_from !== undefined);
    expect(Buffer.from(pod.systemPrompt as string).equals(before)).toBe(true);
    expect(Buffer.from(compacted?.system_prompt as string).equals(before)).toBe(true);
    const next = mainRequests(w.double.requests).at(-1);
    expect(JSON.stringify(next?.body.messages)).toContain("looked up a");
    expect(Buffer.from(systemOf(next as never)).equals(before)).toBe(true);
  });

  it("[11] restore uses the stored prompt verbatim after the template changed on disk (it is never parsed)", async () => {
    const w = await world({ systemPrompt: "original {{ date }}" });
    const pod = await w.pod();
    w.double.enqueue(text("a"), text("b"));
    await pod.run("one");
    const manifest = join(w.workspace, ".podkit", "manifest.toml");
    await writeFiles(w.workspace, {
      ".podkit/manifest.toml": `[pod]\nname = "test"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[worker]\nsystem_prompt = "{{ broken"\n`,
    });
    expect(existsSync(manifest)).toBe(true);
    await w.reload();
    const restored = await w.restore(pod.sessionId as string);
    expect(restored.systemPrompt).toBe(pod.systemPrompt);
    await restored.run("two");
    expect(systemOf(w.double.requests[1] as never)).toBe(pod.systemPrompt);
    expect(restored.systemPrompt?.startsWith("original 2026-04-15")).toBe(true);
  });

  it("[12] tools appear in `tools` sorted; factories not yet flushed still appear", async () => {
    const w = await world({
      systemPrompt: '{{ tools | join(",") }}',
      manifestExtra: '[tools]\nbuiltin = ["read_file"]',
      toolPackages: [testTools({ zeta: () => "z", alpha: () => "a" })],
    });
    const pod = await w.pod();
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    expect(pod.systemPrompt?.split("\n")[0]).toBe("alpha,read_file,zeta");
    const sent = (w.double.requests[0] as { body: { tools: { name: string }[] } }).body.tools.map(
      (t) => t.name,
    );
    expect(sent).toEqual(["alpha", "read_file", "zeta"]);
  });

  it("[13] end to end through loadManifest: user and workspace packs take effect, $user and $workspace includes resolve", async () => {
    const w = await world({
      systemPrompt: '{% include "$user/head" %}|{% include "$workspace/tail" %}',
      files: {
        "home/.config/podkit/prompts.toml": '[prompt]\nnotify_wrapper = "USER-NOTE {{ message }}"\n',
        "home/.config/podkit/prompts/head.md": "user head\n",
        "project/.podkit/prompts.toml":
          '[prompt]\nworking_boundaries_section = "WS-BOUNDS[{{ scope_summary }}]"\n',
        "project/.podkit/prompts/tail.md": "workspace tail\n",
      },
    });
    await w.reload();
    const pod = await w.pod();
    pod.notify("build done");
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    expect(pod.systemPrompt).toBe(`user head|workspace tail\n\nWS-BOUNDS[${w.loaded.scope.summary}]`);
    const messages = JSON.stringify((w.double.requests[0] as { body: unknown }).body);
    expect(messages).toContain("USER-NOTE build done");
  });

  it("a pod without an API key constructs, renders its prompt, and fails its first request naming the variable", async () => {
    const w = await world();
    const pod = await w.pod({ env: {} });
    expect(await pod.renderSystemPrompt()).toMatch(/^date=2026-04-15 /);
    const error = await caught(pod.run("hello"));
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error.message).toContain("ANTHROPIC_API_KEY");
    expect(w.double.requests).toHaveLength(0);
    const entries = await sessionEntries(w.workspace);
    expect(entries.at(-1)).toMatchObject({ kind: "run_errored", interrupted: true });
    await rm(join(w.workspace, "AGENTS.md"), { force: true });
  });
});
