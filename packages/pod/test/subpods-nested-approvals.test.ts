import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import {
  answerApproval,
  FsStore,
  nextAfterAnswer,
  type Store,
  sessionHoldingCall,
  sessionsRoot,
} from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt } from "./subpods-harness.js";

const world = usePodWorlds();
const database = usePostgresDatabases();

const role = (name: string) => `
[subpods.${name}]
description = "${name}"
[subpods.${name}.tools]
bash = true
[subpods.${name}.worker]
system_prompt = "${name.toUpperCase()}"
[[subpods.${name}.scope.allow]]
target = ".."
permission = "write"
`;

/** root → worker → reviewer, every level with bash; nobody can answer approvals now. */
const MANIFEST = `
[tools]
bash = true
[[scope.allow]]
target = ".."
permission = "write"
${role("worker")}
${role("reviewer")}
`;

const count = async (w: World) =>
  (await readFile(join(w.workspace, "count"), "utf8").catch(() => "")).split("\n").filter(Boolean).length;

type Backend = "filesystem" | "postgres";

async function storeFor(backend: Backend, w: World): Promise<Store<Item>> {
  if (backend === "filesystem") return new FsStore<Item>({ root: sessionsRoot(w.workspace) });
  return new PostgresStore<Item>({ url: await database() });
}

describe.each<Backend>(["filesystem", "postgres"])(
  "sub-pods: a grandchild's approval surfaces at the root (%s)",
  (backend) => {
    it("the root's run ends awaiting_approval naming the path; answered at the root, the tree continues once", async () => {
      const route = routeBySystemPrompt({
        ROOT: [
          toolCall("spawn_pod", { role: "worker", task: "get it counted" }, "call-root"),
          text("root done"),
        ],
        WORKER: [
          toolCall("spawn_pod", { role: "reviewer", task: "count" }, "call-worker"),
          text("worker done"),
        ],
        REVIEWER: [toolCall("bash", { command: "echo ran >> count" }, "call-bash"), text("reviewer counted")],
      });
      const w = await world({
        systemPrompt: "ROOT",
        manifestExtra: MANIFEST,
        double: { respond: route.respond },
      });
      const store = await storeFor(backend, w);
      try {
        const root = await w.pod({ store });
        const stopped = await root.run("count it").result;
        const rootId = root.sessionId as string;
        await root.close();
        expect(stopped.status).toBe("awaiting_approval");
        expect(stopped.approvals).toHaveLength(1);
        const [awaited] = stopped.approvals ?? [];
        expect(awaited).toMatchObject({
          callId: "call-bash",
          tool: "bash",
          podPath: ["root", "worker#1", "reviewer#1"],
        });
        const grandchild = awaited?.sessionId as string;
        expect(grandchild).not.toBe(rootId);
        expect(await count(w)).toBe(0);
        // Every level stopped on it: the root and the worker hold delegated requests, nothing ran.
        expect(await nextAfterAnswer(store, grandchild)).toMatchObject({ kind: "wait", sessionId: rootId });

        // The person answers at the root: the call is found in the tree.
        expect(await sessionHoldingCall(store, rootId, "call-bash")).toBe(grandchild);
        await answerApproval(store, grandchild, "call-bash", { decision: "allow", by: "carol" });
        const next = await nextAfterAnswer(store, grandchild);
        expect(next).toMatchObject({ kind: "resume", sessionId: rootId });

        // The root continues (in a new pod, as another process would) — and the tree with it, once.
        const resumed = await w.restore(rootId, { store });
        const finished = await resumed.resume().result;
        expect(finished).toMatchObject({ status: "finished", text: "root done" });
        expect(await count(w)).toBe(1);
        expect(await nextAfterAnswer(store, grandchild)).toMatchObject({ kind: "none" });
        expect(route.scripts.REVIEWER).toEqual([]);
        expect(route.scripts.WORKER).toEqual([]);
        // A second resume of the finished tree would be a new turn: the continuation says none.
        expect(await nextAfterAnswer(store, rootId)).toMatchObject({ kind: "none" });
        await resumed.close();
        if (backend === "filesystem") {
          const logs = await entriesBySession(w.workspace);
          const results = [...logs.values()].flat().filter((e) => e.kind === "tool_result");
          expect(results.map((e) => (e.item as { call_id: string }).call_id).sort()).toEqual([
            "call-bash",
            "call-root",
            "call-worker",
          ]);
        }
      } finally {
        await store.close();
      }
    });
  },
);
