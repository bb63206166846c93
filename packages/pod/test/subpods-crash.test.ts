import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

// SIGKILL a real process whose root pod waits on a foreground child mid-request (it imports the
// built dist: run `pnpm build` first), then restore the root here and go on.
const ROOT_PROCESS = fileURLToPath(new URL("./crash/subpod-root.mjs", import.meta.url));
const world = usePodWorlds();

/** Runs the root in its own process and SIGKILLs it once its child streams; the root's and the child's ids. */
function runRootAndKill(w: World): Promise<{ rootId: string; childId: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [ROOT_PROCESS, w.workspace, w.home, w.double.baseUrl], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`the root never reached its child's stream: ${stdout}\n${stderr}`));
    }, 60_000);
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    proc.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (/CHILD_STREAMING \S+/.test(stdout)) proc.kill("SIGKILL");
    });
    proc.on("close", (_code, signal) => {
      clearTimeout(timer);
      const rootId = /SESSION (\S+)/.exec(stdout)?.[1];
      const childId = /CHILD_STREAMING (\S+)/.exec(stdout)?.[1];
      if (signal === "SIGKILL" && rootId !== undefined && childId !== undefined) resolve({ rootId, childId });
      else reject(new Error(`the root ended without being killed (${signal}): ${stdout}\n${stderr}`));
    });
  });
}

describe("SIGKILL of the root while its child is mid-turn", () => {
  it("resume closes the open spawn_pod as interrupted without spawning again; the child's log is intact and send_pod continues it", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "review the change" }, "call-spawn")],
      REVIEWER: [
        {
          parts: [{ type: "text", text: "half a review" }],
          fault: { kind: "stall", afterEvents: 3, ms: 60000 },
        },
      ],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      double: { respond: route.respond },
    });
    const { rootId, childId } = await runRootAndKill(w);
    const before = await entriesBySession(w.workspace);
    expect(before.size).toBe(2);
    const childBefore = before.get(childId) ?? [];
    expect(childBefore[0]).toMatchObject({
      kind: "segment_start",
      parent: { session_id: rootId, call_id: "call-spawn" },
    });
    expect(childBefore.map((e) => e.kind)).toEqual(["segment_start", "invoke", "user_input"]);

    const root = await w.restore(rootId);
    expect(root.interrupted).toBe(true);
    route.scripts.ROOT?.push(
      toolCall("send_pod", { id: childId, message: "please finish the review" }, "call-send"),
      text("recovered"),
    );
    route.scripts.REVIEWER?.push(text("full review: fine"));
    expect((await root.run("go on").result).text).toBe("recovered");

    const after = await entriesBySession(w.workspace);
    // The spawn was never run again: still one child, and the open call was closed as interrupted.
    expect(after.size).toBe(2);
    const rootResults = toolResults(after.get(rootId) ?? []);
    expect(rootResults[0]).toEqual({
      summary: root.catalog.render("interrupt_tool_result_summary_process_ended", {}),
      isError: true,
    });
    expect(JSON.parse(rootResults[1]?.summary ?? "{}")).toMatchObject({
      id: childId,
      answer: "full review: fine",
    });
    // 0 lost entries: the child's log before the kill is a prefix of its log now.
    const childAfter = after.get(childId) ?? [];
    expect(childAfter.slice(0, childBefore.length)).toEqual(childBefore);
    expect(
      childAfter.filter((e) => e.kind === "user_input").map((e) => (e as { text: string }).text),
    ).toEqual(["review the change", "please finish the review"]);
    // The reviewer was asked twice in all: once before the kill, once by send_pod.
    expect(route.requests.REVIEWER).toHaveLength(2);
  }, 120_000);
});
