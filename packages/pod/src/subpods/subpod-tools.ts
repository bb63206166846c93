import type { Tool, ToolOutput } from "@podkit/llm-worker";
import { z } from "zod";
import type { SubpodRole } from "./roles.js";

/** What the four tools call: the parent's `SubpodHost`. */
export interface SubpodToolTarget {
  spawn(
    role: string,
    task: string,
    background: boolean,
    ctx: { callId: string; signal: AbortSignal },
  ): Promise<ToolOutput>;
  send(id: string, message: string, ctx: { callId: string; signal: AbortSignal }): Promise<ToolOutput>;
  stop(id: string): Promise<ToolOutput>;
  list(): Promise<ToolOutput>;
}

/**
 * The tools the parent's model gets: `spawn_pod`, `send_pod`, `stop_pod`, `list_pods`. The role
 * list (with each description) is in `spawn_pod`'s description, so the model chooses by it.
 * Every refusal is an error result naming what is allowed, never a thrown exception. A pod at
 * `depth` none of whose roles may run one level deeper (`max_depth`) gets no tools at all: a
 * `spawn_pod` that can only be refused is not offered.
 */
export function subpodTools(
  roles: ReadonlyMap<string, SubpodRole>,
  target: SubpodToolTarget,
  depth: number,
): Tool[] {
  if (![...roles.values()].some((role) => depth + 1 <= role.config.max_depth)) return [];
  const roleList = [...roles.values()].map((role) => `- ${role.name}: ${role.config.description}`).join("\n");
  return [
    {
      name: "spawn_pod",
      description: `Starts a child pod for a role and gives it a task. In the foreground (default) it waits and returns the child's final answer, its id and usage; with background = true it returns the id at once and the child's completion arrives later as a notification. Roles:\n${roleList}`,
      inputSchema: z.object({
        role: z.string().describe("one of the roles listed above"),
        task: z.string().min(1).describe("what the child should do: its first user input"),
        background: z.boolean().optional().describe("return at once; the result arrives as a notification"),
      }),
      execute: (args: { role: string; task: string; background?: boolean }, ctx) =>
        target.spawn(args.role, args.task, args.background === true, ctx),
    },
    {
      name: "send_pod",
      description:
        "Sends a follow-up message to one of your child pods (by the id spawn_pod returned) and waits for its answer. The child keeps its whole conversation.",
      inputSchema: z.object({ id: z.string().min(1), message: z.string().min(1) }),
      execute: (args: { id: string; message: string }, ctx) => target.send(args.id, args.message, ctx),
    },
    {
      name: "stop_pod",
      description:
        "Stops one of your child pods (by id); its log is kept and send_pod can continue it later.",
      inputSchema: z.object({ id: z.string().min(1) }),
      execute: (args: { id: string }) => target.stop(args.id),
    },
    {
      name: "list_pods",
      description: "Lists your child pods: id, role, status, turns and token usage.",
      inputSchema: z.object({}),
      execute: () => target.list(),
    },
  ];
}

/** An error result the model can act on. */
export function refusal(message: string): ToolOutput {
  return { summary: message, is_error: true };
}
