import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest, type PermissionMode } from "@podkit/manifest";
import { CorruptEntryError, type Entry, FsStore, NotFoundError, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { describeRule } from "../src/permissions/permissions.js";
import { checkPolicy, type PolicyCheckReport } from "../src/permissions/policy-check.js";
import { openSessionStore } from "../src/pod/store-selection.js";
import { compactionTable, compactResponder } from "./compaction-harness.js";
import { caught } from "./helpers.js";
import { readAllSegments, testTools, text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt } from "./subpods-harness.js";

// Shadow mode (docs/permissions.md): sessions recorded by real pods — the provider double, the real
// builtin tools and bash — replayed against new permission rules without running anything.

const world = usePodWorlds();

/** Every builtin tool, bash, and the whole temp root writable: the recorded pod runs every call. */
const OPEN = `[tools]\nbuiltin = ["read_file", "write_file", "edit_file", "glob", "grep"]\nbash = true\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n`;

/** A tool of a tool package: shadow mode does not load packages, so its effect is unknown there. */
const LOOKUP = testTools({ lookup: () => "found" });

/** One turn calling every kind of tool once or more, each call with a fixed id. */
const EVERY_CALL = [
  toolCall("read_file", { path: "README.md" }, "call-read"),
  toolCall("glob", { pattern: "*.md" }, "call-glob"),
  toolCall("bash", { command: "git push origin main" }, "call-push"),
  toolCall("bash", { command: "git push --force" }, "call-force"),
  toolCall("bash", { command: "echo 'git push'" }, "call-echo"),
  toolCall("write_file", { path: "notes.txt", content: "x" }, "call-write"),
  toolCall("edit_file", { path: "README.md", old_text: "readme", new_text: "README" }, "call-edit"),
  toolCall("lookup", { q: "x" }, "call-lookup"),
  text("done"),
];

/** A world whose pod has run `EVERY_CALL` once, everything approved; returns its session id. */
async function recorded(extra = ""): Promise<{ w: World; sessionId: string }> {
  const w = await world({ manifestExtra: OPEN + extra, toolPackages: [LOOKUP] });
  const pod = await w.pod({ autoApprove: true });
  w.double.enqueue(...EVERY_CALL);
  expect(await pod.run("do everything")).toMatchObject({ status: "finished" });
  return { w, sessionId: sessionOf(pod) };
}

function sessionOf(pod: { sessionId: string | undefined }): string {
  if (pod.sessionId === undefined) throw new Error("the pod has no session yet");
  return pod.sessionId;
}

/** The workspace's manifest with `layer` as the explicit manifest file on top (the "new.toml"). */
async function withLayer(w: World, layer: string): Promise<LoadedManifest> {
  const file = join(w.workspace, "new.toml");
  await writeFile(file, layer);
  return loadManifest({ file, env: { cwd: w.workspace, home: w.home, env: {} } });
}

/** `checkPolicy` over `sessionIds` with `loaded`, through the store the manifest selects. */
async function shadow(
  loaded: LoadedManifest,
  sessionIds: string[],
  options: { mode?: PermissionMode; tree?: boolean } = {},
): Promise<PolicyCheckReport> {
  const store = await openSessionStore(loaded);
  try {
    return await checkPolicy({ loaded, store, sessionIds, ...options });
  } finally {
    await store.close();
  }
}

const callIds = (report: PolicyCheckReport) => report.findings.map((finding) => finding.callId);

const PUSH_DENIED = `[[permissions.rule]]\ntool = "bash"\nargs = { command = "git push*" }\naction = "deny"\nreason = "pushes go through CI"\n`;

describe("shadow mode: recorded calls against new rules", () => {
  it("a new deny rule lists exactly the recorded calls it covers, and nothing else", async () => {
    const { w, sessionId } = await recorded();
    const report = await shadow(await withLayer(w, PUSH_DENIED), [sessionId]);
    expect(callIds(report)).toEqual(["call-push", "call-force"]);
    const rule = describeRule({ tool: "bash", args: { command: "git push*" }, action: "deny" });
    expect(report.findings[0]).toEqual({
      sessionId,
      segmentId: expect.any(String),
      callId: "call-push",
      tool: "bash",
      arguments: JSON.stringify({ command: "git push origin main" }),
      outcome: "deny",
      decidedBy: "rule",
      rule,
      reason: "pushes go through CI",
      effect: "changes",
    });
    expect(report).toMatchObject({ mode: "default", rules: 1, callsChecked: 8 });
    expect(report.sessions).toEqual([{ sessionId, mode: "default", segments: 1, calls: 8 }]);
  });

  it("positive control: the same session against the manifest it ran with lists nothing", async () => {
    const { w, sessionId } = await recorded();
    const report = await shadow(w.loaded, [sessionId]);
    expect(report.callsChecked).toBe(8);
    expect(report.findings).toEqual([]);
  });

  it("checks several sessions at once, each finding naming its own session", async () => {
    const { w, sessionId: first } = await recorded();
    const pod = await w.pod({ autoApprove: true });
    w.double.enqueue(toolCall("bash", { command: "git push upstream" }, "call-second"), text("pushed"));
    await pod.run("push");
    const report = await shadow(await withLayer(w, PUSH_DENIED), [first, sessionOf(pod), first]);
    expect(report.findings.map((f) => [f.sessionId, f.callId])).toEqual([
      [first, "call-push"],
      [first, "call-force"],
      [sessionOf(pod), "call-second"],
    ]);
    expect(report.sessions.map((s) => s.sessionId)).toEqual([first, sessionOf(pod)]);
  });

  it("an ask rule lists the calls it would ask about, with its reason; bypass asks about nothing", async () => {
    const { w, sessionId } = await recorded();
    const loaded = await withLayer(
      w,
      `[[permissions.rule]]\ntool = "read_file"\nargs = { path = "*.md" }\naction = "ask"\nreason = "docs are reviewed"\n`,
    );
    const report = await shadow(loaded, [sessionId]);
    expect(report.findings).toEqual([
      expect.objectContaining({
        callId: "call-read",
        outcome: "ask",
        decidedBy: "rule",
        rule: describeRule({ tool: "read_file", args: { path: "*.md" }, action: "ask" }),
        reason: "docs are reviewed",
        effect: "reads",
      }),
    ]);
    expect((await shadow(loaded, [sessionId], { mode: "bypass" })).findings).toEqual([]);
  });

  it("read_only lists every call that may change something, by the tool's declared effect", async () => {
    const { w, sessionId } = await recorded();
    const viaOption = await shadow(w.loaded, [sessionId], { mode: "read_only" });
    const viaManifest = await shadow(await withLayer(w, `[permissions]\nmode = "read_only"\n`), [sessionId]);
    for (const report of [viaOption, viaManifest]) {
      expect(report.mode).toBe("read_only");
      expect(callIds(report)).toEqual([
        "call-push",
        "call-force",
        "call-echo",
        "call-write",
        "call-edit",
        "call-lookup",
      ]);
      for (const finding of report.findings)
        expect(finding).toMatchObject({ outcome: "deny", decidedBy: "mode", rule: 'mode = "read_only"' });
    }
    const lookup = viaOption.findings.find((finding) => finding.tool === "lookup");
    expect(lookup?.effect).toBe("unknown");
    expect(lookup?.reason).toContain("shadow mode starts no MCP server or tool package");
    expect(viaOption.findings.find((finding) => finding.tool === "write_file")?.effect).toBe("changes");
  });

  it("read_only in shadow lists exactly the calls a live read_only pod denies", async () => {
    const { w, sessionId } = await recorded();
    const shadowed = callIds(await shadow(w.loaded, [sessionId], { mode: "read_only" }));

    const live = await w.pod({ mode: "read_only", autoApprove: true });
    w.double.enqueue(...EVERY_CALL);
    await live.run("do everything again");
    const entries = (await entriesBySession(w.workspace)).get(sessionOf(live)) ?? [];
    const denied = entries.flatMap((entry) =>
      entry.kind === "tool_result" &&
      entry.item.type === "tool_result" &&
      entry.item.is_error === true &&
      entry.item.summary.includes("read_only mode")
        ? [entry.item.call_id]
        : [],
    );
    expect(denied.length).toBeGreaterThan(0);
    expect(shadowed).toEqual(denied);
  });
});

describe("shadow mode over a session's segments", () => {
  it("a compacted session: a call copied into the new segment is listed once, where it was made", async () => {
    const w = await world({
      manifestExtra: `${OPEN}${compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 150 })}\n`,
      double: { respond: compactResponder({ summary: "the summary" }) },
    });
    const pod = await w.pod({ autoApprove: true });
    for (const n of [1, 2]) {
      w.double.enqueue(toolCall("bash", { command: `git push ${n}` }, `call-${n}`), text(`pushed ${n}`));
      await pod.run(`push ${n}`);
    }
    expect(await pod.compact()).toMatchObject({ status: "compacted" });
    w.double.enqueue(toolCall("bash", { command: "git push 3" }, "call-3"), text("pushed 3"));
    await pod.run("push 3");

    // The precondition the test is about: the new segment's history repeats a call of the old one.
    const segments = [...(await readAllSegments(w.workspace)).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    expect(segments).toHaveLength(2);
    const [[oldKey], [, newEntries]] = segments as [[string, Entry<Item>[]], [string, Entry<Item>[]]];
    const start = newEntries[0];
    if (start?.kind !== "segment_start") throw new Error("no segment_start");
    expect(start.compacted_from).toBeDefined();
    expect(start.history).toContainEqual(expect.objectContaining({ type: "tool_call", call_id: "call-2" }));

    const report = await shadow(await withLayer(w, PUSH_DENIED), [sessionOf(pod)]);
    expect(callIds(report)).toEqual(["call-1", "call-2", "call-3"]);
    expect(report.findings[1]?.segmentId).toBe(oldKey.split("/")[1]);
    expect(report.sessions).toEqual([{ sessionId: sessionOf(pod), mode: "default", segments: 2, calls: 3 }]);
  });
});

/** A root that may write, and a `writer` role (the root's manifest, its own prompt). */
const WRITER_TREE = `${OPEN}
[subpods.writer]
description = "writes files"
[subpods.writer.worker]
system_prompt = "WRITER"
`;

describe("shadow mode down the sub-pod tree", () => {
  async function spawnedWriter() {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "writer", task: "write it" }, "call-root"), text("root done")],
      WRITER: [toolCall("write_file", { path: "child.txt", content: "x" }, "call-child"), text("child done")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: WRITER_TREE,
      double: { respond: route.respond },
    });
    const pod = await w.pod({ autoApprove: true });
    expect(await pod.run("go").result).toMatchObject({ status: "finished" });
    const child = [...(await entriesBySession(w.workspace)).keys()].find((id) => id !== sessionOf(pod));
    if (child === undefined) throw new Error("no child session");
    return { w, root: sessionOf(pod), child };
  }

  it("with tree, each sub-pod session is checked under its role: a rule the root passes on denies the child's call", async () => {
    const { w, root, child } = await spawnedWriter();
    const loaded = await withLayer(w, `[[permissions.rule]]\ntool = "write_file"\naction = "deny"\n`);
    expect((await shadow(loaded, [root])).findings).toEqual([]);
    const tree = await shadow(loaded, [root], { tree: true });
    expect(tree.findings.map((f) => [f.sessionId, f.callId])).toEqual([[child, "call-child"]]);
    expect(tree.sessions).toEqual([
      { sessionId: root, mode: "default", segments: 1, calls: 1 },
      { sessionId: child, mode: "default", segments: 1, calls: 1, parentSessionId: root, role: "writer" },
    ]);
  });

  it("read_only reaches the children (they only tighten) and never lists the sub-pod tools, which only read", async () => {
    const { w, root, child } = await spawnedWriter();
    const report = await shadow(w.loaded, [root], { mode: "read_only", tree: true });
    expect(report.findings.map((f) => [f.sessionId, f.callId, f.decidedBy])).toEqual([
      [child, "call-child", "mode"],
    ]);
    expect(report.sessions.map((s) => s.mode)).toEqual(["read_only", "read_only"]);
  });

  it("a child whose role the manifest no longer declares is named as unchecked", async () => {
    const { w, root, child } = await spawnedWriter();
    const loaded = await withLayer(w, "");
    // The role is gone from the manifest the sessions are checked against.
    delete (loaded.manifest as { subpods?: unknown }).subpods;
    const report = await shadow(loaded, [root], { tree: true });
    expect(report.sessions[1]).toMatchObject({
      sessionId: child,
      unchecked: expect.stringContaining('"writer"'),
    });
    expect(report.callsChecked).toBe(1);
  });
});

describe("shadow mode on untrusted input", () => {
  it("an unknown session is the store's NotFoundError naming it", async () => {
    const { w } = await recorded();
    const error = await caught(shadow(w.loaded, ["no-such-session"]));
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect((error as NotFoundError).id).toBe("no-such-session");
  });

  it("a log whose tool call is malformed is CorruptEntryError naming its file and line, never a crash", async () => {
    const { w } = await recorded();
    const root = sessionsRoot(w.workspace);
    const lax = new FsStore<unknown>({ root });
    const ts = 1_760_000_000_000;
    const log = [
      {
        kind: "segment_start",
        ts,
        v: 3,
        session_id: "planted",
        segment_id: "segment-a",
        system_prompt: "s",
        config: { max_tokens: 10 },
        history: [],
      },
      { kind: "invoke", ts, trigger: "user" },
      { kind: "user_input", ts, text: "go" },
      // Hand-edited: the arguments are an object, not the model's JSON text.
      {
        kind: "assistant_item",
        ts,
        item: { type: "tool_call", call_id: "c", name: "bash", arguments: { command: "x" } },
      },
    ];
    await lax.createSegment(
      { sessionId: "planted", segmentId: "segment-a" },
      log as unknown as Entry<unknown>[],
    );
    await lax.close();
    const error = await caught(shadow(w.loaded, ["planted"]));
    // The planted log is no pod's: out of the harness's soundness check.
    await rm(join(root, "planted"), { recursive: true });
    expect(CorruptEntryError.isInstance(error)).toBe(true);
    expect((error as CorruptEntryError).file).toBe(join(root, "planted", "segment-a.jsonl"));
    expect((error as CorruptEntryError).line).toBe(4);
  });

  it("no session at all is a usage error", async () => {
    const { w } = await recorded();
    await expect(shadow(w.loaded, [])).rejects.toThrow(/no session to check/);
  });
});
